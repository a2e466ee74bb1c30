"""A table's features into the networks' space and back: invertible, finite, in bounds.

Each feature column becomes the blocks of :mod:`wgangp.data.transform.layout`. Numbers and datetimes
(as seconds since 1970) go through a scale of :mod:`wgangp.data.transform.scales` fitted on the
column's present training values, one per class with ``per_class`` (a rare class's marginals differ
from the others', as fraud's do: V14 of Kaggle's frauds is centred near -7); a categorical is its
one-hot; a nullable column's gaps are filled with its median (its most frequent level) and flagged
in its missing indicator, so NaN never reaches the networks.

The schema's options shape a number column (docs/schema.md): ``log`` models log1p of its values
(a long right tail, Kaggle's Amount), ``round`` is the step its generated values are rounded to
(cents), ``clip: false`` lets them leave the bounds (Kaggle's V1..V28, unbounded in the data too).
Bounds the schema does not give are fitted on the training rows and name no row (the means of the
few smallest and largest values, :func:`~wgangp.data.knots.private_range`).

**Point masses.** A value that at least ``min_rows`` training rows of a class share and that holds
at least 1% of them (:func:`~wgangp.data.knots.point_masses`: a rate from a lookup, a favourite
ratio, an amount of exactly 0, a cap, Kaggle's Amount of 1.00) makes its column go through its
quantiles, whatever the scaling: the inverse maps a whole interval of the networks' scale onto each
such value, so it comes back exactly, at its share, and between such values the column stays
continuous. ``preprocess.quantile_columns`` adds columns without point masses;
``preprocess.point_masses=false`` turns the rule off. ``scaling=none`` keeps raw units (no log,
no quantiles: the original failing setup the ablation reproduces).

The inverse promises a user of the generated rows what the schema says: every category one of the
column's levels, integers whole, values on their rounding step and (unless ``clip: false``) within
the bounds, datetimes as datetimes, gaps wherever an indicator exceeds 0.5. Stored as JSON,
checked on load (:mod:`wgangp.data.transform.stored`).
"""

from __future__ import annotations

import difflib
import json
import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, NoReturn

import numpy as np
import pandas as pd

from wgangp.config import SCALINGS
from wgangp.data.entities import entity_count
from wgangp.data.numbers import MAX_ABS_VALUE, short_number
from wgangp.data.schema.column_codes import column_codes, from_seconds
from wgangp.data.schema.table_schema import CLASSES, TableSchema
from wgangp.data.transform.fitted_column import ALL_ROWS, FittedColumn, fit_column, on_step
from wgangp.data.transform.layout import Block, layout_width, table_layout
from wgangp.data.transform.private_column import PrivateFit, fit_private_column
from wgangp.data.transform.scales import DEFAULT_MIN_ROWS
from wgangp.data.transform.stored import FORMAT, checked_parts, parsed_json
from wgangp.errors import ConfigError, DataError, NonFiniteError

log = logging.getLogger("wgangp.data")

#: The largest log1p a log column's inverse takes (beyond, expm1 leaves every real value).
_MAX_LOG = float(np.log1p(MAX_ABS_VALUE))

Classes = np.ndarray | int | None
#: Each class's scale key and a mask of its rows (``TableTransform._class_rows``).
ClassRows = list[tuple[str, np.ndarray]]


