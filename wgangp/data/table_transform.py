"""A schema'd table's features into the networks' space and back: invertible, finite, in bounds.

Each feature column becomes the blocks of :mod:`wgangp.data.table_layout`. Numbers and datetimes
(as seconds since 1970) go through a scale of :mod:`wgangp.data.scales` fitted on the column's
present training values, one per class with ``per_class`` (a rare class's marginals differ from
the others', as fraud's do); a categorical is its one-hot; a nullable column's gaps are filled
with its median (its most frequent level) and flagged in its missing indicator, so NaN never
reaches the networks. The inverse promises a user of the generated rows what the schema says:
every category one of the column's levels, integers whole, every value within the column's
bounds, datetimes as datetimes, gaps wherever an indicator exceeds 0.5. Stored as JSON, checked on
load (:mod:`wgangp.data.table_transform_check`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, NoReturn

import numpy as np
import pandas as pd

from wgangp.data.column_codes import column_codes, from_seconds, level_of
from wgangp.data.fitted_column import ALL_ROWS, FittedColumn, class_key
from wgangp.data.knots import no_ones_value
from wgangp.data.numbers import short_number
from wgangp.data.scales import DEFAULT_MIN_ROWS, fit_scale
from wgangp.data.table_layout import Block, table_layout
from wgangp.data.table_schema import ColumnSchema, TableSchema, Value
from wgangp.data.table_transform_check import FORMAT, checked_parts
from wgangp.data.transform import parsed_json
from wgangp.errors import ConfigError, DataError, NonFiniteError

#: A class with fewer present values in a column uses that column's scale of all rows.
MIN_CLASS_ROWS = 10
#: Datetime resolutions tried, coarsest first: a column of dates comes back as dates.
DATETIME_STEPS = (86400.0, 3600.0, 60.0, 1.0)


class TableTransform:
    """Fitted on a table's training rows and schema; maps its features both ways (module doc)."""

    def __init__(
        self,
        columns: Sequence[FittedColumn],
        label: str,
        label_levels: Sequence[Value],
        label_at: int,
        scaling: str = "standard",
        per_class: bool = True,
        quantile_columns: Sequence[str] = (),
    ) -> None:
        self.columns = tuple(columns)
        self.label, self.label_levels, self.label_at = label, tuple(label_levels), label_at
        self.scaling, self.per_class = scaling, per_class
        self.quantile_columns = tuple(quantile_columns)
        self.layout: tuple[Block, ...] = table_layout(column.schema for column in self.columns)
        self.width = self.layout[-1].stop if self.layout else 0

    @classmethod
    def fit(
        cls,
        frame: pd.DataFrame,
        schema: TableSchema,
        scaling: str = "standard",
        per_class: bool = True,
        quantile_columns: Sequence[str] = (),
        source: str = "training rows",
        min_rows: int = DEFAULT_MIN_ROWS,
    ) -> TableTransform:
        """Fit on ``frame`` (the training rows, with the label); DataError in one line. Every
        stored quantile knot is the mean of >= ``min_rows`` rows (``ship.min_atom_rows``)."""
        _check_options(schema, scaling, quantile_columns)
        for column in schema.features:
            if column.name not in frame:
                _absent(column.name, source)
        levels = schema.column(schema.label).levels or ()
        keys = None
        if per_class:
            if schema.label not in frame:
                _no_label(schema.label, source)
            keys = _class_keys(frame, schema.label, levels, source)
        fitted = [
            _fit_column(
                frame[column.name],
                column,
                keys,
                scaling,
                [0] if column.name in quantile_columns else None,
                source,
                min_rows,
            )
            for column in schema.features
        ]
        return cls(
            fitted,
            label=schema.label,
            label_levels=levels,
            label_at=schema.names.index(schema.label),
            scaling=scaling,
            per_class=per_class,
            quantile_columns=quantile_columns,
        )

    def transform(self, frame: pd.DataFrame, source: str = "rows") -> np.ndarray:
        """Features of ``frame`` -> float32 (rows, width), finite; gaps filled and flagged."""
        keys = self._keys(frame, source) if self.per_class else None
        out = np.zeros((len(frame), self.width), dtype=np.float32)
        blocks = iter(self.layout)
        for column in self.columns:
            block = next(blocks)
            if column.name not in frame:
                _absent(column.name, source)
            codes, gaps = column_codes(frame[column.name], column.schema, source)
            codes[gaps] = column.fill_code()
            if column.kind == "categorical":
                out[np.arange(len(codes)), block.start + codes.astype(np.int64)] = 1.0
            else:
                z = _apply(column, codes, keys, "forward").astype(np.float32)
                _require_finite(z, column.name, source)
                out[:, block.start] = z
            if column.schema.nullable:
                out[:, next(blocks).start] = gaps
        return out

    def inverse(self, x: np.ndarray, labels: Sequence[Value] | None = None) -> pd.DataFrame:
        """Network outputs -> the features in the table's names and dtypes, in bounds (module doc),
        with the label column where the table has it when ``labels`` (label values) are given."""
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self.width:
            raise ValueError(f"expected rows of width {self.width}, got shape {x.shape}")
        bad = ~np.isfinite(x)
        if bad.any():
            block = next(b for b in self.layout if bad[:, b.start : b.stop].any())
            raise NonFiniteError(
                f"{int(bad.any(axis=1).sum())} of {len(x)} generated row(s) hold non-finite "
                f"values (first in column {block.column}); the generator diverged: retrain it"
            )
        if self.per_class and labels is None:
            raise ValueError("a per-class transform needs the rows' labels to invert them")
        keys = None if labels is None else self._label_keys(labels)
        data: dict[str, Any] = {}
        blocks = iter(self.layout)
        for column in self.columns:
            block = next(blocks)
            part = x[:, block.start : block.stop]
            gaps = None
            if column.schema.nullable:
                indicator = next(blocks)
                gaps = x[:, indicator.start] > 0.5
            data[column.name] = _values(column, part, keys if self.per_class else None, gaps)
        frame = pd.DataFrame(data, index=pd.RangeIndex(len(x)))
        if labels is not None:
            values = [level_of(self.label_levels, v) for v in labels]
            frame.insert(self.label_at, self.label, pd.Series(values, dtype=object).infer_objects())
        return frame

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "label": self.label,
            "label_levels": list(self.label_levels),
            "label_at": self.label_at,
            "scaling": self.scaling,
            "per_class": self.per_class,
            "quantile_columns": list(self.quantile_columns),
            "columns": [_column_dict(column) for column in self.columns],
        }

    def to_json(self) -> str:
        # allow_nan=False: never write Infinity or NaN (fit refuses them before this)
        return json.dumps(self.to_dict(), indent=1, allow_nan=False)

    @classmethod
    def from_dict(cls, raw: Any, source: str = "table transform") -> TableTransform:
        """A saved transform, checked; each problem is one DataError line naming ``source``."""
        return cls(**checked_parts(raw, source))

    @classmethod
    def from_json(cls, text: str, source: str = "table transform") -> TableTransform:
        return cls.from_dict(parsed_json(text, source), source)

    def _keys(self, frame: pd.DataFrame, source: str) -> np.ndarray:
        if self.label not in frame:
            _no_label(self.label, source)
        return _class_keys(frame, self.label, self.label_levels, source)

    def _label_keys(self, labels: Sequence[Value]) -> np.ndarray:
        keys = []
        for value in labels:
            level = level_of(self.label_levels, value)
            if level is None:
                raise ValueError(f"label {value!r} is not one of {list(self.label_levels)}")
            keys.append(class_key(level))
        return np.asarray(keys, dtype=object)


