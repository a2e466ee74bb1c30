"""A table transform's fitted numbers for one feature column: its scales, its fill, its bounds."""

from __future__ import annotations

from dataclasses import dataclass, field

from wgangp.data.schema.column_codes import bound_seconds
from wgangp.data.schema.table_schema import ColumnSchema, Value
from wgangp.data.transform.scales import Scale

#: The key of a column's scale fitted on every row; a class's own scale is keyed "0" or "1".
ALL_ROWS = "all"


@dataclass
class FittedColumn:
    """A feature column's schema (bounds always set for non-categoricals) and fitted numbers."""

    schema: ColumnSchema
    #: The value a gap is filled with, in the column's units (a level; ISO text for datetimes).
    fill: Value
    #: Scales keyed by ``all`` and the classes ``0`` and ``1``; empty for categoricals.
    scales: dict[str, Scale] = field(default_factory=dict)
    #: Seconds datetimes are rounded to (86400: dates); 0: not rounded.
    step: float = 0.0
    #: Mapped through its quantiles (point masses, or ``preprocess.quantile_columns``).
    quantile: bool = False

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
