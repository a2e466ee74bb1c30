"""A table transform's fitted numbers for one feature column: its scales, its fill, its bounds,
fitted on the column's present training values (:func:`fit_column`), every stored number no
entity's own (docs/privacy.md)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd

from wgangp.data.knots import no_ones_value, point_masses, private_range
from wgangp.data.schema.column_codes import (
    bound_seconds,
    coarsened,
    coarsened_inside,
    column_codes,
    from_seconds,
)
from wgangp.data.schema.table_schema import CLASSES, ColumnSchema, Value
from wgangp.data.transform.scales import QuantileScale, Scale, fit_scale
from wgangp.errors import DataError

#: The key of a column's scale fitted on every row; a class's own scale is keyed "0" or "1".
ALL_ROWS = "all"


#: A class with fewer present values in a column uses that column's scale of all rows.
MIN_CLASS_ROWS = 10
#: Datetime resolutions tried, coarsest first: a column of dates comes back as dates.
DATETIME_STEPS = (86400.0, 3600.0, 60.0, 1.0)


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
        low, high = self.schema.bounds  # type: ignore[misc]  # a fitted column has bounds
        if self.kind == "datetime":
            return bound_seconds(low), bound_seconds(high)
        return float(low), float(high)

    def generated_bounds(self) -> tuple[float, float]:
        """The bounds generated values are clipped into: :meth:`low_high`, and for a coarsened
        column (``coarsen``) the grid values just inside them (a private run's bounds are off
        the grid), so a clipped value is a year or a grid value too."""
        return coarsened_inside(*self.low_high(), self.schema)

    def fill_code(self) -> float:
        """The fill in the networks' units before scaling (a level index, seconds, a number)."""
        if self.kind == "categorical":
            return float((self.schema.levels or ()).index(self.fill))
        if self.kind == "datetime":
            return bound_seconds(self.fill)
        return float(self.fill)


def present_codes(
    values: pd.Series, column: ColumnSchema, source: str
) -> tuple[np.ndarray, np.ndarray]:
    """``values`` as the column's codes and gaps (:func:`column_codes`); DataError in one line
    when no training row has a value: a column with nothing to fit."""
    codes, gaps = column_codes(values, column, source)
    if gaps.all():
        raise DataError(
            f"{source}: column {column.name} has no value in the {len(codes)} training row(s); "
            "drop it from the schema or give rows that have it"
        )
    return codes, gaps


def fit_column(
    values: pd.Series,
    column: ColumnSchema,
    classes: np.ndarray,
    *,
    scaling: str,
    per_class: bool,
    by_point_masses: bool,
    quantile: bool,
    source: str,
    min_rows: int,
    entities: np.ndarray | None,
) -> FittedColumn:
    codes, gaps = present_codes(values, column, source)
    present = codes[~gaps]
    owners = None if entities is None else np.asarray(entities, np.int64)[~gaps]
    if column.kind == "categorical":
        levels = column.levels or ()
        counts = np.bincount(present.astype(np.int64), minlength=len(levels))
        return FittedColumn(column, fill=levels[int(counts.argmax())])
    present_classes = classes[~gaps]

    def of_class(c: int) -> np.ndarray | None:
        return None if owners is None else owners[present_classes == c]

    step = _datetime_step(present) if column.kind == "datetime" else 0.0
    whole = column.kind == "integer"
    if column.bounds is None:
        low, high = private_range(present, min_rows, whole=whole, owners=owners)
        column = replace(column, bounds=bounds_value(column, low, high))
    raw = scaling == "none"
    if by_point_masses and not raw and not quantile:
        by_class = [(present[present_classes == c], of_class(c)) for c in CLASSES]
        quantile = any(
            len(point_masses(rows, min_rows, owners=who))
            for rows, who in [(present, owners), *(by_class if per_class else [])]
        )
    fitted = FittedColumn(column, fill=0, step=step, quantile=quantile)
    low, high = fitted.low_high()
    # The median, unless fewer than min_rows entities hold it (an odd count's middle row): the
    # fill ships in preprocessing.json.
    median = float(np.median(present))
    if column.kind == "datetime" and step > 0:  # in whole steps (days, ...): no one's date
        median = step * no_ones_value(
            median / step, present / step, min_rows, whole=True, up=True, owners=owners
        )
    else:
        median = no_ones_value(median, present, min_rows, whole=whole, up=True, owners=owners)
    fill = float(np.clip(on_step(fitted, median), low, high))
    fitted.fill = native_value(column.kind, fill)
    units = present
    if column.log and not raw and not quantile:
        units = np.log1p(present)

    def scale_of(rows: np.ndarray, who: np.ndarray | None) -> Scale:
        if quantile:
            return QuantileScale.fit_grouped(rows[:, None], min_rows, who)
        return fit_scale(scaling, rows[:, None], None, min_rows, who)

    fitted.scales[ALL_ROWS] = scale_of(units, owners)
    if per_class:
        for c in CLASSES:
            rows = units[present_classes == c]
            if rows.size >= MIN_CLASS_ROWS:
                fitted.scales[str(c)] = scale_of(rows, of_class(c))
    for key, scale in fitted.scales.items():
        if scale.nonfinite_columns():
            raise DataError(
                f"{source}: column {column.name} makes the fitted scale of class {key} "
                "non-finite: its values are too large to scale; fix or drop the rows with "
                f"extreme {column.name} values"
            )
    return fitted


def _datetime_step(seconds: np.ndarray) -> float:
    for step in DATETIME_STEPS:
        if np.all(np.mod(seconds, step) == 0):
            return step
    return 0.0


def bounds_value(column: ColumnSchema, low: float, high: float) -> tuple[Any, Any]:
    """Fitted bounds in the schema's terms: whole numbers, dates as ISO text, and on a
    ``round`` step (rounded inward, so every value on the step stays within them)."""
    if column.kind == "integer":
        return int(low), int(high)
    if column.kind == "datetime":  # with the zone's offset: read back as the same instants
        dates = from_seconds(np.array([low, high]), column.zone)
        return tuple(dates.map(lambda t: t.isoformat()))
    if column.round is not None:
        step = float(column.round)
        inward_low, inward_high = np.ceil(low / step) * step, np.floor(high / step) * step
        if inward_low <= inward_high:
            low, high = _grid(inward_low, step), _grid(inward_high, step)
    return float(low), float(high)


def on_step(column: FittedColumn, values: np.ndarray | float) -> Any:
    """Values on the column's step: its ``coarsen`` (a year, a grid), whole for integers, the
    datetime step, ``round``."""
    if column.schema.coarsen is not None:
        return coarsened(np.asarray(values, np.float64), column.schema, nearest=True)
    if column.kind == "integer":
        return np.round(values)
    if column.kind == "datetime" and column.step > 0:
        return np.round(np.asarray(values) / column.step) * column.step
    if column.schema.round is not None:
        step = float(column.schema.round)
        return _grid(np.round(np.asarray(values, np.float64) / step) * step, step)
    return values


def _grid(values: Any, step: float) -> Any:
    """Multiples of ``step`` as the nearest floats of their decimal text (0.29, not
    0.29000000000000004): rounded to the step's decimals."""
    exponent = Decimal(repr(step)).normalize().as_tuple().exponent
    decimals = max(0, -int(exponent)) if isinstance(exponent, int) else 0
    return np.round(values, decimals)


def native_value(kind: str, value: float) -> Any:
    if kind == "integer":
        return int(value)
    if kind == "datetime":
        return from_seconds(np.array([value]))[0].isoformat()
    return value
