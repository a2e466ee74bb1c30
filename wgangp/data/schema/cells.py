"""One column's cells read as numbers, dates or levels, with the table checks' one-line wording.

Schema inference and checking a table against an edited schema read cells the same way: empty
text is a missing cell, numbers may arrive as text, and a non-finite or absurdly large number is
refused as :mod:`wgangp.data.schema.validation` refuses it in the credit-card table. What a label
cell is (:func:`label_value`), the class to synthesize among a label's values
(:func:`choose_positive`) and which level a cell names (:class:`LevelLookup`) are decided here
once, for the reader, inference, validation, the schema's own checks and serving alike; every
lookup is constant time, so a header of 40,000 names or a column of 100,000 levels is checked in
one pass."""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Hashable, Iterable
from typing import Any

import numpy as np
import pandas as pd

from wgangp.data.numbers import MAX_ABS_VALUE, short_number
from wgangp.data.schema.text_formats import parse_dates, parse_numbers, read_dates
from wgangp.errors import DataError

#: A label value or a categorical level, as YAML holds it.
Value = str | int | float | bool


def repeated_names(names: Iterable[Hashable]) -> list:
    """The names that occur more than once, sorted (one pass: a header of 40,000 names is
    checked as fast as one of 40); every duplicate check of a header or a list uses it."""
    counts = Counter(names)
    return sorted(name for name, count in counts.items() if count > 1)


def label_value(value: object) -> Value:
    """What a label cell, or a label value a person names, is: the one rule. Numpy and pandas
    scalars are plain values; a whole float is the integer (a CSV's ``1.0``, or a label column
    read as floats because of gaps); text that reads as a finite number is that number (a CSV's
    ``1`` as DuckDB casts it, ``label=1.0``, ``data.positive=1``); other text stays text."""
    value = native(value)
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return value
        if not np.isfinite(number):
            return value
        value = number
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value  # type: ignore[return-value]  # native() gives plain scalars; typed object


def cell_value(value: object) -> Value:
    """A categorical feature's cell as its level is written: the label rule, except that text
    stays text whatever it reads as (a code ``007`` is not the number 7)."""
    value = native(value)
    return value if isinstance(value, str) else label_value(value)


def distinct_values(cells: pd.Series, label: bool = True) -> tuple[Value, ...]:
    """Distinct values as plain Python values (a label's by :func:`label_value`, a feature's
    text kept as text: :func:`cell_value`): numbers in numeric order, the rest by text."""
    value = label_value if label else cell_value
    unique = list(dict.fromkeys(value(v) for v in pd.unique(cells)))
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in unique):
        return tuple(sorted(unique))
    return tuple(sorted(unique, key=lambda v: (type(v).__name__ != "str", str(v))))


def choose_positive(
    counts: dict[Value, int], label: str, positive: Value | None, source: str
) -> Value:
    """The class to synthesize among a label's value counts (inference's, or the big tables'
    reader's): ``positive``, or the least frequent value; each refusal one line."""
    order = distinct_values(pd.Series(list(counts), dtype=object))
    return _positive(tuple((v, counts[v]) for v in order), label, positive, source)


def _positive(
    counts: tuple[tuple[Value, int], ...], label: str, positive: Value | None, source: str
) -> Value:
    values = tuple(value for value, _ in counts)
    listed = ", ".join(f"{value}: {count}" for value, count in counts[:5])
    if len(counts) > 5:
        listed += f", ... (+{len(counts) - 5})"
    if len(counts) == 1:
        raise DataError(
            f"{source}: label {label} has one value ({values[0]}) in every row; the table needs "
            "rows of at least two classes"
        )
    if positive is not None:
        found = find_value(values, positive)
        if found is None:
            raise DataError(
                f"{source}: data.positive={positive} is not a value of label {label} "
                f"({listed}); name one of them"
            )
        return found
    if len(counts) > 2:
        raise DataError(
            f"{source}: label {label} has {len(counts)} values ({listed}); name the class to "
            "synthesize with data.positive=<value>"
        )
    (first, n_first), (second, n_second) = counts
    if n_first == n_second:
        raise DataError(
            f"{source}: label {label} has both values equally often ({listed}); name the class "
            "to synthesize with data.positive=<value>"
        )
    return first if n_first < n_second else second


