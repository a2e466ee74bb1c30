"""A column's present cells as the identifier rules read them: each row's value code, the rows
of each value, the first values as text.

Whole numbers (as numbers, or text every value of which reads as one) are one reading, text the
other; booleans, dates (columns or text), fractions and empty columns are never identifiers, so
they are not read at all.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from wgangp.data.schema.cells import as_numbers
from wgangp.data.schema.text_formats import (
    number_format,
    number_like_example,
    parse_numbers,
    read_dates,
)

#: The distinct values (the first ones) whose formats are read, whatever the table's size.
SAMPLE = 2000


@dataclass(frozen=True)
class ColumnValues:
    """One column's present cells: whole numbers or text, each row's value code (-1: empty)."""

    integer: bool
    codes: np.ndarray
    counts: np.ndarray  # rows per value
    sample: list[str]  # the first SAMPLE distinct values as text (integers: their digits)
    #: Numbers written in a format no reader takes (``1.234,50``): the schema review asks for
    #: them to be rewritten, so only their content can make them an identifier.
    number_like: bool = False


def column_values(series: pd.Series) -> ColumnValues | None:
    """The column's present cells (text stripped, blanks empty), or None when it can never be an
    identifier: no cells, booleans, datetimes, numbers with fractions, text that reads as dates."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        series = series.astype(object)
    if pd.api.types.is_bool_dtype(series):
        return None
    if pd.api.types.is_integer_dtype(series) or pd.api.types.is_float_dtype(series):
        values = series.to_numpy()
        if pd.api.types.is_float_dtype(series):
            values = values[~np.isnan(values)]
            if not np.isfinite(values).all() or (values % 1 != 0).any():
                return None
        codes, uniques = pd.factorize(series)
        return _made(True, codes, len(uniques), [str(int(u)) for u in uniques[:SAMPLE]])
    if not (pd.api.types.is_object_dtype(series) or pd.api.types.is_string_dtype(series)):
        return None
    text = series.astype("str").str.strip()  # pandas' str dtype: vectorized, gaps kept
    codes, uniques = pd.factorize(text.where(text != ""))
    values = pd.Series(uniques)
    if values.empty:
        return None
    sample = [str(v) for v in values.iloc[:SAMPLE]]
    numbers = _numbers(values)
    if numbers is not None:
        if not np.isfinite(numbers).all() or (numbers % 1 != 0).any():
            return None
        digits = [t if t.isdigit() else str(int(n)) for t, n in zip(sample, numbers, strict=False)]
        return _made(True, codes, len(values), digits)
    if read_dates(values.iloc[:SAMPLE]) is not None and read_dates(values) is not None:
        return None
    number_like = number_like_example(values.iloc[:SAMPLE]) is not None
    return _made(False, codes, len(values), sample, number_like)


def _made(
    integer: bool, codes: np.ndarray, values: int, sample: list[str], number_like: bool = False
) -> ColumnValues | None:
    codes = codes.astype(np.int32 if len(codes) < 2**31 else np.int64)
    counts = np.bincount(codes[codes >= 0], minlength=values)
    return ColumnValues(integer, codes, counts, sample, number_like) if counts.sum() else None


def _numbers(values: pd.Series) -> np.ndarray | None:
    """Distinct text ``values`` as numbers when every one reads as a number (plain, or in the one
    number format schema inference reads, ``$1,234.5``); else None. The sample decides first."""
    head = values.iloc[:SAMPLE]
    if not (as_numbers(head).notna().all() or number_format(head)):
        return None
    numbers = as_numbers(values)
    if numbers.notna().all():
        return numbers.to_numpy(np.float64)
    fmt = number_format(values)
    return None if fmt is None else parse_numbers(values, fmt).to_numpy(np.float64)
