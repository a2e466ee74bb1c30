"""Check a table against a given schema (``data.schema``): the user's edits are the contract.

Columns the schema does not list are dropped (that is how a user drops an ID); everything the
schema lists must be there and hold what it says, or the first mismatch is one line naming the
column, the count, the first row and the fix in the table or in the schema file. Two edits are
refused although the cells fit them: bounds that leave out more of the table's rows than the
inferred bounds do (every generated value would be clipped into them), and an identifier kept as
a feature (:mod:`wgangp.data.schema.identifiers`: its values would ship and come back verbatim).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from wgangp.data.entities import identical_row_groups
from wgangp.data.numbers import short_number
from wgangp.data.schema import cells as cv
from wgangp.data.schema.bounds import (
    date_bounds,
    date_text,
    private_date_range,
    private_number_range,
    zone_of,
)
from wgangp.data.schema.column_codes import bound_seconds, coarsened, to_seconds
from wgangp.data.schema.identifiers import Identification, identify
from wgangp.data.schema.table_schema import RARE, ColumnSchema, TableSchema
from wgangp.errors import DataError


def match_table(
    frame: pd.DataFrame,
    schema: TableSchema,
    source: str = "data",
    header: str | None = None,
    owners: np.ndarray | None = None,
) -> tuple[pd.DataFrame, list[str]]:
    """The table's columns the schema lists, in its order, and the names of those dropped.

    ``header`` describes the header of a schema the user cannot edit (Kaggle's shipped one):
    its lines then say what the file needs instead of how to edit ``data.schema``. ``owners``:
    each row's entity (None: rows identical in the schema's columns count once), which the
    range inference gives, and so the bounds check, counts."""
    names = [str(name) for name in frame.columns]
    check_header(names, source)
    in_table, listed = set(names), set(schema.names)
    absent = [name for name in schema.names if name not in in_table]
    editable = header is None
    if absent:
        fix = (
            f"the header needs the {len(schema.names)} columns {header}"
            if header
            else "fix the header, or delete their entries from data.schema"
        )
        unlisted = [name for name in names if name not in listed]
        renamed = f" (renamed? the table has {cv.shown(unlisted)})" if unlisted else ""
        raise DataError(
            f"{source}: column(s) {cv.shown(absent)} of the schema are not in the table"
            f"{renamed}; {fix}"
        )
    frame = frame.set_axis(names, axis=1)
    rare = schema.classes(frame[schema.label].reset_index(drop=True)) == RARE
    # The same entities inference counted: data.entity's, else the customers the table's
    # identifiers name (identify), else rows identical in the schema's columns.
    identification = identify(frame, skip={schema.label}, owners=owners) if editable else None
    if owners is None:
        customers = identification.entity if identification is not None else None
        owners = (
            customers.codes
            if customers is not None
            else identical_row_groups(frame.loc[:, list(schema.names)])
        )
    for column in schema.columns:
        _check_column(frame[column.name], column, source, editable=editable)
        if column.name != schema.label:
            _check_feature(frame[column.name], column, rare, schema, source, owners)
    if identification is not None:
        _refuse_identifiers(identification, schema, source)
    if not rare.any():
        fix = (
            "use the table it was written for, or set positive: in data.schema"
            if editable
            else "the table needs rows of both classes"
        )
        raise DataError(
            f"{source}: no row has {schema.label} = {schema.positive}, the class to synthesize; "
            f"{fix}"
        )
    dropped = [name for name in names if name not in listed]
    return frame[list(schema.names)], dropped


def check_header(names: list[str], source: str) -> None:
    """Every column needs its own name: a repeated one is one line (found in one pass)."""
    repeated = cv.repeated_names(names)
    if repeated:
        raise DataError(
            f"{source}: column(s) {', '.join(repeated[:5])} appear more than once in the header; "
            "rename or drop the copies, every column needs its own name"
        )


def label_counts(labels: pd.Series, schema: TableSchema) -> tuple[tuple, ...]:
    """The table's rows per level of the schema's label (levels no row holds: 0)."""
    lookup = schema.column(schema.label).lookup
    counts = [0] * len(lookup.levels)
    for value, count in cv.present(labels).value_counts(sort=False).items():
        index = lookup.index(value)
        if index is not None:
            counts[index] += int(count)
    return tuple(zip(lookup.levels, counts, strict=True))


def _check_column(
    values: pd.Series, column: ColumnSchema, source: str, *, editable: bool = True
) -> None:
    cells = cv.present(values)
    name = column.name
    if len(cells) < len(values) and not column.nullable:
        fix = (
            "fix or drop those rows, or set nullable: true"
            if editable
            else "fix or drop those rows"
        )
        raise DataError(
            f"{source}: column {name} has {len(values) - len(cells)} missing value(s) (first at "
            f"data row {cv.first_gap_row(values, cells)}) but the schema says nullable: false; "
            f"{fix}"
        )
    if column.kind == "categorical":
        levels = column.lookup
        if column.other is not None:
            return  # values not among the levels are the other level's
        outside = cells.map(lambda v: levels.index(v) is None).astype(bool)
        if outside.any():
            examples = list(pd.unique(cells[outside]))
            shown_levels = ", ".join(map(str, levels.levels))
            fix = (
                "add them to its levels in data.schema, or fix those rows"
                if editable
                else f"its values are {shown_levels}: fix those rows"
            )
            raise DataError(
                f"{source}: column {name} has {int(outside.sum())} value(s) outside its levels "
                f"(e.g. {cv.shown(examples)}); {fix}"
            )
    elif column.kind == "datetime":
        if not cells.empty:
            cv.checked_dates(cells, name, column.format, source)
    else:
        advice = ", or set kind: categorical" if editable else ""
        numbers = cv.checked_numbers(cells, name, column.kind, source, advice, fmt=column.format)
        fraction = numbers.to_numpy(np.float64) % 1 != 0
        if column.kind == "integer" and fraction.any():
            raise DataError(
                f"{source}: column {name} is integer in the schema but has {int(fraction.sum())} "
                f"non-whole value(s) (first at data row {cv.first_row(numbers, fraction)}: "
                f"{numbers[fraction].iloc[0]}); set kind: continuous, or fix those rows"
            )


def _refuse_identifiers(identification: Identification, schema: TableSchema, source: str) -> None:
    """An identifier (found by its content, :mod:`wgangp.data.schema.identifiers`) is never a
    feature:
    its values would ship in the model and come back verbatim in samples, so no edit keeps it."""
    features = {column.name for column in schema.features}
    found = [f for f in identification.found if f.column in features]
    if found:
        first = found[0]
        entity = f" (or name it data.entity={first.column})" if first.groups_rows else ""
        more = f" ({len(found) - 1} more identifier column(s))" if len(found) > 1 else ""
        raise DataError(
            f"{source}: column {first.column} {first.reason}: an identifier never trains or "
            f"ships, since its values would come back verbatim in samples; delete its entry "
            f"from data.schema{entity}{more}"
        )


def _check_feature(
    values: pd.Series,
    column: ColumnSchema,
    rare: np.ndarray,
    schema: TableSchema,
    source: str,
    owners: np.ndarray,
) -> None:
    """A feature's edits the cells fit but the product cannot keep (module doc)."""
    cells = cv.present(values)
    if cells.empty:
        return
    held = owners[cells.index.to_numpy()]
    if column.kind == "categorical":
        return
    if column.bounds is None:
        return
    if column.kind == "datetime":
        dates = pd.to_datetime(cv.checked_dates(cells, column.name, column.format, source))
        values_ = coarsened(to_seconds(dates, column.zone), column)
        low, high = (bound_seconds(bound) for bound in column.bounds)
    else:
        values_ = coarsened(cv.as_numbers(cells, column.format).to_numpy(np.float64), column)
        low, high = (float(bound) for bound in column.bounds)
    outside = (values_ < low) | (values_ > high)
    if not outside.any():
        return
    if column.kind == "datetime" and column.coarsen is not None:
        shown = list(date_bounds(dates, held, column.zone, column.coarsen))
        inferred = tuple(bound_seconds(bound) for bound in shown)
    elif column.kind == "datetime":
        inferred = private_date_range(dates, held, column.zone)
        zone = column.zone or zone_of(dates)
        shown = [date_text(second, zone) for second in inferred]
    else:
        whole = column.kind == "integer"
        inferred = private_number_range(values_, held, whole=whole, coarsen=column.coarsen)
        shown = [short_number(bound) for bound in inferred]
    if low <= inferred[0] and high >= inferred[1]:
        return  # the inferred bounds leave out a few extreme rows too: that is by design
    rows = cells.index.to_numpy()[outside]
    rare_out, rare_all = int(rare[rows].sum()), int(rare.sum())
    first = cells[outside].iloc[0]
    bounds = ", ".join(str(bound) for bound in column.bounds)
    raise DataError(
        f"{source}: column {column.name} has {int(outside.sum())} value(s) outside its bounds "
        f"[{bounds}] ({rare_out} of the {rare_all} rows with {schema.class_names[1]}; first at "
        f"data row {int(rows[0]) + 1}: {cv.shown([first])}), and every generated value would be "
        f"clipped into them; widen them to at least [{', '.join(shown)}] in data.schema (the "
        "range python -m wgangp.schema infers), or fix or drop those rows"
    )
