"""A table's rows as one numeric matrix and back, for the baselines that need numbers.

SMOTE-NC, the copula and CTGAN see each categorical column as an integer code (one code more for
a gap), each number as itself with gaps filled by the training median plus a 0/1 gap column, each
datetime as seconds. Decoding rounds codes to valid levels, integers to whole numbers, clips
numbers to the column's bounds, and turns a gap column's 1 back into NaN: every baseline's rows
come back in the run's form (the table's names, levels and gaps).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from wgangp.data.schema.table_schema import ColumnSchema, TableSchema

GAP_SUFFIX = "__gap"


@dataclass(frozen=True)
class CodedColumn:
    """How one column is coded: a categorical's levels, a number's fill value, a gap column."""

    column: ColumnSchema
    fill: float
    low: float
    high: float
    has_gap: bool

    @property
    def discrete(self) -> bool:
        return self.column.kind == "categorical"

    @property
    def levels(self) -> tuple:
        return self.column.levels or ()


@dataclass(frozen=True)
class TableCodes:
    """The coding of a table's features, fitted on its real training rows."""

    columns: tuple[CodedColumn, ...]

    @classmethod
    def fit(cls, table: TableSchema, rows: pd.DataFrame) -> TableCodes:
        coded = []
        for column in table.features:
            values = rows[column.name]
            has_gap = bool(column.nullable or values.isna().any())
            if column.kind == "categorical":
                coded.append(
                    CodedColumn(column, 0.0, 0.0, float(len(column.levels or ())), has_gap)
                )
                continue
            numbers = _numbers(values, column)
            seen = numbers[np.isfinite(numbers)]
            fill = float(np.median(seen)) if len(seen) else 0.0
            low, high = (float(seen.min()), float(seen.max())) if len(seen) else (0.0, 0.0)
            coded.append(CodedColumn(column, fill, low, high, has_gap))
        return cls(tuple(coded))

    @property
    def names(self) -> list[str]:
        out = []
        for coded in self.columns:
            out.append(coded.column.name)
            if coded.has_gap and not coded.discrete:
                out.append(coded.column.name + GAP_SUFFIX)
        return out

    @property
    def discrete(self) -> list[str]:
        """The coded columns that hold codes (categoricals and gap columns)."""
        out = []
        for coded in self.columns:
            if coded.discrete:
                out.append(coded.column.name)
            elif coded.has_gap:
                out.append(coded.column.name + GAP_SUFFIX)
        return out

    def encode(self, rows: pd.DataFrame) -> np.ndarray:
        parts = []
        for coded in self.columns:
            values = rows[coded.column.name]
            if coded.discrete:
                lookup = {level: i for i, level in enumerate(coded.levels)}
                codes = values.map(lambda v, lookup=lookup: lookup.get(v, len(lookup)))
                parts.append(codes.to_numpy(np.float64))
                continue
            numbers = _numbers(values, coded.column)
            gap = ~np.isfinite(numbers)
            parts.append(np.where(gap, coded.fill, numbers))
            if coded.has_gap:
                parts.append(gap.astype(np.float64))
        return np.column_stack(parts) if parts else np.zeros((len(rows), 0))

    def decode(self, matrix: np.ndarray) -> pd.DataFrame:
        out: dict[str, object] = {}
        at = 0
        for coded in self.columns:
            column = coded.column
            values = np.asarray(matrix[:, at], np.float64)
            at += 1
            if coded.discrete:
                top = len(coded.levels) if coded.has_gap else len(coded.levels) - 1
                codes = np.clip(np.rint(np.nan_to_num(values)), 0, top).astype(int)
                levels = np.array([*coded.levels, np.nan], dtype=object)
                out[column.name] = levels[codes]
                continue
            values = np.clip(values, coded.low, coded.high)
            if column.kind == "integer":
                values = np.rint(values)
            if coded.has_gap:
                values = np.where(matrix[:, at] >= 0.5, np.nan, values)
                at += 1
            out[column.name] = _from_numbers(values, column)
        return pd.DataFrame(out)


def _numbers(values: pd.Series, column: ColumnSchema) -> np.ndarray:
    if column.kind == "datetime":
        stamps = pd.to_datetime(values, errors="coerce")
        seconds = stamps.astype("int64").to_numpy(np.float64) / 1e9
        return np.where(stamps.isna().to_numpy(), np.nan, seconds)
    return pd.to_numeric(values, errors="coerce").to_numpy(np.float64)


def _from_numbers(values: np.ndarray, column: ColumnSchema) -> pd.Series | np.ndarray:
    if column.kind == "datetime":
        return pd.to_datetime(values, unit="s")
    return values
