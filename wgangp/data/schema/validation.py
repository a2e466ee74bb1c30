"""The one gate every table passes before training: its rows against its schema, as one call.

A GAN fed one NaN, inf or text cell produces NaN losses hours later, and one absurdly large cell
(a fill value such as 1e30, an overflowed export) sets its column's scale alone or overflows to
inf; here the same problem is one line naming the column, the count, the first row and the fix,
before anything is built. What passes comes back in the form every later step works on: the
schema's columns in its order, each cell in its kind's canonical type (a level as the schema
spells it, a whole number as an integer, a date as a datetime, in its column's zone when it has
one, a gap as missing), the label holding the table's own values. Each row's class (1: the class
to synthesize) is computed from the label by
:meth:`~wgangp.data.schema.table_schema.TableSchema.classes`, never stored as a column, so no
column name of a table can collide with it."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from wgangp.data.entities import entity_codes
from wgangp.data.numbers import short_number
from wgangp.data.schema.cells import no_such_column
from wgangp.data.schema.column_codes import column_codes, from_seconds
from wgangp.data.schema.match import check_header, match_table
from wgangp.data.schema.table_schema import CLASSES, ColumnSchema, TableSchema
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
    check_header([str(name) for name in frame.columns], source)
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
        raise DataError(f"{source}: data.entity={entity}: {no_such_column(entity, names)}")
    if entity in set(schema.names):
        role = "the label" if entity == schema.label else "a feature of the schema"
        raise DataError(
            f"{source}: data.entity={entity} is {role}, but the entity column groups rows and "
            "never trains or ships; delete its entry from data.schema, or name another column"
        )
    return entity_codes(frame.iloc[:, names.index(entity)], entity, source)


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
