"""One column's cells read as numbers, dates or levels, with the table checks' one-line wording.

Schema inference and checking a table against an edited schema read cells the same way: empty
text is a missing cell, numbers may arrive as text, and a non-finite or absurdly large number is
refused as :mod:`wgangp.data.validation` refuses it in the credit-card table.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from wgangp.data.numbers import MAX_ABS_VALUE, short_number
from wgangp.errors import DataError


def present(values: pd.Series) -> pd.Series:
    """The non-missing cells (blank text counts as missing), text stripped, positions kept."""
    values = values.reset_index(drop=True)
    if not (pd.api.types.is_object_dtype(values) or pd.api.types.is_string_dtype(values)):
        return values.dropna()
    stripped = values.map(lambda v: v.strip() if isinstance(v, str) else v)
    blank = stripped.map(lambda v: isinstance(v, str) and v == "")
    return stripped[~blank].dropna()


def as_numbers(cells: pd.Series) -> pd.Series:
    """``cells`` as float64; NaN where a cell is no number (booleans are no numbers here)."""
    if pd.api.types.is_bool_dtype(cells):
        return pd.Series(np.nan, index=cells.index)
    if pd.api.types.is_numeric_dtype(cells):
        return cells.astype(np.float64)
    flags = cells.map(lambda v: isinstance(v, bool | np.bool_))
    numbers = pd.to_numeric(cells.where(~flags), errors="coerce").astype(np.float64)
    return numbers


def as_dates(cells: pd.Series) -> pd.Series | None:
    """``cells`` as timestamps when every one is a date or time written with digits, else None."""
    if pd.api.types.is_datetime64_any_dtype(cells):
        return cells
    if not cells.map(lambda v: isinstance(v, str) and any(ch.isdigit() for ch in v)).all():
        return None
    unique = pd.Series(pd.unique(cells))
    for fmt in ("ISO8601", "mixed"):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                parsed = pd.to_datetime(unique, format=fmt, errors="coerce")
        except (ValueError, TypeError, OverflowError):
            continue
        if parsed.notna().all():
            lookup = dict(zip(unique, parsed, strict=True))
            return cells.map(lookup)
    return None


def check_finite(numbers: pd.Series, name: str, source: str) -> None:
    """Refuse inf and beyond-any-real-value numbers as the credit-card validation does."""
    array = numbers.to_numpy(np.float64)
    infinite = np.isinf(array)
    if infinite.any():
        raise DataError(
            f"{source}: column {name} has {int(infinite.sum())} infinite value(s) (first at data "
            f"row {_row(numbers, infinite)}); fix or drop those rows, every cell must be a finite "
            "number"
        )
    huge = np.abs(np.nan_to_num(array)) > MAX_ABS_VALUE
    if huge.any():
        first = array[int(np.flatnonzero(huge)[0])]
        raise DataError(
            f"{source}: column {name} has {int(huge.sum())} value(s) larger than "
            f"{short_number(MAX_ABS_VALUE)} in magnitude (first at data row "
            f"{_row(numbers, huge)}: {short_number(first)}); fix or drop those rows, no real value "
            "of a table comes near that size"
        )


def first_row(cells: pd.Series, mask: pd.Series | np.ndarray) -> int:
    """The 1-based data row of the first cell where ``mask`` holds."""
    return _row(cells, np.asarray(mask, dtype=bool))


def first_gap_row(values: pd.Series, cells: pd.Series) -> int:
    """The 1-based data row of ``values``' first empty cell (``cells``: its present ones)."""
    rows = values.reset_index(drop=True)
    return first_row(rows, ~rows.index.isin(cells.index))


def checked_numbers(
    cells: pd.Series, name: str, kind: str, source: str, advice: str = ""
) -> pd.Series:
    """A number column's present cells as finite floats; a text cell or an inf is one line."""
    numbers = as_numbers(cells)
    text = numbers.isna()
    if text.any():
        raise DataError(
            f"{source}: column {name} has {int(text.sum())} non-numeric value(s) (first at "
            f"data row {first_row(cells, text)}: {_truncate(repr(str(cells[text].iloc[0])))}); "
            "every "
            f"cell of a {kind} column must be a number{advice}"
        )
    check_finite(numbers, name, source)
    return numbers


def native(value: Any) -> Any:
    """A numpy/pandas scalar as the plain Python value YAML writes (int, float, bool, str)."""
    if isinstance(value, np.generic):
        value = value.item()
    return value


def shown(values: list, limit: int = 5) -> str:
    """A short list for a one-line message: ``a, b, c, ... (+12)``."""
    items = [_truncate(_text(native(v))) for v in values[:limit]]
    more = f", ... (+{len(values) - limit})" if len(values) > limit else ""
    return ", ".join(items) + more


def _text(value: Any) -> str:
    """A value as a person wrote it: a whole float read from a column with gaps (2.0) as 2."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _row(cells: pd.Series, mask: np.ndarray) -> int:
    return int(cells.index[int(np.flatnonzero(mask)[0])]) + 1


def _truncate(text: str, limit: int = 40) -> str:
    text = text.replace("\n", "\\n").replace("\r", "\\r")
    return text if len(text) <= limit else text[: limit - 3] + "..."
