"""Infer a table's schema from its rows: each column's kind, bounds, levels and gaps, and the label.

The rules, in order: booleans and text are categorical, unless every text cell is a number (numeric;
``1,000`` and ``$1,000.00`` too, with the column's number ``format``) or a date (datetime, read with
the one ``format`` that reads every cell: never guessed row by row,
:mod:`wgangp.data.schema.text_formats`); numbers are integer when every present value is whole (a
column of 3.0, 7.0 and gaps, as CSV readers return integers with gaps), continuous otherwise. The
label is categorical whatever its type, and the class to synthesize defaults to its rarer value.

The schema ships with the model, so it names no row: number and datetime bounds are the means of
the 5 most extreme values (:func:`~wgangp.data.knots.private_range`), and a text level that
fewer than 5 entities hold, or that contains an identifier (an e-mail in a memo, a customer's
name in "transfer to ..."), is not listed: such values are read as one ``other`` level. Dates
of birth and coordinates are coarsened (:mod:`~wgangp.data.schema.quasi_identifiers`). A zone-aware
datetime column (``datetime64[ns, Europe/Paris]``, ISO text with offsets) records its ``zone``,
and its bounds are written in it. Every step is one pass over the columns: a header of 40,000
names infers in seconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from wgangp.data.entities import entity_codes, identical_row_groups
from wgangp.data.knots import DEFAULT_MIN_ROWS
from wgangp.data.schema.bounds import date_bounds, private_number_range, zone_of
from wgangp.data.schema.cells import (
    LevelLookup,
    as_numbers,
    check_distinct_names,
    check_finite,
    choose_positive,
    distinct_values,
    first_gap_row,
    first_row,
    label_value,
    no_such_column,
    no_such_label,
    present,
)
from wgangp.data.schema.column_codes import coarsened
from wgangp.data.schema.identifier_patterns import KnownValues
from wgangp.data.schema.identifiers import (
    Identifier,
    InferredEntity,
    identifier_cells,
    identify,
    known_values,
    proposed_entity,
)
from wgangp.data.schema.quasi_identifiers import coarsening, described
from wgangp.data.schema.table_schema import ColumnSchema, TableSchema, Value
from wgangp.data.schema.text_formats import number_format, parse_numbers, read_dates
from wgangp.errors import DataError

#: Share of a text column's cells that must be numbers for a few stray texts to be a typo.
_MOSTLY_NUMBERS = 0.95
#: Names for the level that stands for rare values, tried in order (one a column lacks).
_OTHER_NAMES = ("other", "rare levels")


def infer_schema(
    frame: pd.DataFrame,
    label: str,
    positive: Value | None = None,
    source: str = "data",
    owners: np.ndarray | None = None,
    known: KnownValues | None = None,
) -> TableSchema:
    """The schema of ``frame``; ``positive`` None picks the label's least frequent value.
    ``owners``: each row's entity code (:mod:`wgangp.data.entities`), which the levels kept and
    the bounds count; None: each row its own, rows identical in every column counting once.
    ``known``: identifier values a level must not contain (:func:`known_values`)."""
    return _inferred(frame, label, positive, source, owners, known)[0]


def _inferred(
    frame: pd.DataFrame,
    label: str,
    positive: Value | None,
    source: str,
    owners: np.ndarray | None,
    known: KnownValues | None,
) -> tuple[TableSchema, dict[str, int]]:
    """The schema, and per categorical column the levels withheld as identifiers."""
    if frame.shape[1] == 0 or len(frame) == 0:
        raise DataError(f"{source}: the table has no rows or no columns; give a table with both")
    names = [str(name) for name in frame.columns]
    check_distinct_names(names, source)
    frame = frame.set_axis(names, axis=1)
    if label not in set(names):
        raise DataError(f"{source}: {no_such_label(label, names)}")
    if owners is None:
        owners = identical_row_groups(frame)
    withheld: dict[str, int] = {}
    columns = [
        _label_column(frame[name], source)
        if name == label
        else _column(frame[name], name, source, owners, known, withheld)
        for name in names
    ]
    counts = _label_counts(frame[label])
    chosen = choose_positive(dict(counts), label, positive, source)
    for i, column in enumerate(columns):
        coarsen = None if column.name == label else coarsening(column, columns)
        if coarsen is not None:
            columns[i] = _column(frame[column.name], column.name, source, owners, coarsen=coarsen)
    schema = TableSchema(
        columns=tuple(columns), label=label, positive=chosen, label_counts=counts, rows=len(frame)
    )
    return schema, withheld


@dataclass(frozen=True)
class Inference:
    """An inferred schema, the identifier columns left out of it, the column to propose as
    ``data.entity`` when none is set (:mod:`wgangp.data.schema.identifiers`), the customers
    inferred without one, and per column the levels withheld as identifiers."""

    schema: TableSchema
    identifiers: tuple[Identifier, ...] = ()
    proposed: Identifier | None = None
    customers: InferredEntity | None = None
    withheld: tuple[tuple[str, int], ...] = ()

    def lines(self, source: str) -> list[str]:
        """One line per identifier dropped, per column with withheld levels or coarsened, the
        customers counted, and the entity proposal."""
        lines = [
            f"{source}: column {found.column} {found.reason}: an identifier, dropped "
            "(identifiers never train or ship, whatever a schema says; docs/privacy.md)"
            for found in self.identifiers
        ]
        lines += [
            f"{source}: column {name}: {count} level(s) contain an identifier (an e-mail, a "
            "phone, a name, ...): read as its other level, never listed (docs/privacy.md)"
            for name, count in self.withheld
        ]
        lines += [
            f"{source}: column {column.name} {described(column)}, so no one's exact value "
            "trains or ships (docs/privacy.md)"
            for column in self.schema.features
            if column.coarsen is not None
        ]
        if self.customers is not None:
            named = ", ".join(self.customers.columns)
            lines.append(
                f"{source}: without data.entity, the {self.customers.count} customers that "
                f"column(s) {named} name (rows sharing a value are one customer's) are what the "
                "schema, the split, the transform and the evaluation's privacy count, not rows; "
                "set data.entity to name them yourself"
            )
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
    count; without one, the customers the identifiers name
    (:func:`~wgangp.data.schema.identifiers.identify`), else each row (identical rows once)."""
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
    identification = identify(frame, skip={label, entity} - {None}, owners=owners)
    found = list(identification.found)
    proposed = proposed_entity(found) if entity is None else None
    known = known_values(frame, found)
    customers = identification.entity
    if customers is not None:
        owners = customers.codes
    dropped = {identifier.column for identifier in found} | {entity} - {None}
    kept = frame.loc[:, [name not in dropped for name in names]]
    schema, withheld = _inferred(kept, label, positive, source, owners, known)
    return Inference(schema, tuple(found), proposed, customers, tuple(withheld.items()))


