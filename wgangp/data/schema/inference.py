"""Infer a table's schema from its rows: each column's kind, bounds, levels and gaps, and the label.

The rules, in order: booleans and text are categorical, unless every text cell is a number (numeric;
``1,000`` and ``$1,000.00`` too, with the column's number ``format``) or a date (datetime, read with
the one ``format`` that reads every cell: never guessed row by row,
:mod:`wgangp.data.schema.text_formats`); numbers are integer when every present value is whole (a
column of 3.0, 7.0 and gaps, as CSV readers return integers with gaps), continuous otherwise. The
label is categorical whatever its type, and the class to synthesize defaults to its rarer value.

The schema ships with the model, so it names no row: number and datetime bounds are the means of
the 5 most extreme values (:func:`~wgangp.data.knots.private_range`), and a text level that
fewer than 5 rows hold is not listed: such values are read as one ``other`` level. A zone-aware
datetime column (``datetime64[ns, Europe/Paris]``, ISO text with offsets) records its ``zone``,
and its bounds are written in it. Every step is one pass over the columns: a header of 40,000
names infers in seconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from wgangp.data.entities import entity_codes, identical_row_groups
from wgangp.data.knots import DEFAULT_MIN_ROWS, private_range
from wgangp.data.schema.cells import (
    LevelLookup,
    as_numbers,
    cell_value,
    check_finite,
    first_gap_row,
    first_row,
    label_value,
    no_such_column,
    present,
    repeated_names,
    shown,
)
from wgangp.data.schema.column_codes import to_seconds
from wgangp.data.schema.identifiers import Identifier, find_identifiers, proposed_entity
from wgangp.data.schema.table_schema import ColumnSchema, TableSchema, Value, find_value
from wgangp.data.schema.text_formats import number_format, parse_numbers, read_dates
from wgangp.errors import DataError

#: Share of a text column's cells that must be numbers for a few stray texts to be a typo.
_MOSTLY_NUMBERS = 0.95
#: A datetime column's resolutions, coarsest first, in seconds: its bounds are whole units.
_RESOLUTIONS = (86400.0, 3600.0, 60.0, 1.0)
#: Names for the level that stands for rare values, tried in order (one a column lacks).
_OTHER_NAMES = ("other", "rare levels")


def infer_schema(
    frame: pd.DataFrame,
    label: str,
    positive: Value | None = None,
    source: str = "data",
    owners: np.ndarray | None = None,
) -> TableSchema:
    """The schema of ``frame``; ``positive`` None picks the label's least frequent value.
    ``owners``: each row's entity code (:mod:`wgangp.data.entities`), which the levels kept and
    the bounds count; None: each row its own, rows identical in every column counting once."""
    if frame.shape[1] == 0 or len(frame) == 0:
        raise DataError(f"{source}: the table has no rows or no columns; give a table with both")
    names = [str(name) for name in frame.columns]
    repeated = repeated_names(names)
    if repeated:
        raise DataError(
            f"{source}: column(s) {shown(repeated)} appear more than once in the header; "
            "rename or drop the copies"
        )
    frame = frame.set_axis(names, axis=1)
    if label not in set(names):
        raise DataError(f"{source}: {no_such_label(label, names)}")
    if owners is None:
        owners = identical_row_groups(frame)
    columns = tuple(
        _label_column(frame[name], source)
        if name == label
        else infer_column(frame[name], name, source, owners)
        for name in names
    )
    counts = _label_counts(frame[label])
    chosen = _positive(counts, label, positive, source)
    return TableSchema(
        columns=columns, label=label, positive=chosen, label_counts=counts, rows=len(frame)
    )


@dataclass(frozen=True)
class Inference:
    """An inferred schema, the identifier columns left out of it, and the column to propose as
    ``data.entity`` when none is set (:mod:`wgangp.data.schema.identifiers`)."""

    schema: TableSchema
    identifiers: tuple[Identifier, ...] = ()
    proposed: Identifier | None = None

    def lines(self, source: str) -> list[str]:
        """One line per identifier dropped, and the entity proposal."""
        lines = [
            f"{source}: column {found.column} {found.reason}: an identifier, dropped "
            "(identifiers never train or ship, whatever a schema says; docs/privacy.md)"
            for found in self.identifiers
        ]
        if self.proposed is not None:
            found = self.proposed
            lines.append(
                f"{source}: column {found.column} looks like it names a customer, card or "
                f"account ({found.values} values, about {found.rows_per_value:.0f} rows each); "
                f"set data.entity={found.column} so that privacy counts them, not rows"
            )
        return lines


def infer_table(
    frame: pd.DataFrame,
    label: str,
    positive: Value | None = None,
    source: str = "data",
    entity: str | None = None,
) -> Inference:
    """The schema of ``frame`` without its identifier columns (found by their content) and
    without the ``entity`` column (``data.entity``), whose distinct values the levels and bounds
    count; each row counts as its own entity without one (identical rows once)."""
    names = [str(name) for name in frame.columns]
    owners = None
    if entity is not None:
        if entity not in set(names):
            raise DataError(f"{source}: data.entity={entity}: {no_such_column(entity, names)}")
        if entity == label:
            raise DataError(
                f"{source}: data.entity={entity} is the label; name the customer, card or "
                "account column"
            )
        owners = entity_codes(frame.iloc[:, names.index(entity)], entity, source)
    found = find_identifiers(frame, skip={label, entity} - {None}, owners=owners)
    dropped = {identifier.column for identifier in found} | {entity} - {None}
    kept = frame.loc[:, [name not in dropped for name in names]]
    schema = infer_schema(kept, label, positive, source, owners)
    proposed = proposed_entity(found) if entity is None else None
    return Inference(schema, tuple(found), proposed)


def infer_column(
    values: pd.Series, name: str, source: str = "data", owners: np.ndarray | None = None
) -> ColumnSchema:
    """One feature column's schema (see the module's rules); ``owners``: each row's entity."""
    cells = present(values)
    missing = len(values) - len(cells)
    if cells.empty:
        raise DataError(
            f"{source}: column {name} is empty (all {len(values)} cells missing); drop it"
        )
    held = None if owners is None else np.asarray(owners)[cells.index.to_numpy()]
    common = {"name": name, "missing": missing, "nullable": missing > 0}
    if pd.api.types.is_datetime64_any_dtype(cells):
        zone = zone_of(cells)
        bounds = _date_bounds(cells, held, zone)
        return ColumnSchema(kind="datetime", bounds=bounds, zone=zone, **common)
    numbers = as_numbers(cells)
    fmt = None if numbers.notna().all() else number_format(cells)
    if fmt is not None:
        numbers = parse_numbers(cells, fmt)
    if numbers.notna().all():
        check_finite(numbers, name, source)
        return _numeric_column(numbers, common, fmt, held)
    _refuse_stray_text(cells, numbers, name, source)
    reading = read_dates(cells)
    if reading is not None:
        # Ambiguous or mixed: no format and no bounds; the review line asks for the format.
        dates, fmt = reading.dates, reading.format
        zone = zone_of(dates) if dates is not None else None
        bounds = _date_bounds(dates, held, zone) if dates is not None else None
        return ColumnSchema(kind="datetime", bounds=bounds, format=fmt, zone=zone, **common)
    levels, other = _feature_levels(cells, held)
    return ColumnSchema(kind="categorical", levels=levels, other=other, **common)