class TableTransform:
    """Fitted on a table's training rows and schema; maps its features both ways (module doc)."""

    def __init__(
        self,
        columns: Sequence[FittedColumn],
        scaling: str = "standard",
        per_class: bool = True,
        quantile_columns: Sequence[str] = (),
    ) -> None:
        self.columns = tuple(columns)
        self.scaling, self.per_class = scaling, per_class
        #: The number columns mapped through their quantiles (point masses, or asked for).
        self.quantile_columns = tuple(quantile_columns)
        self.layout: tuple[Block, ...] = table_layout(column.schema for column in self.columns)
        self.width = layout_width(self.layout)

    @property
    def raw(self) -> bool:
        """``scaling=none``: every number as it is in the table."""
        return self.scaling == "none"

    @classmethod
    def fit(
        cls,
        frame: pd.DataFrame,
        schema: TableSchema,
        classes: np.ndarray,
        *,
        scaling: str = "standard",
        per_class: bool = True,
        point_masses: bool = True,
        quantile_columns: Sequence[str] = (),
        source: str = "training rows",
        min_rows: int = DEFAULT_MIN_ROWS,
        entities: np.ndarray | None = None,
        dp: PrivateFit | None = None,
    ) -> TableTransform:
        """Fit on ``frame`` (the training rows) whose rows are of ``classes`` (0/1) and held by
        ``entities`` (each row's entity code, :mod:`wgangp.data.entities`; None: each row its
        own); DataError in one line. ``point_masses`` false: no column goes through its
        quantiles for its point masses (``preprocess.point_masses``). Every stored number from
        the rows (quantile knots, fitted bounds, fills) is no entity's own: a mean over >=
        ``min_rows`` entities or a value that many hold (``ship.min_atom_rows``,
        docs/privacy.md)."""
        check_options(schema, scaling, quantile_columns)
        for column in schema.features:
            if column.name not in frame:
                _absent(column.name, source)
        classes = np.asarray(classes)
        if dp is not None:
            return cls._fit_private(frame, schema, classes, entities, dp, source)
        for c in CLASSES:
            of_class = classes == c
            held = entity_count(None if entities is None else entities[of_class], of_class.sum())
            if held < 2 * min_rows:
                what = "row(s)" if entities is None else "entities"
                log.warning(
                    "%s: %d %s of class %s are fewer than 2 x %d: its quantile tables are "
                    "its mean -/+ sqrt(3) sd, which so few rows can reveal",
                    source, held, what, schema.class_names[c], min_rows,
                )  # fmt: skip
        fitted = [
            fit_column(
                frame[column.name],
                column,
                classes,
                scaling=scaling,
                per_class=per_class,
                by_point_masses=point_masses,
                quantile=column.name in quantile_columns,
                source=source,
                min_rows=min_rows,
                entities=entities,
            )
            for column in schema.features
        ]
        quantiles = [column.name for column in fitted if column.quantile]
        return cls(fitted, scaling=scaling, per_class=per_class, quantile_columns=quantiles)

    @classmethod
    def _fit_private(
        cls,
        frame: pd.DataFrame,
        schema: TableSchema,
        classes: np.ndarray,
        entities: np.ndarray | None,
        dp: PrivateFit,
        source: str,
    ) -> TableTransform:
        """Every column released under DP (:mod:`.private_column`): quantile scales (per class as
        ``dp.per_class`` says), whatever the scaling options say; the releases' events go
        to ``dp.events``."""
        owners = np.arange(len(frame)) if entities is None else np.asarray(entities)
        fitted = []
        for column in schema.features:
            # A column released as never empty may keep a few gaps, filled after this fit with
            # its released fill (wgangp.data.private_table): fitted on its present cells.
            column_fit, events = fit_private_column(
                frame[column.name],
                replace(column, nullable=True),
                classes,
                owners,
                noise_multiplier=dp.noise_multiplier,
                rng=dp.rng,
                source=source,
                per_class=dp.per_class,
            )
            column_fit.schema = replace(column_fit.schema, nullable=column.nullable)
            fitted.append(column_fit)
            dp.events.extend(events)
        quantiles = [column.name for column in fitted if column.quantile]
        return cls(fitted, scaling="quantile", per_class=dp.per_class, quantile_columns=quantiles)

    def transform(
        self, frame: pd.DataFrame, classes: Classes = None, source: str = "rows"
    ) -> np.ndarray:
        """Features of ``frame`` (rows of ``classes``: an array of 0/1, or one class for all)
        -> float32 (rows, width), finite; gaps filled and flagged."""
        groups = self._class_rows(classes, len(frame))
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
                z = _apply(column, self._model_units(column, codes), groups, "forward")
                z = z.astype(np.float32)
                _require_finite(z, column.name, source)
                out[:, block.start] = z
            if column.schema.nullable:
                out[:, next(blocks).start] = gaps
        return out

    def inverse(self, x: np.ndarray, classes: Classes = None) -> pd.DataFrame:
        """Network outputs of rows of ``classes`` -> the features in the table's names and dtypes,
        on their steps and in bounds (module doc)."""
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
        groups = self._class_rows(classes, len(x))
        data: dict[str, Any] = {}
        blocks = iter(self.layout)
        for column in self.columns:
            block = next(blocks)
            part = x[:, block.start : block.stop]
            gaps = None
            if column.schema.nullable:
                indicator = next(blocks)
                gaps = x[:, indicator.start] > 0.5
            data[column.name] = self._values(column, part, groups, gaps)
        return pd.DataFrame(data, index=pd.RangeIndex(len(x)))

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
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

    def _class_rows(self, classes: Classes, rows: int) -> ClassRows | None:
        """Each class's scale key ('0', '1') and its rows, found once for every column; None
        when the scales are shared."""
        if not self.per_class:
            return None
        if classes is None:
            raise ValueError("a per-class transform needs the rows' classes")
        keys = np.broadcast_to(np.asarray(classes), (rows,))
        if not np.isin(keys, CLASSES).all():
            raise ValueError(f"classes must be 0 or 1, got {sorted(set(keys.tolist()))[:5]}")
        return [(str(c), mask) for c in CLASSES if (mask := keys == c).any()]

    def _model_units(self, column: FittedColumn, codes: np.ndarray) -> np.ndarray:
        """A column's values as its scales see them: log1p for a ``log`` column on a non-
        quantile scale (quantiles are the same on either side of a monotone map)."""
        if column.schema.log and not self.raw and not column.quantile:
            return np.log1p(np.clip(codes, 0.0, None))
        return codes

    def _values(
        self,
        column: FittedColumn,
        part: np.ndarray,
        groups: ClassRows | None,
        gaps: np.ndarray | None,
    ) -> pd.Series:
        """One column of the inverse, in its kind's dtype, gaps as NaN/NaT/<NA>."""
        if column.kind == "categorical":
            levels = np.empty(len(column.schema.levels or ()), dtype=object)
            levels[:] = list(column.schema.levels or ())
            values = pd.Series(levels[part.argmax(axis=1)], dtype=object)
            if gaps is not None:
                values[gaps] = None
                if column.schema.value_type == "boolean":  # True, False and <NA>, not objects
                    return values.astype("boolean")
            return values.infer_objects()
        numbers = _apply(column, part[:, 0], groups, "inverse")
        numbers = _shaped(
            column, numbers, logged=column.schema.log and not self.raw and not column.quantile
        )
        if column.kind == "integer":
            if gaps is None:
                return pd.Series(numbers.astype(np.int64))
            return pd.Series(pd.arrays.IntegerArray(numbers.astype(np.int64), gaps.copy()))
        if column.kind == "datetime":  # in the column's zone: the table's wall-clock times
            dates = from_seconds(numbers, column.schema.zone)
            return dates.mask(gaps) if gaps is not None else dates
        return pd.Series(np.where(gaps, np.nan, numbers) if gaps is not None else numbers)


