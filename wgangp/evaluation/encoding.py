"""One encoding of a table's rows for every evaluation metric: a finite float matrix per frame.

The evaluation's classifiers, distances and baselines work on numbers, but a user's table holds
integers, categories and gaps. :class:`TableEncoding` is fitted on real TRAINING rows (never on
test or generated rows) and turns a frame of the table's features into two matrices:

- :meth:`~TableEncoding.model_matrix`: what classifiers and the SMOTE and copula baselines see.
  Numbers (continuous, integer, datetime as seconds) in their own units with each gap filled by
  the training median, then a 0/1 missing indicator per nullable column, then a 0/1 one-hot block
  per categorical column. :meth:`~TableEncoding.decode` maps such a matrix back to valid rows.
- :meth:`~TableEncoding.distance_matrix`: a mixed-type (Gower-like) space for nearest-record
  distances. Numbers standardized by the training rows' mean and standard deviation (of the filled
  values; a constant column gets scale 1); one-hot columns and the indicators of categorical
  columns scaled by 1/sqrt(2), so two rows whose category differs (a level against another
  level, or against a gap) are exactly 1 apart on that column, like one standard deviation of a
  number; a numeric gap adds 1 through its indicator.

Kaggle's credit-card table (30 continuous columns, no gaps) encodes to exactly the arrays the
evaluation used before tables had schemas: the features in file order as float64, standardized
with the same arithmetic.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from wgangp.data.schema.column_codes import bound_seconds, to_seconds
from wgangp.data.schema.table_schema import ColumnSchema, TableSchema

#: Weight of a one-hot (or categorical gap indicator) column in the distance space.
ONE_HOT_SCALE = 1.0 / math.sqrt(2.0)
NUMBER_KINDS = ("continuous", "integer", "datetime")


def seconds(values: pd.Series) -> np.ndarray:
    """A datetime column as float seconds since 1970 UTC (gaps as NaN), by the rule the
    networks and the schema's bounds use (:func:`~wgangp.data.schema.column_codes.to_seconds`);
    numbers pass through."""
    if pd.api.types.is_datetime64_any_dtype(values):
        return to_seconds(values)
    return pd.to_numeric(values).to_numpy(np.float64)


def level_codes(values: pd.Series, column: ColumnSchema) -> np.ndarray:
    """Each value's index in the column's levels; -1 for a gap or a value that is no level."""
    return pd.Categorical(values, categories=list(column.levels or ())).codes.astype(np.int64)


class TableEncoding:
    """The matrices of one table's features, fitted on real training rows (module doc)."""

    def __init__(self, schema: TableSchema, reference: pd.DataFrame) -> None:
        self.schema = schema
        features = schema.features
        self.numbers = [c for c in features if c.kind in NUMBER_KINDS]
        self.categoricals = [c for c in features if c.kind == "categorical"]
        self.nullable = [c for c in features if c.nullable]
        raw = self._raw_numbers(reference)
        self.medians = np.array([_median(raw[:, j]) for j in range(raw.shape[1])])
        filled = self._fill(raw)
        self.mean = filled.mean(axis=0)
        scale = filled.std(axis=0)
        scale[~(scale > 0)] = 1.0
        self.scale = scale

    @property
    def has_gaps_or_categories(self) -> bool:
        return bool(self.categoricals or self.nullable)

    def _raw_numbers(self, frame: pd.DataFrame) -> np.ndarray:
        if all(c.kind != "datetime" for c in self.numbers):
            return frame.loc[:, [c.name for c in self.numbers]].to_numpy(dtype=np.float64)
        columns = [seconds(frame[c.name]) for c in self.numbers]
        return np.column_stack(columns) if columns else np.empty((len(frame), 0))

    def _fill(self, raw: np.ndarray) -> np.ndarray:
        if not np.isnan(raw).any():
            return raw
        return np.where(np.isnan(raw), self.medians, raw)

    def number_matrix(self, frame: pd.DataFrame) -> np.ndarray:
        """The numeric columns in their own units, gaps filled with the training median."""
        return self._fill(self._raw_numbers(frame))

    def indicators(self, frame: pd.DataFrame) -> np.ndarray:
        """1.0 where a nullable column has a gap, one column per nullable column."""
        columns = [frame[c.name].isna().to_numpy(np.float64) for c in self.nullable]
        return np.column_stack(columns) if columns else np.empty((len(frame), 0))

    def codes(self, frame: pd.DataFrame) -> np.ndarray:
        """Level codes of the categorical columns (-1: gap)."""
        columns = [level_codes(frame[c.name], c) for c in self.categoricals]
        return np.column_stack(columns) if columns else np.empty((len(frame), 0), np.int64)

    def one_hot(self, frame: pd.DataFrame) -> np.ndarray:
        """0/1 columns, one per level of each categorical column (a gap: all zero)."""
        blocks = []
        for column, codes in zip(self.categoricals, self.codes(frame).T, strict=True):
            block = np.zeros((len(frame), len(column.levels or ())))
            rows = np.flatnonzero(codes >= 0)
            block[rows, codes[rows]] = 1.0
            blocks.append(block)
        return np.hstack(blocks) if blocks else np.empty((len(frame), 0))

    def model_matrix(self, frame: pd.DataFrame) -> np.ndarray:
        """Numbers in their units, missing indicators, one-hot columns (module doc)."""
        numbers = self.number_matrix(frame)
        if not self.has_gaps_or_categories:
            return numbers
        return np.hstack([numbers, self.indicators(frame), self.one_hot(frame)])

    def discrete_columns(self) -> np.ndarray:
        """Which :meth:`model_matrix` columns hold whole numbers only: integers, indicators and
        one-hot columns."""
        numbers = [c.kind == "integer" for c in self.numbers]
        if not self.has_gaps_or_categories:
            return np.array(numbers, dtype=bool)
        width = sum(len(c.levels or ()) for c in self.categoricals)
        return np.array(numbers + [True] * (len(self.nullable) + width), dtype=bool)

    def distance_matrix(self, frame: pd.DataFrame) -> np.ndarray:
        """The mixed-type distance space: a category mismatch counts 1 (module doc)."""
        numbers = (self.number_matrix(frame) - self.mean) / self.scale
        if not self.has_gaps_or_categories:
            return numbers
        weights = np.array(
            [ONE_HOT_SCALE if c.kind == "categorical" else 1.0 for c in self.nullable]
        )
        return np.hstack(
            [numbers, self.indicators(frame) * weights, self.one_hot(frame) * ONE_HOT_SCALE]
        )

    def decode(self, matrix: np.ndarray) -> pd.DataFrame:
        """Rows of the table from a :meth:`model_matrix`-shaped matrix (a baseline's draws):
        integers rounded, numbers clipped to the schema's bounds, a gap where the indicator is
        above 0.5, each category the level of its largest one-hot score."""
        matrix = np.asarray(matrix, dtype=np.float64)
        n_numbers, n_gaps = len(self.numbers), len(self.nullable)
        gaps = {c.name: matrix[:, n_numbers + i] > 0.5 for i, c in enumerate(self.nullable)}
        out: dict[str, object] = {}
        for j, column in enumerate(self.numbers):
            out[column.name] = self._decode_number(column, matrix[:, j], gaps.get(column.name))
        start = n_numbers + n_gaps
        for column in self.categoricals:
            width = len(column.levels or ())
            chosen = np.argmax(matrix[:, start : start + width], axis=1)
            levels = np.empty(width, dtype=object)
            levels[:] = list(column.levels or ())
            values = levels[chosen]
            if column.name in gaps:
                values = values.copy()
                values[gaps[column.name]] = np.nan
            out[column.name] = values
            start += width
        return pd.DataFrame(out).loc[:, [c.name for c in self.schema.features]]

    def _decode_number(
        self, column: ColumnSchema, values: np.ndarray, gap: np.ndarray | None
    ) -> pd.Series:
        values = values.copy()
        if column.kind != "continuous":
            values = np.round(values)
        if column.bounds is not None:
            if column.kind == "datetime":
                low, high = (bound_seconds(b) for b in column.bounds)
            else:
                low, high = (float(b) for b in column.bounds)
            values = np.clip(values, low, high)
        if gap is not None and gap.any():
            values[gap] = np.nan
        if column.kind == "datetime":
            dates = pd.Series(pd.to_datetime(values, unit="s"))
            return dates.dt.tz_localize("UTC").dt.tz_convert(column.zone) if column.zone else dates
        if column.kind == "integer" and not np.isnan(values).any():
            return pd.Series(values.astype(np.int64))
        return pd.Series(values)


def _median(values: np.ndarray) -> float:
    """The median of the values present (0 for a column with none)."""
    present = values[~np.isnan(values)]
    return float(np.median(present)) if len(present) else 0.0