def infer_column(
    values: pd.Series, name: str, source: str = "data", owners: np.ndarray | None = None
) -> ColumnSchema:
    """One feature column's schema (see the module's rules); ``owners``: each row's entity."""
    return _column(values, name, source, owners)


def _column(
    values: pd.Series,
    name: str,
    source: str,
    owners: np.ndarray | None,
    known: KnownValues | None = None,
    withheld: dict[str, int] | None = None,
    coarsen: str | float | None = None,
) -> ColumnSchema:
    """:func:`infer_column`, its levels checked against ``known`` (the count withheld noted in
    ``withheld``), its values read at ``coarsen`` (a quasi-identifier's)."""
    cells = present(values)
    missing = len(values) - len(cells)
    if cells.empty:
        raise DataError(
            f"{source}: column {name} is empty (all {len(values)} cells missing); drop it"
        )
    held = None if owners is None else np.asarray(owners)[cells.index.to_numpy()]
    common = {"name": name, "missing": missing, "nullable": missing > 0, "coarsen": coarsen}
    if pd.api.types.is_datetime64_any_dtype(cells):
        zone = zone_of(cells)
        bounds = date_bounds(cells, held, zone, coarsen)
        return ColumnSchema(kind="datetime", bounds=bounds, zone=zone, **common)
    numbers = as_numbers(cells)
    fmt = None if numbers.notna().all() else number_format(cells)
    if fmt is not None:
        numbers = parse_numbers(cells, fmt)
    if numbers.notna().all():
        check_finite(numbers, name, source)
        if coarsen is not None:
            probe = ColumnSchema(name=name, kind="continuous", coarsen=coarsen)
            numbers = pd.Series(coarsened(numbers.to_numpy(np.float64), probe), numbers.index)
        return _numeric_column(numbers, common, fmt, held)
    _refuse_stray_text(cells, numbers, name, source)
    reading = read_dates(cells)
    if reading is not None:
        # Ambiguous or mixed: no format and no bounds; the review line asks for the format.
        dates, fmt = reading.dates, reading.format
        zone = zone_of(dates) if dates is not None else None
        bounds = date_bounds(dates, held, zone, coarsen) if dates is not None else None
        return ColumnSchema(kind="datetime", bounds=bounds, format=fmt, zone=zone, **common)
    levels, other, hidden = _feature_levels(cells, held, known)
    if hidden and withheld is not None:
        withheld[name] = hidden
    common.pop("coarsen")
    return ColumnSchema(kind="categorical", levels=levels, other=other, **common)


