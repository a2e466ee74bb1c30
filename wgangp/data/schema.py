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
