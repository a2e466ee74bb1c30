"""Check a table against a given schema (``data.schema``): the user's edits are the contract.

Columns the schema does not list are dropped (that is how a user drops an ID); everything the
schema lists must be there and hold what it says, or the first mismatch is one line naming the
column, the count, the first row and the fix in the table or in the schema file.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from wgangp.data import column_values as cv
from wgangp.data.column_codes import level_of
from wgangp.data.table_schema import ColumnSchema, TableSchema
from wgangp.errors import DataError


def match_table(
    frame: pd.DataFrame,
    schema: TableSchema,
    source: str = "data",
    header: str | None = None,
) -> tuple[pd.DataFrame, list[str]]:
    """The table's columns the schema lists, in its order, and the names of those dropped.

    ``header`` describes the header of a schema the user cannot edit (Kaggle's shipped one):
    its lines then say what the file needs instead of how to edit ``data.schema``."""
    names = [str(name) for name in frame.columns]
    absent = [name for name in schema.names if name not in names]
    if absent:
        fix = (
            f"the header needs the {len(schema.names)} columns {header}"
            if header
            else "fix the header, or delete their entries from data.schema"
        )
        unlisted = [name for name in names if name not in schema.names]
        renamed = f" (renamed? the table has {cv.shown(unlisted)})" if unlisted else ""
        raise DataError(
            f"{source}: column(s) {cv.shown(absent)} of the schema are not in the table"
            f"{renamed}; {fix}"
        )
    frame = frame.set_axis(names, axis=1)
    for column in schema.columns:
        _check_column(frame[column.name], column, source, editable=header is None)
    _check_positive_rows(frame[schema.label], schema, source, editable=header is None)
    dropped = [name for name in names if name not in schema.names]
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
        levels = column.levels or ()
        outside = cells.map(lambda v: level_of(levels, v) is None)
        if outside.any():
            examples = list(pd.unique(cells[outside]))
            shown_levels = ", ".join(map(str, levels))
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
        if not cells.empty and cv.as_dates(cells) is None:
            raise DataError(
                f"{source}: column {name} is datetime in the schema but not every cell is a date "
                "(e.g. a text without digits); fix those cells, or set kind: categorical"
            )
    else:
        advice = ", or set kind: categorical" if editable else ""
        numbers = cv.checked_numbers(cells, name, column.kind, source, advice)
        fraction = numbers.to_numpy(np.float64) % 1 != 0
        if column.kind == "integer" and fraction.any():
            raise DataError(
                f"{source}: column {name} is integer in the schema but has {int(fraction.sum())} "
                f"non-whole value(s) (first at data row {cv.first_row(numbers, fraction)}: "
                f"{numbers[fraction].iloc[0]}); set kind: continuous, or fix those rows"
            )


def _check_positive_rows(
    values: pd.Series, schema: TableSchema, source: str, *, editable: bool = True
) -> None:
    levels = (schema.positive,)
    rows = int(cv.present(values).map(lambda v: level_of(levels, v) is not None).sum())
    if rows == 0:
        fix = (
            "use the table it was written for, or set positive: in data.schema"
            if editable
            else "the table needs rows of both classes"
        )
        raise DataError(
            f"{source}: no row has {schema.label} = {schema.positive}, the class to synthesize; "
            f"{fix}"
        )
