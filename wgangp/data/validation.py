"""Schema validation: the one gate every table passes before training.

A GAN fed one NaN, inf or text cell produces NaN losses hours later, and one absurdly large cell
(a fill value such as 1e30, an overflowed export) sets its column's scale alone or overflows to inf;
here the same problem is one line naming the column, the count, the first row and the fix, before
anything is built.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from wgangp.data import schema
from wgangp.data.numbers import short_number
from wgangp.errors import DataError

_EXPECTED = "Time,V1..V28,Amount,Class as in Kaggle's creditcard.csv"
_MAX_SHOWN = 5


def validate_frame(
    df: pd.DataFrame, *, min_rows_per_class: int = 2, source: str = "data"
) -> pd.DataFrame:
    """Return ``df`` as a clean table: schema.COLUMNS in order, float64 features, int64 Class.

    Raises :class:`DataError` (one line, mentioning ``source``) at the first problem found.
    """
    if df.shape[1] == 0:
        raise DataError(f"{source}: no columns and no rows; expected the header {_EXPECTED}")
    df = df.rename(columns=lambda c: c.strip() if isinstance(c, str) else c)
    _check_columns(df, source)
    if len(df) == 0:
        raise DataError(f"{source}: no rows; the table needs a header and at least one data row")

    numeric = {column: _numeric_column(df[column], column, source) for column in schema.COLUMNS}
    _check_missing(numeric, source)
    _check_infinite(numeric, source)
    _check_magnitude(numeric, source)
    label = _label_column(numeric[schema.LABEL], source)
    _check_amount(numeric[schema.AMOUNT], source)
    _check_class_counts(label, min_rows_per_class, source)

    clean = pd.DataFrame(
        {column: numeric[column].to_numpy(np.float64) for column in schema.FEATURES}
    )
    clean[schema.LABEL] = label
    return clean


def _check_columns(df: pd.DataFrame, source: str) -> None:
    names = [str(column) for column in df.columns]
    duplicated = sorted({name for name in names if names.count(name) > 1})
    if duplicated:
        raise DataError(
            f"{source}: column(s) {_show(duplicated)} appear more than once in the header; keep "
            f"one of each, the header needs exactly the 31 columns {_EXPECTED}, in any order"
        )
    missing = [column for column in schema.COLUMNS if column not in names]
    extra = [name for name in names if name not in schema.COLUMNS]
    if not missing and not extra:
        return
    problems = []
    if missing:
        problems.append(f"missing {len(missing)} column(s) {_show(missing)}")
    if extra:
        problems.append(f"{len(extra)} unexpected column(s) {_show(extra)}")
    hint = " (renamed header?)" if missing and extra else ""
    raise DataError(
        f"{source}: {' and '.join(problems)}{hint}; "
        f"the header needs exactly the 31 columns {_EXPECTED}, in any order"
    )


def _numeric_column(values: pd.Series, column: str, source: str) -> pd.Series:
    """The column as float64; text cells that are not numbers are a DataError."""
    if pd.api.types.is_bool_dtype(values) or pd.api.types.is_numeric_dtype(values):
        return values.astype(np.float64).reset_index(drop=True)
    values = values.reset_index(drop=True)
    stripped = values.map(lambda v: v.strip() if isinstance(v, str) else v)
    numbers = pd.to_numeric(stripped, errors="coerce")
    bad = numbers.isna() & stripped.notna() & (stripped.astype("string") != "")
    if bad.any():
        first = int(np.flatnonzero(bad.to_numpy())[0])
        shown = _truncate(repr(values.iloc[first]))
        raise DataError(
            f"{source}: column {column} has {int(bad.sum())} non-numeric value(s) "
            f"(first at data row {first + 1}: {shown}); every cell must be a number"
        )
    return numbers.astype(np.float64)


def _check_missing(numeric: dict[str, pd.Series], source: str) -> None:
    counts = {column: int(values.isna().sum()) for column, values in numeric.items()}
    _raise_first(counts, "missing/NaN value(s)", source, numeric, np.isnan)


def _check_infinite(numeric: dict[str, pd.Series], source: str) -> None:
    counts = {column: int(np.isinf(values.to_numpy()).sum()) for column, values in numeric.items()}
    _raise_first(counts, "infinite value(s)", source, numeric, np.isinf)


def _check_magnitude(numeric: dict[str, pd.Series], source: str) -> None:
    """Finite but beyond any real value of the schema (Class has its own check)."""
    limit = schema.MAX_ABS_VALUE

    def huge(values: np.ndarray) -> np.ndarray:
        return np.abs(values) > limit

    counts = {column: int(huge(numeric[column].to_numpy()).sum()) for column in schema.FEATURES}
    _raise_first(
        counts,
        f"value(s) larger than {short_number(limit)} in magnitude",
        source,
        numeric,
        huge,
        fix="no real value of this schema comes near that size",
        show_value=True,
    )


def _raise_first(
    counts: dict[str, int],
    kind: str,
    source: str,
    numeric: dict[str, pd.Series],
    predicate: Callable[[np.ndarray], np.ndarray],
    *,
    fix: str = "every cell must be a finite number",
    show_value: bool = False,
) -> None:
    affected = [column for column, count in counts.items() if count]
    if not affected:
        return
    column = affected[0]
    values = numeric[column].to_numpy()
    first = int(np.flatnonzero(predicate(values))[0])
    shown = f": {short_number(values[first])}" if show_value else ""
    others = f"; {len(affected) - 1} other column(s) too" if len(affected) > 1 else ""
    raise DataError(
        f"{source}: column {column} has {counts[column]} {kind} "
        f"(first at data row {first + 1}{shown}){others}; fix or drop those rows, {fix}"
    )


def _label_column(values: pd.Series, source: str) -> np.ndarray:
    invalid = ~values.isin(schema.CLASSES)
    if invalid.any():
        examples = _show([short_number(v) for v in pd.unique(values[invalid])])
        raise DataError(
            f"{source}: column {schema.LABEL} has {int(invalid.sum())} value(s) outside {{0, 1}} "
            f"(e.g. {examples}); Class must be 0 (normal) or 1 (fraud)"
        )
    return values.to_numpy(np.int64)


def _check_amount(values: pd.Series, source: str) -> None:
    negative = values < 0
    if negative.any():
        raise DataError(
            f"{source}: column {schema.AMOUNT} has {int(negative.sum())} negative value(s) "
            f"(min {short_number(values.min())}); amounts must be >= 0"
        )


def _check_class_counts(label: np.ndarray, min_rows: int, source: str) -> None:
    for cls, name in zip(schema.CLASSES, ("normal", "fraud"), strict=True):
        count = int((label == cls).sum())
        if count < min_rows:
            raise DataError(
                f"{source}: only {count} row(s) of Class {cls} ({name}) in column "
                f"{schema.LABEL}; at least {min_rows} are needed, use a larger table"
            )


def _show(items: list) -> str:
    shown = ", ".join(_truncate(str(item)) for item in items[:_MAX_SHOWN])
    return shown + (f", ... (+{len(items) - _MAX_SHOWN})" if len(items) > _MAX_SHOWN else "")


def _truncate(text: str, limit: int = 40) -> str:
    text = text.replace("\n", "\\n").replace("\r", "\\r")
    return text if len(text) <= limit else text[: limit - 3] + "..."
