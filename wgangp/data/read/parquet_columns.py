"""Parquet columns as a table's cells, whichever writer made them (pandas, Spark, pyarrow, DuckDB).

- A category (a dictionary-encoded column, as pandas writes a ``category`` and pyarrow a
  dictionary) reads as its values: text for text categories (levels no row holds are gone), the
  numbers, dates or booleans themselves otherwise, as the same column written plainly reads.
- A date (``date32``, ``date64``) reads as a datetime, as a timestamp does.
- A time of day (``time32``, ``time64``) reads as its text ``HH:MM:SS``, as a CSV holds it: the
  schema's inference then sees it as a CSV's times (a categorical of the hours, minutes...).
- A list, struct or map column (nested values) is no feature: it is left out, and the reader
  logs one line naming such columns.

Each column's type has a kind (:func:`type_kind`): files of one table must agree on each
column's kind (:mod:`wgangp.data.read.table_files`).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
import pyarrow as pa

#: The log line of the nested columns left out (after the table's path).
NESTED_LINE = (
    "column(s) {names} hold lists, structs or maps (nested values), dropped: a feature needs one "
    "value per cell"
)


def parquet_schema(path: Path | str) -> pa.Schema | None:
    """A Parquet file's schema, read without its rows; None when it cannot be read."""
    import pyarrow.parquet as pq

    try:
        return pq.read_schema(path)
    except Exception:  # not Parquet, truncated: the full read's one line says so
        return None


def nested_columns(schema: pa.Schema | None) -> list[str]:
    """The columns holding lists, structs or maps."""
    if schema is None:
        return []
    return [field.name for field in schema if pa.types.is_nested(values_type(field.type))]


def type_kind(kind: pa.DataType) -> str:
    """What a column of this type holds, as far as files of one table must agree: ``number``,
    ``text``, ``boolean``, ``date`` (dates and timestamps), ``time``, ``binary``, ``nested``,
    ``null`` (a column of gaps only: any kind), else the type's own name."""
    kind = values_type(kind)
    types = pa.types
    checks = (
        ("number", (types.is_integer, types.is_floating, types.is_decimal)),
        ("text", (types.is_string, types.is_large_string, types.is_string_view)),
        ("boolean", (types.is_boolean,)),
        ("date", (types.is_date, types.is_timestamp)),
        ("time", (types.is_time,)),
        ("binary", (types.is_binary, types.is_large_binary, types.is_fixed_size_binary)),
        ("nested", (types.is_nested,)),
        ("null", (types.is_null,)),
    )
    return next((name for name, tests in checks if any(t(kind) for t in tests)), str(kind))


def type_name(kind: pa.DataType) -> str:
    """A type as the lines name it: a dictionary's values' type (``string``, ``int64``); text
    is ``string`` however it is stored (``large_string`` as pandas writes it)."""
    kind = values_type(kind)
    return "string" if type_kind(kind) == "text" else str(kind)


def read_parquet(path: Path) -> tuple[pd.DataFrame, list[str]]:
    """The file's rows without its nested columns, each column as its cells (module doc), and
    the nested columns left out."""
    import pyarrow.parquet as pq

    schema = pq.read_schema(path)
    nested = nested_columns(schema)
    kept = [name for name in schema.names if name not in nested] if nested else None
    frame = pd.read_parquet(path, columns=kept)
    types = {field.name: values_type(field.type) for field in schema}
    for name in frame.columns:
        frame[name] = plain_cells(frame[name], types.get(name))
    return frame, nested


def plain_cells(values: pd.Series, kind: pa.DataType | None) -> pd.Series:
    """One column's cells: categories as their values, dates as datetimes, times as text."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        values = _decoded(values)
    if kind is None:
        return values
    if pa.types.is_date(kind) and not pd.api.types.is_datetime64_any_dtype(values):
        return pd.to_datetime(values)
    if pa.types.is_time(kind):
        texts = values.map(_time_text, na_action="ignore")
        return texts.astype("str") if texts.notna().any() else texts
    return values


def _decoded(values: pd.Series) -> pd.Series:
    """A category column as its values, in its categories' own type (integers with gaps as
    floats, as a plain column of them reads)."""
    categories = values.cat.categories
    try:
        return values.astype(categories.dtype)
    except (TypeError, ValueError):  # integers with gaps
        return values.astype("float64" if pd.api.types.is_numeric_dtype(categories) else object)


def _time_text(value: object) -> object:
    return value.strftime("%H:%M:%S") if isinstance(value, dt.time) else value


def values_type(kind: pa.DataType) -> pa.DataType:
    """The type of a column's values: a dictionary's (a category's) values' type."""
    return kind.value_type if pa.types.is_dictionary(kind) else kind
