"""Dates and numbers written as text, read with ONE format per column, never guessed row by row.

A reader that decides each cell on its own (pandas' ``format="mixed"``) reads ``13/04/2024``
day-first and ``03/04/2024`` month-first in the same column: a column of day-first dates comes
back with every day <= 12 swapped into another month, and nothing says so. Here a column's cells
are tried against a list of explicit formats, and a column is a date column only when one format
reads every cell: that format is written into the schema (``format:``) and training reads the
column with it. When several formats read every cell and disagree (every day is 12 or less, so
day-first and month-first both fit) or no one format reads them all (a mix of ``2024-03-01``,
``01/03/2024`` and ``1 Mar 2024``), the column needs a person's decision (a review line).

ISO 8601 text with UTC offsets is read as instants in its zone: one offset (``+01:00``) is that
fixed zone; offsets that change with the season (``+01:00`` in winter, ``+02:00`` in summer, as
pandas writes a ``Europe/Paris`` column) are the first IANA zone whose offsets are the cells' at
every instant, so generated rows come back with the table's wall-clock times.

Numbers written as text (``1,000``, ``$1,000.00``, ``1,000.50€``) are read as numbers when every
cell is a plain number or a number with comma thousands separators and, at most, one currency
sign before or after it; the schema says so with ``format: 1,234.5`` (``$1,234.5``, ``1,234.5€``).
"""

from __future__ import annotations

import re
import warnings
import zoneinfo
from dataclasses import dataclass
from datetime import UTC, timedelta, timezone
from functools import cache

import numpy as np
import pandas as pd

#: ISO 8601 (year first, unambiguous; with or without a time and an offset), pandas' name for it.
ISO = "ISO8601"
_DAYS = (
    "%d/%m/%Y", "%m/%d/%Y", "%d-%m-%Y", "%m-%d-%Y", "%d.%m.%Y", "%d/%m/%y", "%m/%d/%y",
    "%d %b %Y", "%d %B %Y", "%b %d %Y", "%b %d, %Y", "%B %d %Y", "%B %d, %Y", "%d-%b-%Y",
    "%d-%b-%y",
)  # fmt: skip
_TIMES = ("", " %H:%M", " %H:%M:%S")
#: The formats a date column may be written in, tried in this order.
DATE_FORMATS = (ISO, *(day + time for day in _DAYS for time in _TIMES))

#: How many distinct cells a first look at a column reads with every format.
_SAMPLE = 64
#: The currency signs a number written as text may carry (before or after it).
CURRENCY_SIGNS = "$€£¥"
#: How the schema spells a number format: comma thousands separators, a dot for decimals.
NUMBER_TEMPLATE = "1,234.5"
_NUMBER_FORMAT = re.compile(rf"^(?P<pre>[{CURRENCY_SIGNS}]?)1,234\.5(?P<post>[{CURRENCY_SIGNS}]?)$")
_NUMBER_TEXT = re.compile(
    rf"^(?P<sign>[-+]?)(?P<pre>[{CURRENCY_SIGNS}]?)(?P<sign2>[-+]?)"
    rf"(?P<int>\d{{1,3}}(?:,\d{{3}})+|\d+)(?P<frac>\.\d+)?(?P<post>[{CURRENCY_SIGNS}]?)$"
)
#: Text made only of what numbers are written with (digits, separators, signs, currencies).
_NUMBER_LIKE = re.compile(rf"^[-+(]?[{CURRENCY_SIGNS}]?[-+]?\d[\d.,' ]*[{CURRENCY_SIGNS}%)]?$")
_FORMATTED = re.compile(rf"[.,%{CURRENCY_SIGNS}]")
#: A UTC offset ending ISO text after its time: ``10:00Z``, ``10:00:00+01:00``, ``10:00-0500``.
_OFFSET = re.compile(
    r"\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?\s*"
    r"(?:(?P<z>[zZ])|(?P<sign>[-+])(?P<h>\d{2}):?(?P<m>\d{2})?)$"
)
#: Zone names tried first when offsets name a zone (the continents', then the rest).
_REGIONS = ("Europe/", "America/", "Asia/", "Australia/", "Africa/", "Pacific/", "Atlantic/")