class LevelLookup:
    """Which of ``levels`` a value names, in constant time after one pass over them: the same
    value (by :func:`label_value`), else the same text, else the same text ignoring case, each
    only when it names one level (``yes`` names ``Yes`` unless ``YES`` is a level too). Each
    table is built on its first use: most cells are found by value."""

    def __init__(self, levels: Iterable[Value]) -> None:
        self.levels: tuple[Value, ...] = tuple(levels)
        self._exact: dict[tuple[type, Value], int] | None = None
        self._texts: tuple[dict[str, int], dict[str, int]] | None = None

    def index(self, wanted: object) -> int | None:
        """The index of the level ``wanted`` names, None when it names none."""
        if self._exact is None:
            self._exact = {}
            for i, level in enumerate(self.levels):
                self._exact.setdefault((type(level), level), i)
        value = native(wanted)
        number = label_value(value)
        for candidate in (value, cell_value(value), number):
            found = self._exact.get((type(candidate), candidate))
            if found is not None:
                return found
        texts, folded = self._text_tables()
        for candidate in (str(value), shown_text(number)):
            for table, key in ((texts, candidate), (folded, candidate.lower())):
                found = table.get(key, -1)
                if found >= 0:
                    return found
        return None

    def find(self, wanted: object) -> Value | None:
        """The level ``wanted`` names, None when it names none."""
        index = self.index(wanted)
        return None if index is None else self.levels[index]

    def _text_tables(self) -> tuple[dict[str, int], dict[str, int]]:
        """Each level's text, and its text in lower case, to its index (-2: several levels')."""
        if self._texts is None:
            texts: dict[str, int] = {}
            folded: dict[str, int] = {}
            for i, level in enumerate(self.levels):
                text = shown_text(level)
                texts[text] = -2 if text in texts else i
                folded[text.lower()] = -2 if text.lower() in folded else i
            self._texts = texts, folded
        return self._texts


def find_value(values: Iterable[Value], wanted: object) -> Value | None:
    """The value among ``values`` that ``wanted`` names (:class:`LevelLookup`, for one lookup:
    many lookups against the same levels build one :class:`LevelLookup`)."""
    return LevelLookup(values).find(wanted)


def present(values: pd.Series) -> pd.Series:
    """The non-missing cells (blank text counts as missing), text stripped, positions kept."""
    values = values.reset_index(drop=True)
    if not (pd.api.types.is_object_dtype(values) or pd.api.types.is_string_dtype(values)):
        return values.dropna()
    stripped = values.map(lambda v: v.strip() if isinstance(v, str) else v)
    blank = stripped.map(lambda v: isinstance(v, str) and v == "")
    return stripped[~blank].dropna()


def as_numbers(cells: pd.Series, fmt: str | None = None) -> pd.Series:
    """``cells`` as float64; NaN where a cell is no number (booleans are no numbers here).
    ``fmt``: the column's number format (``$1,234.5``, :mod:`wgangp.data.schema.text_formats`)."""
    if pd.api.types.is_bool_dtype(cells):
        return pd.Series(np.nan, index=cells.index)
    if fmt is not None:
        return parse_numbers(cells, fmt)
    if pd.api.types.is_numeric_dtype(cells):
        return cells.astype(np.float64)
    flags = cells.map(lambda v: isinstance(v, bool | np.bool_))
    numbers = pd.to_numeric(cells.where(~flags), errors="coerce").astype(np.float64)
    return numbers


def as_dates(cells: pd.Series, fmt: str | None = None) -> pd.Series | None:
    """``cells`` as timestamps read with ``fmt``, or without it with the one format that reads
    every cell (:func:`~wgangp.data.schema.text_formats.read_dates`); None when a cell does not fit
    ``fmt``, or when no one format reads them all (never a guess per row)."""
    if fmt is not None:
        dates = parse_dates(cells, fmt)
        return dates if dates.notna().all() else None
    reading = read_dates(cells)
    return reading.dates if reading is not None else None


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
    cells: pd.Series, name: str, kind: str, source: str, advice: str = "", fmt: str | None = None
) -> pd.Series:
    """A number column's present cells as finite floats (read with its number format ``fmt``);
    a text cell or an inf is one line."""
    numbers = as_numbers(cells, fmt)
    text = numbers.isna()
    if text.any():
        raise DataError(
            f"{source}: column {name} has {int(text.sum())} non-numeric value(s) (first at "
            f"data row {first_row(cells, text)}: {_truncate(repr(str(cells[text].iloc[0])))}); "
            f"every cell of a {kind} column must be a number"
            f"{f' written as {fmt}' if fmt else ''}{advice}"
        )
    check_finite(numbers, name, source)
    return numbers


