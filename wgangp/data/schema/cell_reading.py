"""Cells read one at a time, by rules fixed in advance: how a private run reads a table it has no
declared schema for (:mod:`wgangp.data.private_table`).

Inference reads a column as a whole: one text cell among numbers makes the column text, one date
the format cannot read makes it categorical, pandas types a CSV column by every cell in it. Under
``privacy.epsilon`` that lets one customer change how every other customer's cells are read. So a
private run reads each cell alone:

- a gap: missing, None, NaN, or empty text (what the table reader reads as missing);
- a boolean: a bool, or the text ``true``/``false`` in any case (pandas types a CSV column of
  them as booleans, and the same cells as text when one other cell is not one);
- a number: an int or a finite float, or text Python's ``float`` reads (``12``, ``-3.5``,
  ``1e3``); numbers written with thousands separators or currency signs are text (declare the
  column's ``format`` in ``data.schema`` to read them as numbers);
- a date: a datetime, or ISO 8601 text (``2024-06-01``, ``2024-06-01T10:00:00+02:00``); an
  instant with an offset is read in UTC; a zone-aware column keeps its dtype's zone (a declared
  type, not a row);
- text, otherwise.

A cell's level (when its column is released as categorical) is its text: numbers as their shortest
text (``10``, never ``10.0``, whichever way the reader typed the column), booleans as ``True`` or
``False``, dates in ISO 8601.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from wgangp.data.schema.identifiers import identifier_cells

#: A cell's kind.
GAP, BOOLEAN, NUMBER, DATE, TEXT = range(5)
#: The kinds a column can be released as, in the order votes list them.
COLUMN_KINDS = (BOOLEAN, NUMBER, DATE, TEXT)
_TRUE_FALSE = {"true": True, "false": False}


@dataclass(frozen=True)
class CellReading:
    """One column's cells read alone: each one's kind and, by kind, its value."""

    kinds: np.ndarray  # int8, one of GAP ... TEXT
    numbers: np.ndarray  # float64: a number cell's value, NaN elsewhere
    dates: np.ndarray  # datetime64[ns] (UTC wall time when the cell had an offset), NaT elsewhere
    levels: np.ndarray  # object: every present cell's level text (module doc), None in gaps
    booleans: np.ndarray  # bool: a boolean cell's value, False elsewhere
    identifier: np.ndarray  # bool: the cell is, or holds, an identifier
    #: The zone of a zone-aware datetime column (its dtype's), else None.
    zone: str | None = None

    def __len__(self) -> int:
        return len(self.kinds)

    def take(self, rows: np.ndarray) -> CellReading:
        """The reading of the cells at positions ``rows``."""
        return CellReading(
            self.kinds[rows],
            self.numbers[rows],
            self.dates[rows],
            self.levels[rows],
            self.booleans[rows],
            self.identifier[rows],
            self.zone,
        )


def read_cells(values: pd.Series) -> CellReading:
    """Each cell of ``values`` read alone (module doc)."""
    n = len(values)
    zone = None
    if isinstance(values.dtype, pd.DatetimeTZDtype):
        zone = str(values.dtype.tz)
        values = values.dt.tz_convert("UTC").dt.tz_localize(None)
    cells = values.astype(object).to_numpy(object) if len(values) else np.empty(0, object)
    kinds = np.full(n, GAP, np.int8)
    numbers = np.full(n, np.nan)
    dates = np.full(n, np.datetime64("NaT"), "datetime64[ns]")
    levels = np.full(n, None, object)
    booleans = np.zeros(n, bool)
    # Booleans apart: pandas' factorize takes True for 1 and False for 0.
    flags = np.fromiter((isinstance(v, bool | np.bool_) for v in cells), bool, n)
    booleans[flags] = cells[flags].astype(bool)
    kinds[flags] = BOOLEAN
    levels[flags] = np.where(booleans[flags], "True", "False")
    rest = np.flatnonzero(~flags)
    codes, unique = pd.factorize(pd.Series(cells[rest], dtype=object), use_na_sentinel=True)
    read = [_read_one(value) for value in unique]
    if read:
        rows, present = rest[codes >= 0], codes[codes >= 0]
        kinds[rows] = np.array([r[0] for r in read], np.int8)[present]
        for column, index in ((numbers, 1), (dates, 2), (levels, 3), (booleans, 4)):
            values_of = np.empty(len(read), column.dtype)
            values_of[:] = [r[index] for r in read]
            column[rows] = values_of[present]
    levels[kinds == GAP] = None
    content = (kinds == NUMBER) | (kinds == TEXT)  # a date or a flag holds no identifier
    identifier = identifier_cells(pd.Series(cells, dtype=object)) & content
    return CellReading(kinds, numbers, dates, levels, booleans, identifier, zone)


def number_text(number: float) -> str:
    """A number as its level text: whole numbers without a fraction (``10``), else the shortest
    text that reads back as it (``2.5``)."""
    return str(int(number)) if float(number).is_integer() else repr(float(number))


def _read_one(value: object) -> tuple[int, float, np.datetime64, object, bool]:
    """``(kind, number, date, level, boolean)`` of one distinct cell."""
    nat = np.datetime64("NaT", "ns")
    if isinstance(value, bool | np.bool_):
        return BOOLEAN, np.nan, nat, str(bool(value)), bool(value)
    if isinstance(value, int | float | np.integer | np.floating):
        number = float(value)
        if number != number:
            return GAP, np.nan, nat, None, False
        if not np.isfinite(number):
            return TEXT, np.nan, nat, str(value), False
        return NUMBER, number, nat, number_text(number), False
    if isinstance(value, pd.Timestamp | np.datetime64):
        stamp = pd.Timestamp(value)
        if stamp is pd.NaT:
            return GAP, np.nan, nat, None, False
        if stamp.tzinfo is not None:
            stamp = stamp.tz_convert("UTC").tz_localize(None)
        return (
            DATE,
            np.nan,
            stamp.to_datetime64().astype("datetime64[ns]"),
            stamp.isoformat(),
            False,
        )
    text = str(value).strip()
    if not text:
        return GAP, np.nan, nat, None, False
    if text.lower() in _TRUE_FALSE:
        flag = _TRUE_FALSE[text.lower()]
        return BOOLEAN, np.nan, nat, str(flag), flag
    try:
        number = float(text)
    except ValueError:
        number = np.nan  # no number: read on, as "nan" and "inf" are
    if np.isfinite(number):
        return NUMBER, number, nat, number_text(number), False
    stamp = _iso_date(text)
    if stamp is not None:
        return (
            DATE,
            np.nan,
            stamp.to_datetime64().astype("datetime64[ns]"),
            stamp.isoformat(),
            False,
        )
    return TEXT, np.nan, nat, text, False


def _iso_date(text: str) -> pd.Timestamp | None:
    """ISO 8601 text as a naive timestamp (UTC wall time when it has an offset), else None."""
    if not text[:1].isdigit() or "-" not in text[:8]:
        return None
    try:
        stamp = pd.Timestamp(pd.to_datetime(text, format="ISO8601"))
    except (ValueError, TypeError, OverflowError):
        return None
    if stamp is pd.NaT:
        return None
    return stamp.tz_convert("UTC").tz_localize(None) if stamp.tzinfo is not None else stamp