def _check_options(schema: TableSchema, scaling: str, quantile_columns: Sequence[str]) -> None:
    from wgangp.config import SCALINGS

    if scaling not in SCALINGS:
        raise ConfigError(f"scaling {scaling!r} is unknown; use one of {', '.join(SCALINGS)}")
    scaled = [c.name for c in schema.features if c.kind != "categorical"]
    for name in quantile_columns:
        if name not in scaled:
            raise ConfigError(
                f"quantile column {name!r} is not a number or datetime feature of the table; "
                f"name one of {', '.join(scaled) or '(none)'}"
            )


def _absent(name: str, source: str) -> NoReturn:
    raise DataError(f"{source}: column {name} of the schema is not in the rows; fix the header")


def _no_label(label: str, source: str) -> NoReturn:
    raise DataError(
        f"{source}: the rows have no label column {label}; per-class scales need each row's class"
    )


def _class_keys(
    frame: pd.DataFrame, label: str, levels: Sequence[Value], source: str
) -> np.ndarray:
    lookup = {}
    for value in pd.unique(frame[label]):
        level = level_of(tuple(levels), value)
        if level is None:
            raise DataError(
                f"{source}: label {label} holds {value!r}, not one of its levels "
                f"({', '.join(map(str, levels))}); fix those rows or the schema"
            )
        lookup[value] = class_key(level)
    return frame[label].map(lookup).to_numpy(dtype=object)