def checked_dates(cells: pd.Series, name: str, fmt: str | None, source: str) -> pd.Series:
    """A datetime column's present cells as timestamps, read with its format ``fmt`` (without
    one: the one format that reads every cell); a cell that does not fit, or a column no one
    format reads, is one line."""
    if fmt is not None:
        dates = parse_dates(cells, fmt)
        bad = dates.isna().to_numpy()
        if bad.any():
            raise DataError(
                f"{source}: column {name} has {int(bad.sum())} value(s) that are not dates "
                f"written as {fmt} (first at data row {first_row(cells, bad)}: "
                f"{_truncate(str(cells[bad].iloc[0]))!r}); fix those cells, or set the format "
                "they are written in"
            )
        return dates
    reading = read_dates(cells)
    if reading is not None and reading.dates is not None:
        return reading.dates
    if reading is not None and reading.readings:
        first, second = reading.readings[:2]
        raise DataError(
            f"{source}: column {name} {reading.problem}; write format: '{first}' or format: "
            f"'{second}' on its entry in the schema, whichever the table is written in"
        )
    if reading is not None and reading.mixed:
        raise DataError(
            f"{source}: column {name} {reading.problem}, and reading each row its own way would "
            "swap days and months; rewrite them in one format (2024-03-01 is best), or delete its "
            "entry from the schema"
        )
    raise DataError(
        f"{source}: column {name} is datetime but not every cell is a date (e.g. "
        f"{shown(list(pd.unique(cells))[:3])}); fix those cells, or set kind: categorical"
    )


def native(value: Any) -> Any:
    """A numpy/pandas scalar as the plain Python value YAML writes (int, float, bool, str)."""
    if isinstance(value, np.generic):
        value = value.item()
    return value


def check_distinct_names(names: Iterable[Hashable], source: str) -> None:
    """Every column needs its own name: the one rule for a file's header, a DataFrame's columns
    and a table's inferred schema (one line naming up to five repeats)."""
    repeated = repeated_names(names)
    if repeated:
        raise DataError(
            f"{source}: column(s) {shown(repeated)} appear more than once in the header; "
            "rename or drop the copies, every column needs its own name"
        )


def shown(values: list, limit: int = 5) -> str:
    """A short list for a one-line message: ``a, b, c, ... (+12)``."""
    items = [_truncate(shown_text(native(v))) for v in values[:limit]]
    more = f", ... (+{len(values) - limit})" if len(values) > limit else ""
    return ", ".join(items) + more


def no_such_column(name: str, names: list[str]) -> str:
    """What to say of a column the table lacks: a close name, or the columns it has."""
    return f"column {name!r} is not in the table; {column_hint(name, names)}"


def no_such_label(label: str, names: list[str]) -> str:
    """What to say of a label column the table lacks (a close name suggested), one sentence
    ended before the fix whether or not a close name was found."""
    missing = no_such_column(label, names)
    return f"label {missing}{'' if missing.endswith('?') else '.'} Set data.label=<column>"


def column_hint(name: str, names: list[str]) -> str:
    """``did you mean 'x'?`` for the columns close to ``name`` (case aside), else the columns
    there are: the one rule for a column name that is not there."""
    lowered = {column.lower(): column for column in names}
    close = difflib.get_close_matches(name.lower(), list(lowered), n=3, cutoff=0.6)
    if close:
        return f"did you mean {' or '.join(repr(lowered[c]) for c in close)}?"
    return f"the columns are {shown(names)}"


def shown_text(value: Any) -> str:
    """A value as a person wrote it: a whole float read from a column with gaps (2.0) as 2."""
    if isinstance(value, float) and value.is_integer() and abs(value) < MAX_ABS_VALUE:
        return str(int(value))
    return str(value)


def _row(cells: pd.Series, mask: np.ndarray) -> int:
    return int(cells.index[int(np.flatnonzero(mask)[0])]) + 1


def _truncate(text: str, limit: int = 40) -> str:
    text = text.replace("\n", "\\n").replace("\r", "\\r")
    return text if len(text) <= limit else text[: limit - 3] + "..."
