"""Kaggle's credit-card names for tests, read from the schema the package ships (its one
statement): the columns in file order, the features, the label and the class to synthesize."""

from __future__ import annotations

from wgangp.data.builtin.creditcard import column_names, creditcard_schema, feature_names
from wgangp.data.numbers import MAX_ABS_VALUE
from wgangp.data.schema.table_schema import CLASSES, RARE

SCHEMA = creditcard_schema()
COLUMNS = column_names()
FEATURES = feature_names()
LABEL = SCHEMA.label
TIME, AMOUNT = "Time", "Amount"
PCA_FEATURES = tuple(name for name in FEATURES if name not in (TIME, AMOUNT))
FRAUD = RARE

__all__ = [
    "AMOUNT", "CLASSES", "COLUMNS", "FEATURES", "FRAUD", "LABEL", "MAX_ABS_VALUE",
    "PCA_FEATURES", "SCHEMA", "TIME",
]  # fmt: skip
