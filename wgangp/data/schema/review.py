"""What a person should decide before training on an inferred schema, one line per column.

Inference cannot tell an ID from a measurement or a constant from a feature; training on them
wastes the networks' capacity (an ID's every value is unique, a constant has nothing to learn,
thousands of one-hot levels starve the rest). Nor can it read dates whose day and month could be
swapped, dates in several formats, or numbers written as text in a format it does not know.
Each finding names the fix; an edited schema (``data.schema``) is the user's answer, so these
checks apply to inferred schemas only. Identifiers (names, e-mails, IDs, card numbers, free text)
are no question for a person: they are dropped before inference and refused in an edited schema
(:mod:`wgangp.data.schema.identifiers`).
"""

from __future__ import annotations

import pandas as pd

from wgangp.data.schema.cells import native, present
from wgangp.data.schema.table_schema import TableSchema
from wgangp.data.schema.text_formats import number_like_example, read_dates
from wgangp.errors import DataError

#: More levels than this make a categorical column wider than the rest of the table together.
MAX_LEVELS = 1000
#: Fewer rows than this do not make all-distinct values look like an ID.
MIN_ROWS_FOR_ID = 20
_EDITED = (
    "an edited schema (python -m wgangp.schema ... > schema.yaml, then data.schema=schema.yaml)"
)


def ambiguities(frame: pd.DataFrame, schema: TableSchema, source: str = "data") -> list[str]:
    """One line per column to review: an ID-like integer, a constant, too many levels, dates
    without one reading, numbers written in a format no reader takes."""
    lines = []
    for column in schema.features:
        cells = present(frame[column.name])
        distinct = int(cells.nunique())
        categorical = column.kind == "categorical"
        kept = f"{_EDITED}, where its value ships in the model" if categorical else _EDITED
        if distinct == 1:
            value = native(cells.iloc[0])
            lines.append(
                f"{source}: column {column.name} has one value ({value}) in all {len(cells)} "
                f"non-empty rows, nothing to learn; drop it, or keep it in {kept}"
            )
        elif column.kind == "integer" and len(cells) >= MIN_ROWS_FOR_ID and distinct == len(cells):
            lines.append(
                f"{source}: column {column.name} looks like an ID (a different value in each of "
                f"its {len(cells)} rows); drop it, or mark it a feature by keeping it in {_EDITED}"
            )
        elif categorical and (example := number_like_example(cells)):
            lines.append(
                f"{source}: column {column.name} looks like numbers written as text in a format "
                f"wgangp does not read (e.g. {example!r}), so it is categorical: only its levels "
                "can be generated; write plain numbers (1234.5), or 1,234.5 with at most one "
                "currency sign, in the table"
            )
        elif categorical and distinct > MAX_LEVELS:
            lines.append(
                f"{source}: column {column.name} is categorical with {distinct} levels (more than "
                f"{MAX_LEVELS}); drop it or group its rare levels, or keep it in {_EDITED}, where "
                "its levels ship in the model and come back verbatim in samples"
            )
        elif column.kind == "datetime" and column.format is None:
            line = _dates_line(cells, column.name, source)
            if line:
                lines.append(line)
    return lines


def _dates_line(cells: pd.Series, name: str, source: str) -> str | None:
    reading = read_dates(cells)
    if reading is None or reading.problem is None:
        return None
    if reading.readings:
        first, second = reading.readings[:2]
        return (
            f"{source}: column {name} {reading.problem}; set format: '{first}' or format: "
            f"'{second}' on its entry in {_EDITED}, whichever the table is written in"
        )
    return (
        f"{source}: column {name} {reading.problem}, and reading each row its own way would swap "
        "days and months; rewrite them in one format (2024-03-01 is best), or drop it"
    )


def require_unambiguous(frame: pd.DataFrame, schema: TableSchema, source: str = "data") -> None:
    """Raise the first finding (and how many more there are) as one line."""
    lines = ambiguities(frame, schema, source)
    if lines:
        more = f" ({len(lines) - 1} more column(s) to review)" if len(lines) > 1 else ""
        raise DataError(lines[0] + more)
