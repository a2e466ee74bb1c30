"""A user's own table as the frames a run works on: its features, and its label as the rare class.

Any table with a label column trains (``data.path``, ``data.label``, ``data.positive``,
``data.schema``): its schema is the edited ``data.schema`` or inferred (and then refused in one
line when a column needs a person's decision, :mod:`wgangp.data.schema_review`). The frames keep
the table's feature columns under their names, each cell in its kind's canonical type (a level
as the schema spells it, a whole number as an integer, a date as a datetime, a gap as missing),
and replace the label by the internal column ``Class``: 1 for the class to synthesize, 0 for the
rest. Everything downstream (split, batches, selection, evaluation) works on that one form; the
label's own values come back only where rows leave the product (:mod:`wgangp.serving`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from wgangp.config import DataConfig
from wgangp.data import schema as creditcard
from wgangp.data.column_codes import column_codes, from_seconds, level_of
from wgangp.data.loader import resolve_path
from wgangp.data.schema_inference import infer_schema
from wgangp.data.schema_match import match_table
from wgangp.data.schema_review import require_unambiguous
from wgangp.data.table_reader import read_user_table
from wgangp.data.table_schema import ColumnSchema, TableSchema, Value
from wgangp.errors import DataError

log = logging.getLogger("wgangp.data")

#: The internal label column and its classes: the rare class (to synthesize) is 1.
LABEL, RARE, REST = creditcard.LABEL, creditcard.FRAUD, 0


@dataclass(frozen=True)
class UserTable:
    """A loaded user table: the frame in the internal form (module doc) and its schema."""

    frame: pd.DataFrame
    schema: TableSchema
    origin: str


def is_user_table(data: DataConfig, launch_dir: Path) -> bool:
    """Whether ``data`` names a table other than Kaggle's credit-card file.

    A schema, a label other than ``Class``, or a file that holds at most half of Kaggle's 31
    columns makes it a user table. A file close to Kaggle's (a column missing, renamed or added)
    is a damaged or edited credit-card file: it stays on that path, whose validation names what
    differs; so does an absent file (the download fallback).
    """
    if data.name != "creditcard" or data.path is None:
        return False
    if data.schema is not None or data.label != creditcard.LABEL:
        return True
    path = resolve_path(data.path, launch_dir)
    if not path.is_file():
        return False
    header = _header(path)
    if header is None:  # unreadable: the credit-card reader's one line says why
        return False
    shared = set(header) & set(creditcard.COLUMNS)
    return len(shared) <= len(creditcard.COLUMNS) // 2


def load_user_table(data: DataConfig, launch_dir: Path) -> UserTable:
    """Read, schema, check and convert the table ``data.path`` names (one line per problem)."""
    path = resolve_path(str(data.path), launch_dir)
    if not path.is_file():
        raise DataError(f"data file not found at {path}; check data.path")
    frame = read_user_table(path)
    source = str(path)
    if data.schema is not None:
        schema = TableSchema.load(resolve_path(data.schema, launch_dir))
        if data.label != creditcard.LABEL and data.label != schema.label:
            raise DataError(
                f"data.label={data.label} but {data.schema} names label {schema.label}; drop "
                "data.label or edit label: in the schema"
            )
        if data.positive is not None:
            schema = replace(schema, positive=data.positive)
        frame, dropped = match_table(frame, schema, source=source)
        if dropped:
            log.info("%s: column(s) not in data.schema, dropped: %s", source, ", ".join(dropped))
    else:
        schema = infer_schema(frame, label=data.label, positive=data.positive, source=source)
        require_unambiguous(frame, schema, source=source)
    check_feature_names(schema, source)
    return UserTable(internal_frame(frame, schema, source), schema, source)


def check_feature_names(schema: TableSchema, source: str) -> None:
    """The internal label's name must be free: a feature called ``Class`` is refused."""
    if schema.label != LABEL and LABEL in schema.names:
        raise DataError(
            f"{source}: a feature column is named {LABEL}, the name wgangp keeps for the class "
            f"of each row; rename that column (the label is {schema.label})"
        )


def internal_frame(frame: pd.DataFrame, schema: TableSchema, source: str) -> pd.DataFrame:
    """The features in canonical types and ``Class`` (1: the class to synthesize)."""
    columns = {
        column.name: canonical(frame[column.name], column, source) for column in schema.features
    }
    columns[LABEL] = class_codes(frame[schema.label], schema)
    return pd.DataFrame(columns)


def canonical(values: pd.Series, column: ColumnSchema, source: str) -> pd.Series:
    """A column's cells as its kind's type: levels as the schema spells them, integers as
    integers (nullable ``Int64`` when it has gaps), datetimes as datetimes, gaps missing."""
    codes, gaps = column_codes(values, column, source)
    if column.kind == "categorical":
        levels = np.empty(len(column.levels or ()), dtype=object)
        levels[:] = list(column.levels or ())
        out = pd.Series(levels[codes.astype(np.int64)], dtype=object)
        out[gaps] = None
        return out.infer_objects()
    if column.kind == "datetime":
        return from_seconds(codes).mask(gaps)
    if column.kind == "integer":
        if gaps.any():
            return pd.Series(pd.arrays.IntegerArray(codes.astype(np.int64), gaps.copy()))
        return pd.Series(codes.astype(np.int64))
    return pd.Series(np.where(gaps, np.nan, codes))


def class_codes(labels: pd.Series, schema: TableSchema) -> np.ndarray:
    """1 where the label is ``schema.positive``, else 0."""
    positive = (schema.positive,)
    # One lookup per distinct value, not per row: a label has a handful of values.
    lookup = {v: RARE if level_of(positive, v) is not None else REST for v in pd.unique(labels)}
    return labels.map(lookup).to_numpy(dtype=np.int64)


def internal_schema(schema: TableSchema) -> TableSchema:
    """The schema of the internal frames: the features, then ``Class`` with levels 0 and 1."""
    label = ColumnSchema(name=LABEL, kind="categorical", levels=(REST, RARE))
    return TableSchema(columns=(*schema.features, label), label=LABEL, positive=RARE)


def label_value(schema: TableSchema, cls: int) -> Value:
    """The label's own value for internal class ``cls`` (the other value of a two-valued label
    for 0); a label of more values has no single value for class 0: DataError."""
    if cls == RARE:
        return schema.positive
    others = [v for v in schema.column(schema.label).levels or () if v != schema.positive]
    if len(others) != 1:
        raise DataError(
            f"label {schema.label} has {len(others)} values besides {schema.positive} "
            f"({', '.join(map(str, others[:5]))}); wgangp learns only {schema.positive} against "
            "the rest, so it samples only label=" + str(schema.positive)
        )
    return others[0]


def class_of(schema: TableSchema, value: object) -> int:
    """The internal class of a label value a user names (``label=yes``; ``1`` for ``1``)."""
    levels = schema.column(schema.label).levels or ()
    level = level_of(tuple(levels), value)
    if level is None:
        shown = ", ".join(map(str, levels))
        raise DataError(f"label={value} is not a value of {schema.label}; use one of: {shown}")
    if level == schema.positive:
        return RARE
    label_value(schema, REST)  # refuses a label of more than two values
    return REST


def _header(path: Path) -> list[str] | None:
    """The column names of a table file, read without its rows; None when it cannot be read
    (empty, truncated, another format: the full read's one line comes later)."""
    try:
        if path.suffix.lower() == ".parquet":
            import pyarrow.parquet as pq

            return list(pq.read_schema(path).names)
        return [str(c) for c in pd.read_csv(path, nrows=0, compression="infer").columns]
    except Exception:
        return None