@dataclass(frozen=True)
class DateReading:
    """How a column's cells read as dates: one ``format`` and the ``dates`` it gives, or why not.

    ``readings``: formats that each read every cell but give different dates (ambiguous);
    ``mixed``: every cell is a date in some format, no one format reads them all.
    """

    format: str | None = None
    dates: pd.Series | None = None
    readings: tuple[str, ...] = ()
    mixed: bool = False
    examples: tuple[str, ...] = ()

    @property
    def problem(self) -> str | None:
        """Why the column cannot be read as dates without a person's decision, or None."""
        if self.readings:
            first, second = self.readings[:2]
            cell = self.examples[0] if self.examples else ""
            one, two = (_shown(parse_dates(pd.Series([cell]), f).iloc[0]) for f in (first, second))
            return f"fits both {first} and {second} in every row ({cell!r} is {one} or {two})"
        if self.mixed:
            shown = ", ".join(repr(e) for e in self.examples)
            return f"holds dates written in more than one format (e.g. {shown})"
        return None


def read_dates(cells: pd.Series) -> DateReading | None:
    """``cells`` (present, text stripped) read as dates with one format; None when they are no
    dates (a cell without digits, or one no listed format reads)."""
    if pd.api.types.is_datetime64_any_dtype(cells):
        return DateReading(dates=cells)
    if not cells.map(lambda v: isinstance(v, str) and any(ch.isdigit() for ch in v)).all():
        return None
    unique = pd.Series(pd.unique(cells), dtype=object)
    # A first look at a few cells rules out most formats (and most text) before the whole column.
    sample = unique.iloc[:_SAMPLE]
    fits = {fmt: _fits(sample, fmt) for fmt in DATE_FORMATS}
    if not np.logical_or.reduce(list(fits.values())).all():
        return None  # a cell no format reads: no dates
    covered = np.zeros(len(unique), dtype=bool)
    full: list[tuple[str, pd.Series]] = []
    first_reader: dict[int, str] = {}
    candidates = [fmt for fmt in DATE_FORMATS if fits[fmt].any()]
    others = [fmt for fmt in DATE_FORMATS if not fits[fmt].any()]
    for fmt in candidates:
        parsed = _parse(unique, fmt)
        if parsed is None:
            continue
        ok = parsed.notna().to_numpy()
        for i in np.flatnonzero(ok & ~covered):
            first_reader[int(i)] = fmt
        covered |= ok
        if ok.all():
            full.append((fmt, parsed))
    for fmt in others if not full and not covered.all() else ():
        rest = np.flatnonzero(~covered)  # formats none of the first cells fit: the rest only
        ok = _fits(unique.iloc[rest], fmt)
        for i in rest[ok]:
            first_reader[int(i)] = fmt
        covered[rest[ok]] = True
    if full:
        fmt, parsed = full[0]
        differing = [(f, p) for f, p in full[1:] if not _same(p, parsed)]
        if not differing:
            return DateReading(format=fmt, dates=cells.map(dict(zip(unique, parsed, strict=True))))
        other, other_parsed = differing[0]
        where = np.flatnonzero(~_equal(parsed, other_parsed))
        return DateReading(readings=(fmt, other), examples=(str(unique[int(where[0])]),))
    if covered.all():
        examples: dict[str, str] = {}
        for row, fmt in sorted(first_reader.items()):
            examples.setdefault(fmt, str(unique[row]))
        return DateReading(mixed=True, examples=tuple(examples.values())[:3])
    return None


def parse_dates(cells: pd.Series, fmt: str) -> pd.Series:
    """``cells`` read with ``fmt``; NaT where a cell does not fit it (datetimes pass through)."""
    if pd.api.types.is_datetime64_any_dtype(cells):
        return cells
    unique = pd.Series(pd.unique(cells), dtype=object)
    parsed = _parse(unique, fmt)
    if parsed is None:
        return pd.Series(pd.NaT, index=cells.index)
    return cells.map(dict(zip(unique, parsed, strict=True)))


def check_date_format(fmt: object) -> bool:
    """Whether ``fmt`` is a date format this module reads (ISO8601, or strftime codes that
    round-trip a timestamp)."""
    if fmt == ISO:
        return True
    if not isinstance(fmt, str) or "%" not in fmt:
        return False
    stamp = pd.Timestamp("2001-02-03 04:05:06")
    try:
        text = stamp.strftime(fmt)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            back = pd.to_datetime(pd.Series([text]), format=fmt, errors="coerce")
    except (ValueError, TypeError):
        return False
    return bool(back.notna().all())


