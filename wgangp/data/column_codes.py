"""One column's cells as numbers a transform can scale: values, level indices or seconds, and gaps.

Cells are read as :mod:`wgangp.data.column_values` reads them for the schema (blank text is a gap,
numbers may arrive as text), and whatever cannot be coded is refused in one line naming the column:
a gap where the schema allows none, a level the schema does not list (unless it names an ``other``
level for them), inf or a value beyond 1e15, a fraction in an integer column, a cell that is no
date in the column's one format. Dates and numbers written as text are read with the column's
``format`` (:mod:`wgangp.data.text_formats`), never guessed row by row. NaN never leaves this
module: a gap is a flag, and its value is the caller's to fill.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from wgangp.data import column_values as cv
from wgangp.data.table_schema import ColumnSchema, Value, find_value
from wgangp.errors import DataError

#: The epoch datetimes are counted from, in seconds, in the networks' space.
EPOCH = pd.Timestamp("1970-01-01")


def column_codes(
    values: pd.Series, column: ColumnSchema, source: str
) -> tuple[np.ndarray, np.ndarray]:
    """(codes as float64, gaps as bool): numbers, level indices or seconds since 1970; 0 in gaps."""
    rows = values.reset_index(drop=True)
    cells = cv.present(rows)
    gaps = ~rows.index.isin(cells.index)
    name = column.name
    if gaps.any() and not column.nullable:
        raise DataError(
            f"{source}: column {name} has {int(gaps.sum())} missing value(s) (first at data row "
            f"{cv.first_row(rows, gaps)}) but its schema says nullable: false; fix or drop those "
            "rows, or set nullable: true"
        )
    codes = np.zeros(len(rows), dtype=np.float64)
    if cells.empty:
        return codes, gaps
    if column.kind == "categorical":
        codes[~gaps] = _level_indices(cells, column, source)
    elif column.kind == "datetime":
        codes[~gaps] = _seconds(cells, column, source)
    else:
        codes[~gaps] = _numbers(cells, column, source)
    return codes, gaps


def level_of(levels: tuple[Value, ...], value: object) -> Value | None:
    """The level ``value`` names (a label or category as read from a file), None if none."""
    native = cv.native(value)
    if isinstance(native, float) and native.is_integer():
        native = int(native)  # read as a float because of a gap elsewhere in the file
    return find_value(levels, native)


def to_seconds(dates: pd.Series) -> np.ndarray:
    """Timestamps -> float seconds since 1970 (UTC for zone-aware ones), whatever the unit."""
    if getattr(dates.dt, "tz", None) is not None:
        dates = dates.dt.tz_convert("UTC").dt.tz_localize(None)
    return ((dates - EPOCH) / pd.Timedelta(seconds=1)).to_numpy(np.float64)


def bound_seconds(bound: object) -> float:
    """A datetime bound (ISO text) in seconds since 1970."""
    stamp = pd.Timestamp(str(bound))
    if stamp.tz is not None:
        stamp = stamp.tz_convert("UTC").tz_localize(None)
    return float((stamp - EPOCH) / pd.Timedelta(seconds=1))


def from_seconds(seconds: np.ndarray) -> pd.Series:
    """Float seconds since 1970 -> naive timestamps (nanosecond unit)."""
    return pd.Series(pd.to_datetime(np.round(seconds * 1e9).astype(np.int64), unit="ns"))


def _level_indices(cells: pd.Series, column: ColumnSchema, source: str) -> np.ndarray:
    """Each cell's level index; a value not among the levels is the ``other`` level's (the
    values too few rows hold), or refused when the column has none."""
    levels = column.levels or ()
    other = levels.index(column.other) if column.other is not None else None
    lookup: dict[object, int] = {}
    outside = []
    for value in pd.unique(cells):
        level = level_of(levels, value)
        if level is not None:
            lookup[value] = levels.index(level)
        elif other is not None:
            lookup[value] = other
        else:
            outside.append(value)
    if outside:
        count = int(cells.isin(outside).sum())
        raise DataError(
            f"{source}: column {column.name} has {count} value(s) outside its levels (e.g. "
            f"{cv.shown(outside)}); add them to its levels in the schema, or fix those rows"
        )
    return cells.map(lookup).to_numpy(np.float64)


def _numbers(cells: pd.Series, column: ColumnSchema, source: str) -> np.ndarray:
    numbers = cv.checked_numbers(cells, column.name, column.kind, source, fmt=column.format)
    array = numbers.to_numpy(np.float64)
    fraction = array % 1 != 0
    if column.kind == "integer" and fraction.any():
        raise DataError(
            f"{source}: column {column.name} is integer but has {int(fraction.sum())} non-whole "
            f"value(s) (first at data row {cv.first_row(numbers, fraction)}: "
            f"{array[fraction][0]}); set kind: continuous, or fix those rows"
        )
    return array


def _seconds(cells: pd.Series, column: ColumnSchema, source: str) -> np.ndarray:
    dates = cv.checked_dates(cells, column.name, column.format, source)
    return to_seconds(pd.to_datetime(dates))
