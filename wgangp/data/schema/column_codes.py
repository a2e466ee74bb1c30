"""One column's cells as numbers a transform can scale: values, level indices or seconds, and gaps.

Cells are read as :mod:`wgangp.data.schema.cells` reads them for the schema (blank text is a gap,
numbers may arrive as text), and whatever cannot be coded is refused in one line naming the column:
a gap where the schema allows none, a level the schema does not list (unless it names an ``other``
level for them), inf or a value beyond 1e15, a fraction in an integer column, a cell that is no
date in the column's one format. Dates and numbers written as text are read with the column's
``format`` (:mod:`wgangp.data.schema.text_formats`), never guessed row by row. NaN never leaves this
module: a gap is a flag, and its value is the caller's to fill.

A quasi-identifier's column (``coarsen``: a date of birth kept as its year, coordinates to a
step) is read that coarse here, so nothing downstream (the split, the transform, the evaluation)
ever holds its exact values (:func:`coarsened`).

Dates have one rule both ways: :func:`to_seconds` counts every instant in seconds since 1970 UTC
(what the networks, the schema's bounds and the evaluation's distances all see) and
:func:`from_seconds` gives them back in the column's ``zone``, or naive as the table had them.
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pandas as pd

from wgangp.data.schema import cells as cv
from wgangp.data.schema.table_schema import ColumnSchema, Value
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
    """The level ``value`` names (a label or category as read from a file), None if none: the
    one rule of :class:`~wgangp.data.schema.cells.LevelLookup` (many lookups: build one)."""
    return cv.find_value(levels, value)


def to_seconds(dates: pd.Series, zone: str | None = None) -> np.ndarray:
    """Timestamps -> float seconds since 1970 UTC, whatever the unit: the one rule for dates.
    Zone-aware ones count their instant; naive ones count as UTC, unless the column has a
    ``zone`` (an edited schema's), in which they are wall-clock times (the hour repeated when
    clocks go back is read as standard time; a skipped one moves forward)."""
    tz = getattr(dates.dt, "tz", None)
    if tz is None and zone is not None:
        dates = dates.dt.tz_localize(
            zone, ambiguous=np.zeros(len(dates), dtype=bool), nonexistent="shift_forward"
        )
        tz = zone
    if tz is not None:
        dates = dates.dt.tz_convert("UTC").dt.tz_localize(None)
    return ((dates - EPOCH) / pd.Timedelta(seconds=1)).to_numpy(np.float64)


def bound_seconds(bound: object) -> float:
    """A datetime bound (ISO text; naive text is UTC) in seconds since 1970 UTC."""
    return float(to_seconds(pd.Series([pd.Timestamp(str(bound))]))[0])


def from_seconds(seconds: np.ndarray, zone: str | None = None) -> pd.Series:
    """Float seconds since 1970 UTC -> timestamps (nanosecond unit): naive, or in ``zone``."""
    dates = pd.Series(pd.to_datetime(np.round(seconds * 1e9).astype(np.int64), unit="ns"))
    if zone is None:
        return dates
    return dates.dt.tz_localize("UTC").dt.tz_convert(zone)


def coarsened(values: np.ndarray, column: ColumnSchema, *, nearest: bool = False) -> np.ndarray:
    """``values`` (seconds for a datetime) at the column's ``coarsen``: a date as the first
    instant of its year (``nearest``: of the nearer year, for generated values), in the
    column's zone; a number on the step's grid. Unchanged without ``coarsen``."""
    if column.coarsen is None:
        return values
    array = np.asarray(values, dtype=np.float64)
    flat = array.reshape(-1)
    if column.kind == "datetime":
        dates = from_seconds(flat, column.zone)
        start = _year_start(dates.dt.year, column.zone)
        out = to_seconds(start, column.zone)
        if nearest:
            after = to_seconds(_year_start(dates.dt.year + 1, column.zone), column.zone)
            out = np.where(after - flat < flat - out, after, out)
        return out.reshape(array.shape)
    step = float(column.coarsen)
    exponent = Decimal(repr(step)).normalize().as_tuple().exponent
    decimals = max(0, -int(exponent)) if isinstance(exponent, int) else 0
    return np.round(np.round(array / step) * step, decimals)


def coarsened_inside(low: float, high: float, column: ColumnSchema) -> tuple[float, float]:
    """The grid values just inside ``[low, high]`` (a year's first instant, a multiple of the
    step): bounds that values clipped into them stay coarse in; ``(low, high)`` unchanged
    without ``coarsen``, or when no grid value lies between."""
    if column.coarsen is None:
        return low, high
    if column.kind == "datetime":
        floor = coarsened(np.array([low, high]), column)
        year = from_seconds(np.array([low]), column.zone).dt.year + 1
        ceil = floor[0] if floor[0] >= low else to_seconds(_year_start(year, column.zone))[0]
        ends = np.array([ceil, floor[1]])
    else:
        step = float(column.coarsen)
        grid = np.array([np.ceil(low / step - 1e-9), np.floor(high / step + 1e-9)]) * step
        ends = coarsened(grid, column)
    return (float(ends[0]), float(ends[1])) if ends[0] <= ends[1] else (low, high)


def _year_start(years: pd.Series, zone: str | None) -> pd.Series:
    starts = pd.to_datetime(pd.DataFrame({"year": years, "month": 1, "day": 1}))
    return starts if zone is None else starts.dt.tz_localize(zone)


def _level_indices(cells: pd.Series, column: ColumnSchema, source: str) -> np.ndarray:
    """Each cell's level index; a value not among the levels is the ``other`` level's (the
    values too few rows hold), or refused when the column has none."""
    levels = column.lookup
    other = levels.index(column.other) if column.other is not None else None
    lookup: dict[object, int] = {}
    outside = []
    for value in pd.unique(cells):
        index = levels.index(value)
        if index is not None:
            lookup[value] = index
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
    return coarsened(array, column)


def _seconds(cells: pd.Series, column: ColumnSchema, source: str) -> np.ndarray:
    dates = cv.checked_dates(cells, column.name, column.format, source)
    return coarsened(to_seconds(pd.to_datetime(dates), column.zone), column)