def check_options(schema: TableSchema, scaling: str, quantile_columns: Sequence[str]) -> None:
    """``preprocess.scaling`` and ``preprocess.quantile_columns`` on this table: each quantile
    column one of its number or date columns (a close name suggested)."""
    if scaling not in SCALINGS:
        raise ConfigError(f"scaling {scaling!r} is unknown; use one of {', '.join(SCALINGS)}")
    scaled = [c.name for c in schema.features if c.kind != "categorical"]
    for name in quantile_columns:
        if name not in scaled:
            close = difflib.get_close_matches(name, scaled, n=1)
            listed = f"its number columns: {', '.join(scaled) or '(none)'}"
            fix = f"did you mean {close[0]!r}?" if close else listed
            raise ConfigError(
                f"invalid config value preprocess.quantile_columns: {name!r} is not a number "
                f"column of the table; {fix}"
            )


def _shaped(column: FittedColumn, numbers: np.ndarray, *, logged: bool) -> np.ndarray:
    """Inverse-scaled numbers in the column's units: out of log1p, into the bounds (``clip``),
    on the step, finite."""
    low, high = column.generated_bounds()
    clip = column.schema.clip
    if logged:
        top = float(np.log1p(max(high, 0.0))) if clip else _MAX_LOG
        numbers = np.expm1(np.clip(numbers, 0.0, top))
    if clip:
        numbers = np.clip(numbers, low, high)
    else:
        numbers = np.clip(numbers, -MAX_ABS_VALUE, MAX_ABS_VALUE)
    numbers = on_step(column, numbers)
    return np.clip(numbers, low, high) if clip else numbers


def _apply(
    column: FittedColumn, codes: np.ndarray, groups: ClassRows | None, direction: str
) -> np.ndarray:
    """Each row through its class's scale (or the all-rows one) in ``direction``."""
    shared = column.scales[ALL_ROWS]
    if groups is None:
        return np.asarray(getattr(shared, direction)(codes[:, None]), np.float64)[:, 0]
    out = np.empty(len(codes), dtype=np.float64)
    for key, rows in groups:
        scale = column.scales.get(key, shared)
        out[rows] = np.asarray(getattr(scale, direction)(codes[rows][:, None]), np.float64)[:, 0]
    return out


def _absent(name: str, source: str) -> NoReturn:
    raise DataError(f"{source}: column {name} of the schema is not in the rows; fix the header")


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
