"""The credit-card fraud table's schema: 31 columns, as Kaggle's ``creditcard.csv`` has them."""

from __future__ import annotations

TIME = "Time"
AMOUNT = "Amount"
LABEL = "Class"
PCA_FEATURES: tuple[str, ...] = tuple(f"V{i}" for i in range(1, 29))
#: The feature columns in file order (everything except the label).
FEATURES: tuple[str, ...] = (TIME, *PCA_FEATURES, AMOUNT)
#: All columns in file order.
COLUMNS: tuple[str, ...] = (*FEATURES, LABEL)
#: Label values: 0 = normal, 1 = fraud.
CLASSES: tuple[int, ...] = (0, 1)
FRAUD = 1
#: Time in the Kaggle file spans two days, in seconds from the first transaction.
TIME_MAX = 172_792.0
#: Largest magnitude a cell may have. No real value of this schema comes near it (Kaggle's largest
#: is a Time of ~1.7e5; Unix times in milliseconds are ~1.7e12), while fill values and broken
#: exports do (1e20, 1e30, netCDF's 9.97e36, 1e308). One such cell would set its column's scale
#: alone, or overflow float32 (the networks' type) and the transform's squares to inf.
MAX_ABS_VALUE = 1e15
#: No parameter fitted on values within MAX_ABS_VALUE goes past this: a std or mean stays within
#: it, quantile knots extended past the outermost groups (:mod:`wgangp.data.knots`) reach about
#: twice it. A stored parameter beyond (1e300) is an edit (checked when a transform is loaded).
MAX_PARAMETER = 10 * MAX_ABS_VALUE