def check_zone(zone: object) -> bool:
    """Whether ``zone`` is a time zone pandas localizes to: an IANA name (``Europe/Paris``),
    ``UTC``, or a fixed offset (``UTC+01:00``, as pandas names one)."""
    if not isinstance(zone, str) or not zone.strip():
        return False
    try:
        pd.Timestamp(0).tz_localize("UTC").tz_convert(zone)
    except (ValueError, TypeError, KeyError, OSError, AttributeError):
        return False
    return True


def in_zone(stamp: pd.Timestamp, zone: str) -> pd.Timestamp:
    """A timestamp in ``zone``: a naive one is a wall-clock time there (the hour repeated when
    clocks go back is standard time; a skipped one moves forward), an aware one converted."""
    if stamp.tz is not None:
        return stamp.tz_convert(zone)
    return stamp.tz_localize(zone, ambiguous=False, nonexistent="shift_forward")


def instant(stamp: pd.Timestamp, zone: str | None) -> pd.Timestamp:
    """A timestamp as the instant it names (UTC, naive): a naive one is UTC, or with ``zone`` a
    wall-clock time there (:func:`in_zone`); how a schema's datetime bounds are compared."""
    if zone is not None:
        stamp = in_zone(stamp, zone)
    return stamp.tz_convert("UTC").tz_localize(None) if stamp.tz is not None else stamp


@cache
def zones() -> tuple[str, ...]:
    """The IANA zone names this machine knows, the continents' first (close names, guesses)."""

    def order(name: str) -> tuple[int, str]:
        region = next((i for i, r in enumerate(_REGIONS) if name.startswith(r)), len(_REGIONS))
        return region, name

    return tuple(sorted(zoneinfo.available_timezones(), key=order))