def _numeric_column(
    numbers: pd.Series, common: dict, fmt: str | None = None, owners: np.ndarray | None = None
) -> ColumnSchema:
    """Bounds that name no entity (:func:`~wgangp.data.knots.private_range`): the schema ships
    with the model, and a column's observed min and max are usually one customer's values."""
    array = numbers.to_numpy(np.float64)
    whole = bool(np.all(array == np.floor(array)))
    low, high = private_number_range(array, owners, whole=whole, coarsen=common.get("coarsen"))
    if whole:
        return ColumnSchema(kind="integer", bounds=(int(low), int(high)), format=fmt, **common)
    return ColumnSchema(kind="continuous", bounds=(low, high), format=fmt, **common)


def _feature_levels(
    cells: pd.Series, owners: np.ndarray | None = None, known: KnownValues | None = None
) -> tuple[tuple[Value, ...], Value | None, int]:
    """A categorical feature's levels, its ``other`` level, and how many levels were withheld as
    identifiers: a text value fewer than ``DEFAULT_MIN_ROWS`` entities (``owners``; rows
    without) hold, or that is or contains an identifier (:func:`identifier_cells`, ``known``),
    is not listed (the schema ships with the model and would name that customer); such values
    are read as one ``other`` level."""
    levels = distinct_values(cells, label=False)
    if not all(isinstance(level, str) for level in levels):
        return levels, None, 0  # booleans: their two values name no one
    if owners is None:
        counts = cells.value_counts()
    else:
        pairs = pd.DataFrame({"level": cells.to_numpy(), "owner": owners})
        counts = pairs.drop_duplicates().value_counts("level")
    common = [level for level in levels if counts.get(level, 0) >= DEFAULT_MIN_ROWS]
    named = identifier_cells(pd.Series(common, dtype=object), known)
    kept = tuple(level for level, hidden in zip(common, named, strict=True) if not hidden)
    if len(kept) == len(levels):
        return levels, None, 0
    names = (*_OTHER_NAMES, *(f"other_{i}" for i in range(2, len(levels) + 3)))
    lookup = LevelLookup(kept)
    other = next(name for name in names if lookup.find(name) is None)
    return (*kept, other), other, int(named.sum())


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
    return ColumnSchema(name=str(values.name), kind="categorical", levels=distinct_values(cells))


def _label_counts(values: pd.Series) -> tuple[tuple[Value, int], ...]:
    counts: dict[Value, int] = {}
    for value, count in present(values).value_counts(sort=False, dropna=True).items():
        level = label_value(value)
        counts[level] = counts.get(level, 0) + int(count)
    order = distinct_values(pd.Series(list(counts), dtype=object))
    return tuple((level, counts[level]) for level in order)
