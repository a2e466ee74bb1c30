"""Kaggle's credit-card fraud file as one table among others: the schema shipped with the package.

``schemas/creditcard.yaml`` is the one statement of the file's layout (31 columns, Amount modelled
as log1p and rounded to cents, Time to seconds, V1..V28 unbounded); the file, Kaggle's download
and the simulated stand-in are read, validated, transformed and shipped like any table, through
it. It applies where the config names it (the ``creditcard`` preset's default path, or
``data.schema=creditcard``), never by recognising a header. What stays Kaggle's own is where the
rows come from (:mod:`wgangp.data.read.source`) and the wording of the errors that name its columns
(:data:`HEADER`).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from wgangp.data.schema.table_schema import TableSchema

SCHEMA_FILE = Path(__file__).with_name("schemas") / "creditcard.yaml"
#: How an error names the file's header.
HEADER = "Time,V1..V28,Amount,Class as in Kaggle's creditcard.csv"


@cache
def creditcard_schema() -> TableSchema:
    """The shipped schema of Kaggle's ``creditcard.csv`` (read once; schemas are immutable)."""
    return TableSchema.load(SCHEMA_FILE)


def column_names() -> tuple[str, ...]:
    """Kaggle's 31 column names in file order."""
    return creditcard_schema().names


def feature_names() -> tuple[str, ...]:
    """Kaggle's 30 feature columns in file order (every column but ``Class``)."""
    return tuple(column.name for column in creditcard_schema().features)
