"""A table transform's fitted numbers for one feature column: its scales, its fill, its bounds."""

from __future__ import annotations

from dataclasses import dataclass, field

from wgangp.data.column_codes import bound_seconds
from wgangp.data.scales import Scale
from wgangp.data.table_schema import ColumnSchema, Value

#: The key of a column's scale fitted on every row; a class's own scale is keyed by its level.
ALL_ROWS = "all"


@dataclass
class FittedColumn:
    """A feature column's schema (bounds always set for non-categoricals) and fitted numbers."""

    schema: ColumnSchema
    #: The value a gap is filled with, in the column's units (a level; ISO text for datetimes).
    fill: Value
    #: Scales keyed by ``all`` and class levels as text; empty for categoricals.
    scales: dict[str, Scale] = field(default_factory=dict)
    #: Seconds datetimes are rounded to (86400: dates); 0: not rounded.
    step: float = 0.0

    @property
    def name(self) -> str:
        return self.schema.name

    @property
    def kind(self) -> str:
        return self.schema.kind

    def low_high(self) -> tuple[float, float]:
        """The bounds as numbers (seconds for datetimes)."""
        low, high = self.schema.bounds  # type: ignore[misc]
        if self.kind == "datetime":
            return bound_seconds(low), bound_seconds(high)
        return float(low), float(high)

    def fill_code(self) -> float:
        """The fill in the networks' units before scaling (a level index, seconds, a number)."""
        if self.kind == "categorical":
            return float((self.schema.levels or ()).index(self.fill))
        if self.kind == "datetime":
            return bound_seconds(self.fill)
        return float(self.fill)  # type: ignore[arg-type]


def class_key(level: Value) -> str:
    """A class level as the text keying its scales (``1`` for 1 and 1.0)."""
    if isinstance(level, float) and level.is_integer():
        return str(int(level))
    return str(level)