def _numeric_column(
    numbers: pd.Series, common: dict, fmt: str | None = None, owners: np.ndarray | None = None
) -> ColumnSchema:
    """Bounds that name no entity (:func:`~wgangp.data.knots.private_range`): the schema ships
    with the model, and a column's observed min and max are usually one customer's values."""
    array = numbers.to_numpy(np.float64)
    whole = bool(np.all(array == np.floor(array)))
    low, high = private_range(array, DEFAULT_MIN_ROWS, whole=whole, owners=owners)
    if whole:
        return ColumnSchema(kind="integer", bounds=(int(low), int(high)), format=fmt, **common)
    return ColumnSchema(kind="continuous", bounds=(low, high), format=fmt, **common)


def private_date_range(
    dates: pd.Series, owners: np.ndarray | None = None, zone: str | None = None
) -> tuple[float, float]:
    """A datetime column's (low, high) in seconds since 1970 UTC that names no entity: the means
    of its 5 earliest and 5 latest entities' values, in whole units of its resolution (day, hour,
    minute, second: the coarsest every value has), never a unit fewer than 5 entities hold."""
    seconds = to_seconds(pd.to_datetime(dates), zone)
    step = next((r for r in _RESOLUTIONS if np.all(np.mod(seconds, r) == 0)), None)
    if step is None:
        return private_range(seconds, DEFAULT_MIN_ROWS, whole=False, owners=owners)
    low, high = private_range(seconds / step, DEFAULT_MIN_ROWS, whole=True, owners=owners)
    return low * step, high * step


def date_text(seconds: float, zone: str | None = None) -> str:
    """Seconds since 1970 UTC as ISO text: in ``zone`` with its offset, or naive (UTC)."""
    stamp = pd.Timestamp(int(round(seconds * 1e9)), unit="ns")
    if zone is not None:
        stamp = stamp.tz_localize("UTC").tz_convert(zone)
    return stamp.isoformat()


def zone_of(dates: pd.Series) -> str | None:
    """The time zone of zone-aware dates, as a schema names it (``Europe/Paris``,
    ``UTC+01:00``); None for naive ones."""
    tz = getattr(pd.to_datetime(dates).dt, "tz", None)
    return None if tz is None else str(tz)