def zone_of_offsets(instants: pd.Series, offsets: np.ndarray) -> str:
    """The zone whose UTC offset (``offsets``, in minutes) is each of ``instants``' (UTC): the
    first IANA zone that fits every one, else UTC (several zones' cells in one column)."""
    distinct = np.unique(offsets)
    if len(distinct) == 1:
        return str(pd.Timestamp(0, tz=UTC).tz_convert(_fixed(int(distinct[0]))).tz)
    # One instant per offset rules most zones out before any zone is checked on every cell.
    probes = [
        (instants.iloc[int(np.flatnonzero(offsets == m)[0])].floor("s").to_pydatetime(), m)
        for m in distinct
    ]
    stamps = pd.DatetimeIndex(instants)
    for name in zones():
        zone = zoneinfo.ZoneInfo(name)
        if any(dt.astimezone(zone).utcoffset() != timedelta(minutes=int(m)) for dt, m in probes):
            continue
        local = stamps.tz_convert(name).tz_localize(None) - stamps.tz_localize(None)
        if np.array_equal(local // pd.Timedelta(minutes=1), offsets):
            return name
    return "UTC"


def number_format(cells: pd.Series) -> str | None:
    """The format (``1,234.5``, ``$1,234.5``, ``1,234.5€``) that reads every text cell as a
    number, when at least one needs it (a separator or a sign); None otherwise."""
    if pd.api.types.is_numeric_dtype(cells) or pd.api.types.is_bool_dtype(cells):
        return None
    signs: set[tuple[str, str]] = set()
    needed = False
    for value in pd.unique(cells):
        if not isinstance(value, str):
            return None
        match = _NUMBER_TEXT.match(_squeezed(value))
        if match is None:
            return None
        pre, post = match["pre"], match["post"]
        if pre and post:
            return None
        if pre or post:
            signs.add((pre, post))
        needed = needed or bool(pre or post or "," in match["int"])
    if not needed or len(signs) > 1:
        return None
    pre, post = next(iter(signs), ("", ""))
    return f"{pre}{NUMBER_TEMPLATE}{post}"


def parse_numbers(cells: pd.Series, fmt: str) -> pd.Series:
    """Text cells read with the number format ``fmt`` as float64; NaN where a cell does not fit
    (another currency sign, no number). Numbers pass through."""
    if pd.api.types.is_numeric_dtype(cells) and not pd.api.types.is_bool_dtype(cells):
        return cells.astype(np.float64)
    found = _NUMBER_FORMAT.match(fmt)
    allowed = {found["pre"] + found["post"], ""} if found else {""}

    def one(value: object) -> float:
        if isinstance(value, int | float | np.integer | np.floating) and not isinstance(
            value, bool | np.bool_
        ):
            return float(value)
        if not isinstance(value, str):
            return np.nan
        match = _NUMBER_TEXT.match(_squeezed(value))
        if match is None or match["pre"] + match["post"] not in allowed:
            return np.nan
        if match["sign"] and match["sign2"]:
            return np.nan
        number = float(match["int"].replace(",", "") + (match["frac"] or ""))
        return -number if "-" in (match["sign"], match["sign2"]) else number

    lookup = {value: one(value) for value in pd.unique(cells)}
    return cells.map(lookup).astype(np.float64)


def check_number_format(fmt: object) -> bool:
    """Whether ``fmt`` is a number format: ``1,234.5`` with at most one currency sign."""
    if not isinstance(fmt, str):
        return False
    found = _NUMBER_FORMAT.match(fmt)
    return found is not None and not (found["pre"] and found["post"])


def number_like_example(cells: pd.Series) -> str | None:
    """A cell of a text column whose every cell looks like a number written in a format this
    module does not read (``1.234,50``, ``12 %``, ``(5.00)``, two currencies); None otherwise."""
    if pd.api.types.is_numeric_dtype(cells) or cells.empty:
        return None
    values = pd.unique(cells)
    if not all(isinstance(v, str) and _NUMBER_LIKE.match(v.strip()) for v in values):
        return None
    if not any(_FORMATTED.search(v) for v in values):
        return None  # digits and spaces only (phone numbers, codes): no number formatting
    return str(next((v for v in values if _NUMBER_TEXT.match(_squeezed(v)) is None), values[0]))


def _fits(values: pd.Series, fmt: str) -> np.ndarray:
    parsed = _parse(values, fmt)
    return np.zeros(len(values), bool) if parsed is None else parsed.notna().to_numpy()


def _squeezed(text: str) -> str:
    return "".join(text.split())


def _parse(unique: pd.Series, fmt: str) -> pd.Series | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parsed = pd.to_datetime(unique, format=fmt, errors="coerce")
    except (ValueError, TypeError, OverflowError):
        return _offsets_parsed(unique) if fmt == ISO else None
    return pd.Series(parsed)


def _offsets_parsed(unique: pd.Series) -> pd.Series | None:
    """ISO text whose UTC offsets differ (summer and winter time) as instants in the zone those
    offsets name (:func:`zone_of_offsets`); None when a cell has no offset (naive and zoned text
    mixed: no one reading) or is no ISO date."""
    offsets = np.empty(len(unique), dtype=np.int64)
    for i, text in enumerate(unique):
        found = _OFFSET.search(text.strip()) if isinstance(text, str) else None
        if found is None:
            return None
        minutes = 0 if found["z"] else int(found["h"]) * 60 + int(found["m"] or 0)
        offsets[i] = -minutes if found["sign"] == "-" else minutes
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            instants = pd.Series(pd.to_datetime(unique, format=ISO, errors="coerce", utc=True))
    except (ValueError, TypeError, OverflowError):
        return None
    read = instants.notna().to_numpy()
    if not read.any():
        return instants
    zone = zone_of_offsets(instants[read].reset_index(drop=True), offsets[read])
    return instants.dt.tz_convert(zone)


def _fixed(minutes: int) -> timezone:
    """The fixed zone ``minutes`` east of UTC (pandas names it ``UTC+01:00``)."""
    return timezone(timedelta(minutes=minutes))


def _equal(a: pd.Series, b: pd.Series) -> np.ndarray:
    return (a.to_numpy() == b.to_numpy()) | (a.isna().to_numpy() & b.isna().to_numpy())


def _same(a: pd.Series, b: pd.Series) -> bool:
    try:
        return bool(_equal(a, b).all())
    except TypeError:  # zone-aware against naive: different readings
        return False


def _shown(stamp: pd.Timestamp) -> str:
    if pd.isna(stamp):
        return "no date"
    return stamp.strftime("%d %B %Y") if stamp == stamp.normalize() else stamp.isoformat()