def _fit_column(
    values: pd.Series,
    column: ColumnSchema,
    keys: np.ndarray | None,
    scaling: str,
    quantile: list[int] | None,
    source: str,
    min_rows: int = DEFAULT_MIN_ROWS,
) -> FittedColumn:
    codes, gaps = column_codes(values, column, source)
    present = codes[~gaps]
    if present.size == 0:
        raise DataError(
            f"{source}: column {column.name} has no value in the {len(codes)} training row(s); "
            "drop it from the schema or give rows that have it"
        )
    if column.kind == "categorical":
        levels = column.levels or ()
        counts = np.bincount(present.astype(np.int64), minlength=len(levels))
        return FittedColumn(column, fill=levels[int(counts.argmax())])
    step = _datetime_step(present) if column.kind == "datetime" else 0.0
    if column.bounds is None:
        low, high = float(present.min()), float(present.max())
        column = replace(column, bounds=_bounds(column.kind, low, high))
    fitted = FittedColumn(column, fill=0, step=step)
    low, high = fitted.low_high()
    # The median, unless fewer than min_rows rows hold it (an odd count's middle row): the
    # fill ships in preprocessing.json.
    median = float(np.median(present))
    if column.kind != "datetime":
        median = no_ones_value(median, present, min_rows, whole=column.kind == "integer", up=True)
    fill = float(np.clip(_round(column.kind, median, step), low, high))
    fitted.fill = _native(column.kind, fill)
    fitted.scales[ALL_ROWS] = fit_scale(scaling, present[:, None], quantile, min_rows)
    if keys is not None:
        for key in sorted({str(k) for k in keys}):
            rows = present[(keys == key)[~gaps]]
            if rows.size >= MIN_CLASS_ROWS:
                fitted.scales[key] = fit_scale(scaling, rows[:, None], quantile, min_rows)
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


def _bounds(kind: str, low: float, high: float) -> tuple[Any, Any]:
    if kind == "integer":
        return int(low), int(high)
    if kind == "datetime":
        return tuple(from_seconds(np.array([low, high])).map(lambda t: t.isoformat()))
    return low, high


def _round(kind: str, value: np.ndarray | float, step: float) -> Any:
    if kind == "integer":
        return np.round(value)
    if kind == "datetime" and step > 0:
        return np.round(np.asarray(value) / step) * step
    return value


def _native(kind: str, value: float) -> Value:
    if kind == "integer":
        return int(value)
    if kind == "datetime":
        return from_seconds(np.array([value]))[0].isoformat()
    return value


def _apply(
    column: FittedColumn, codes: np.ndarray, keys: np.ndarray | None, direction: str
) -> np.ndarray:
    """Each row through its class's scale (or the all-rows one) in ``direction``."""
    shared = column.scales[ALL_ROWS]
    if keys is None:
        return np.asarray(getattr(shared, direction)(codes[:, None]), np.float64)[:, 0]
    out = np.empty(len(codes), dtype=np.float64)
    for key in set(keys.tolist()):
        rows = keys == key
        scale = column.scales.get(str(key), shared)
        out[rows] = np.asarray(getattr(scale, direction)(codes[rows][:, None]), np.float64)[:, 0]
    return out


def _values(
    column: FittedColumn, part: np.ndarray, keys: np.ndarray | None, gaps: np.ndarray | None
) -> pd.Series:
    """One column of the inverse, in its kind's dtype, gaps as NaN/NaT/<NA>."""
    if column.kind == "categorical":
        levels = np.empty(len(column.schema.levels or ()), dtype=object)
        levels[:] = list(column.schema.levels or ())
        values = pd.Series(levels[part.argmax(axis=1)], dtype=object)
        if gaps is not None:
            values[gaps] = None
        return values.infer_objects()
    low, high = column.low_high()
    numbers = _apply(column, part[:, 0], keys, "inverse")
    numbers = np.clip(_round(column.kind, np.clip(numbers, low, high), column.step), low, high)
    if column.kind == "integer":
        if gaps is None:
            return pd.Series(numbers.astype(np.int64))
        return pd.Series(pd.arrays.IntegerArray(numbers.astype(np.int64), gaps.copy()))
    if column.kind == "datetime":
        dates = from_seconds(numbers)
        return dates.mask(gaps) if gaps is not None else dates
    return pd.Series(np.where(gaps, np.nan, numbers) if gaps is not None else numbers)


def _require_finite(z: np.ndarray, name: str, source: str) -> None:
    finite = np.isfinite(z)
    if not finite.all():
        row = int(np.flatnonzero(~finite)[0])
        raise DataError(
            f"{source}: column {name} is non-finite after scaling in {int((~finite).sum())} of "
            f"{len(z)} row(s) (first at row {row + 1}: {short_number(z[row])}); fix or drop "
            f"the rows with extreme {name} values"
        )


def _column_dict(column: FittedColumn) -> dict[str, Any]:
    out: dict[str, Any] = {"schema": column.schema.to_dict(), "fill": column.fill}
    if column.kind != "categorical":
        out["scales"] = {key: scale.to_dict() for key, scale in column.scales.items()}
    if column.kind == "datetime":
        out["step"] = column.step
    return out
