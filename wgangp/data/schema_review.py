"""What a person should decide before training on an inferred schema, one line per column.

Inference cannot tell an ID from a measurement or a constant from a feature; training on them
wastes the networks' capacity (an ID's every value is unique, a constant has nothing to learn,
thousands of one-hot levels starve the rest). Each finding names the fix; an edited schema
(``data.schema``) is the user's answer, so these checks apply to inferred schemas only.
"""

from __future__ import annotations

import pandas as pd

from wgangp.data.column_values import native, present
from wgangp.data.table_schema import TableSchema
from wgangp.errors import DataError

#: More levels than this make a categorical column wider than the rest of the table together.
MAX_LEVELS = 1000
#: Fewer rows than this do not make all-distinct values look like an ID.
MIN_ROWS_FOR_ID = 20
_EDITED = (
    "an edited schema (python -m wgangp.schema ... > schema.yaml, then data.schema=schema.yaml)"
)


def ambiguities(frame: pd.DataFrame, schema: TableSchema, source: str = "data") -> list[str]:
    """One line per column to review: an ID-like column, a constant, too many levels."""
    lines = []
    for column in schema.features:
        cells = present(frame[column.name])
        distinct = int(cells.nunique())
        if distinct == 1:
            value = native(cells.iloc[0])
            lines.append(
                f"{source}: column {column.name} has one value ({value}) in all {len(cells)} "
                f"non-empty rows, nothing to learn; drop it, or keep it in {_EDITED}"
            )
        elif (
            column.kind in ("integer", "categorical")
            and len(cells) >= MIN_ROWS_FOR_ID
            and distinct == len(cells)
        ):
            lines.append(
                f"{source}: column {column.name} looks like an ID (a different value in each of "
                f"its {len(cells)} rows); drop it, or mark it a feature by keeping it in {_EDITED}"
            )
        elif column.kind == "categorical" and distinct > MAX_LEVELS:
            lines.append(
                f"{source}: column {column.name} is categorical with {distinct} levels (more than "
                f"{MAX_LEVELS}); drop it or group its rare levels, or keep it in {_EDITED}"
            )
    return lines


def require_unambiguous(frame: pd.DataFrame, schema: TableSchema, source: str = "data") -> None:
    """Raise the first finding (and how many more there are) as one line."""
    lines = ambiguities(frame, schema, source)
    if lines:
        more = f" ({len(lines) - 1} more column(s) to review)" if len(lines) > 1 else ""
        raise DataError(lines[0] + more)