def _feature_levels(
    cells: pd.Series, owners: np.ndarray | None = None
) -> tuple[tuple[Value, ...], Value | None]:
    """A categorical feature's levels and its ``other`` level: a text value fewer than
    ``DEFAULT_MIN_ROWS`` entities (``owners``; rows without) hold is not listed (the schema ships
    with the model and would name that customer's category); such values are read as one
    ``other`` level."""
    levels = _levels(cells, label=False)
    if not all(isinstance(level, str) for level in levels):
        return levels, None  # booleans: their two values name no one
    if owners is None:
        counts = cells.value_counts()
    else:
        pairs = pd.DataFrame({"level": cells.to_numpy(), "owner": owners})
        counts = pairs.drop_duplicates().value_counts("level")
    kept = tuple(level for level in levels if counts.get(level, 0) >= DEFAULT_MIN_ROWS)
    if len(kept) == len(levels):
        return levels, None
    names = (*_OTHER_NAMES, *(f"other_{i}" for i in range(2, len(levels) + 3)))
    lookup = LevelLookup(kept)
    other = next(name for name in names if lookup.find(name) is None)
    return (*kept, other), other


def _refuse_stray_text(cells: pd.Series, numbers: pd.Series, name: str, source: str) -> None:
    """A number column with a few text cells ('12,50 EUR', 'n/a ') is a typo, not categories."""
    text = numbers.isna()
    if text.mean() <= 1 - _MOSTLY_NUMBERS:
        first = cells[text].iloc[0]
        raise DataError(
            f"{source}: column {name} has {int(text.sum())} non-numeric value(s) among numbers "
            f"(first at data row {first_row(cells, text)}: {str(first)[:40]!r}); fix or empty "
            "those cells, or declare the column categorical in an edited data.schema"
        )


def _label_column(values: pd.Series, source: str) -> ColumnSchema:
    cells = present(values)
    if len(cells) < len(values):
        raise DataError(
            f"{source}: label column {values.name} has {len(values) - len(cells)} missing "
            f"value(s) (first at data row {first_gap_row(values, cells)}); drop those rows, every "
            "row needs its class"
        )
    return ColumnSchema(name=str(values.name), kind="categorical", levels=_levels(cells))


def _label_counts(values: pd.Series) -> tuple[tuple[Value, int], ...]:
    counts: dict[Value, int] = {}
    for value, count in present(values).value_counts(sort=False, dropna=True).items():
        level = label_value(value)
        counts[level] = counts.get(level, 0) + int(count)
    order = _levels(pd.Series(list(counts), dtype=object))
    return tuple((level, counts[level]) for level in order)


def _positive(
    counts: tuple[tuple[Value, int], ...], label: str, positive: Value | None, source: str
) -> Value:
    values = tuple(value for value, _ in counts)
    listed = ", ".join(f"{value}: {count}" for value, count in counts[:5])
    if len(counts) > 5:
        listed += f", ... (+{len(counts) - 5})"
    if len(counts) == 1:
        raise DataError(
            f"{source}: label {label} has one value ({values[0]}) in every row; the table needs "
            "rows of at least two classes"
        )
    if positive is not None:
        found = find_value(values, positive)
        if found is None:
            raise DataError(
                f"{source}: data.positive={positive} is not a value of label {label} "
                f"({listed}); name one of them"
            )
        return found
    if len(counts) > 2:
        raise DataError(
            f"{source}: label {label} has {len(counts)} values ({listed}); name the class to "
            "synthesize with data.positive=<value>"
        )
    (first, n_first), (second, n_second) = counts
    if n_first == n_second:
        raise DataError(
            f"{source}: label {label} has both values equally often ({listed}); name the class "
            "to synthesize with data.positive=<value>"
        )
    return first if n_first < n_second else second


def choose_positive(
    counts: dict[Value, int], label: str, positive: Value | None, source: str
) -> Value:
    """The class to synthesize among a label's value counts (counted elsewhere, e.g. by the big
    tables' reader): ``positive``, or the least frequent value; the same one-line errors."""
    order = _levels(pd.Series(list(counts), dtype=object))
    return _positive(tuple((v, counts[v]) for v in order), label, positive, source)


def no_such_label(label: str, names: list[str]) -> str:
    """What to say of a label column the table lacks (a close name suggested), one sentence
    ended before the fix whether or not a close name was found."""
    missing = no_such_column(label, names)
    return f"label {missing}{'' if missing.endswith('?') else '.'} Set data.label=<column>"


def _levels(cells: pd.Series, label: bool = True) -> tuple[Value, ...]:
    """Distinct values as plain Python values (a label's by :func:`label_value`, a feature's
    text kept as text: :func:`cell_value`): numbers in numeric order, the rest by text."""
    value = label_value if label else cell_value
    unique = list(dict.fromkeys(value(v) for v in pd.unique(cells)))
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in unique):
        return tuple(sorted(unique))
    return tuple(sorted(unique, key=lambda v: (type(v).__name__ != "str", str(v))))


def _date_bounds(
    dates: pd.Series, owners: np.ndarray | None = None, zone: str | None = None
) -> tuple[str, str]:
    low, high = private_date_range(dates, owners)
    return date_text(low, zone), date_text(high, zone)
