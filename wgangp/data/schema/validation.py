"""The one gate every table passes before training: its rows against its schema, as one call.

A GAN fed one NaN, inf or text cell produces NaN losses hours later, and one absurdly large cell
(a fill value such as 1e30, an overflowed export) sets its column's scale alone or overflows to
inf; here the same problem is one line naming the column, the count, the first row and the fix,
before anything is built.

The schema is the contract (an edited ``data.schema`` is the user's): columns it does not list
are dropped (that is how a user drops an ID); everything it lists must be there and hold what it
says, or the first mismatch is one line naming the column, the count, the first row and the fix
in the table or in the schema file. Two edits are refused although the cells fit them: bounds that
leave out more of the table's rows than the inferred bounds do (every generated value would be
clipped into them), and an identifier kept as a feature (:mod:`wgangp.data.schema.identifiers`:
its values would ship and come back verbatim).

What passes comes back in the form every later step works on: the schema's columns in its order,
each cell in its kind's canonical type (a level as the schema spells it, a whole number as an
integer, a date as a datetime, in its column's zone when it has one, a gap as missing), the label
holding the table's own values. Each row's class (1: the class to synthesize) is computed from the
label by :meth:`~wgangp.data.schema.table_schema.TableSchema.classes`, never stored as a column, so
no column name of a table can collide with it."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from wgangp.data.entities import entity_codes, identical_row_groups
from wgangp.data.numbers import short_number
from wgangp.data.schema import cells as cv
from wgangp.data.schema.bounds import (
    date_bounds,
    date_text,
    private_date_range,
    private_number_range,
    zone_of,
)
from wgangp.data.schema.column_codes import (
    bound_seconds,
    coarsened,
    column_codes,
    from_seconds,
    to_seconds,
)
from wgangp.data.schema.identifiers import Identification, identify
from wgangp.data.schema.table_schema import CLASSES, RARE, ColumnSchema, TableSchema
from wgangp.errors import DataError

log = logging.getLogger("wgangp.data")


def validate_table(
    frame: pd.DataFrame,
    schema: TableSchema,
    *,
    source: str,
    min_rows_per_class: int,
    header: str | None = None,
    entity: str | None = None,
) -> pd.DataFrame:
    """``frame`` checked against ``schema`` and in canonical form (module doc); one DataError line
    at the first problem. ``header`` names the header of a schema the user cannot edit (Kaggle's
    shipped one), so the lines say what the file needs instead of how to edit ``data.schema``.
    ``entity`` (``data.entity``) names the column whose rows belong together: it is kept beside
    the schema's columns as integer codes (:func:`~wgangp.data.entities.entity_codes`), never
    as the table's values."""
    cv.check_distinct_names([str(name) for name in frame.columns], source)
    if len(frame) == 0:
        raise DataError(f"{source}: no rows; the table needs a header and at least one data row")
    owners = None if entity is None else validate_entity(frame, schema, entity, source)
    frame, dropped = match_table(frame, schema, source=source, header=header, owners=owners)
    dropped = [name for name in dropped if name != entity]
    if dropped:
        log.info("%s: column(s) not in the schema, dropped: %s", source, ", ".join(dropped))
    columns = {
        column.name: canonical(frame[column.name], column, source) for column in schema.columns
    }
    clean = pd.DataFrame(columns)
    if entity is not None:
        clean[entity] = owners
    for column in schema.features:
        if column.log:
            _check_non_negative(clean[column.name], column, source, editable=header is None)
    check_class_counts(schema.classes(clean[schema.label]), schema, min_rows_per_class, source)
    return clean


def validate_entity(
    frame: pd.DataFrame, schema: TableSchema, entity: str, source: str
) -> np.ndarray:
    """The ``data.entity`` column's codes: a column of the table that the schema does not list
    (it groups rows; it is never a feature and never ships)."""
    names = [str(name) for name in frame.columns]
    if entity not in set(names):
        raise DataError(f"{source}: data.entity={entity}: {cv.no_such_column(entity, names)}")
    if entity in set(schema.names):
        role = "the label" if entity == schema.label else "a feature of the schema"
        raise DataError(
            f"{source}: data.entity={entity} is {role}, but the entity column groups rows and "
            "never trains or ships; delete its entry from data.schema, or name another column"
        )
    return entity_codes(frame.iloc[:, names.index(entity)], entity, source)


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
    cv.check_distinct_names(names, source)
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
        return from_seconds(codes, column.zone).mask(gaps)
    if column.kind == "integer":
        if gaps.any():
            return pd.Series(pd.arrays.IntegerArray(codes.astype(np.int64), gaps.copy()))
        return pd.Series(codes.astype(np.int64))
    return pd.Series(np.where(gaps, np.nan, codes))


def _check_non_negative(
    values: pd.Series, column: ColumnSchema, source: str, *, editable: bool
) -> None:
    numbers = values.to_numpy(np.float64, na_value=np.nan)
    negative = numbers < 0
    if negative.any():
        fix = "fix those rows, or delete log: true in data.schema" if editable else "fix those rows"
        raise DataError(
            f"{source}: column {column.name} has {int(negative.sum())} negative value(s) (min "
            f"{short_number(np.nanmin(numbers))}); it is modelled on a log scale (log: true) and "
            f"needs values >= 0: {fix}"
        )


def check_class_counts(
    classes: np.ndarray, schema: TableSchema, min_rows: int, source: str
) -> None:
    """Each class needs ``min_rows`` rows (``data.min_rows_per_class``, or what the split needs)."""
    for cls in reversed(CLASSES):
        count = int((classes == cls).sum())
        if count < min_rows:
            raise DataError(
                f"{source}: only {count} row(s) with {schema.class_names[cls]}; at least "
                f"{min_rows} are needed (data.min_rows_per_class): use a larger table"
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
