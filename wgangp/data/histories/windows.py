"""A history table's rows as windows: each entity's rows in time order, cut into consecutive windows
of at most ``history.max_length`` rows, each window one training history.

A customer of 150 rows with windows of 64 trains as three histories of 64, 64 and 22 consecutive
rows, each with the customer's attributes and its own start; the split keeps all of one
customer's windows in one part, and privacy counts the customer, not the window. A generated
history is one window: at most ``max_length`` rows (docs/histories.md says what that leaves out).

Time is counted in wall-clock seconds (:func:`wall_seconds`): a zone-aware column's local time, so
that the hour of day and the day of week are the customer's, as the table shows them; a column
of numbers is taken for seconds. Each row's gap is the seconds since the row before it in its
window (0 for a window's first row), which the networks read as whole days and a time of day
(:func:`day_skips`); a row's phase within the week is what they see of its calendar time
(:func:`week_phases`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from wgangp.data.schema.column_codes import from_seconds, to_seconds
from wgangp.data.schema.table_schema import ColumnSchema

DAY, WEEK = 86_400.0, 7 * 86_400.0


def wall_seconds(times: pd.Series, column: ColumnSchema) -> np.ndarray:
    """Seconds since 1970 on the wall clock of the column's zone (float64); numbers as they are."""
    if column.kind != "datetime":
        return pd.to_numeric(times).to_numpy(np.float64)
    dates = pd.to_datetime(times)
    if getattr(dates.dt, "tz", None) is not None:
        dates = dates.dt.tz_localize(None)
    return to_seconds(dates)


def from_wall_seconds(seconds: np.ndarray, column: ColumnSchema) -> pd.Series:
    """Wall-clock seconds back as the column's values: timestamps in its zone (a wall time the
    clocks skip moves forward; one they repeat reads as standard time), or numbers."""
    if column.kind != "datetime":
        values = np.asarray(seconds, np.float64)
        return pd.Series(np.round(values).astype(np.int64) if column.kind == "integer" else values)
    dates = from_seconds(np.asarray(seconds, np.float64))
    if column.zone is None:
        return dates
    return dates.dt.tz_localize(
        column.zone, ambiguous=np.zeros(len(dates), dtype=bool), nonexistent="shift_forward"
    )


#: A gap's log1p seconds as the critics read it: centred near an hour, about unit spread.
GAP_CENTRE, GAP_SCALE = 8.0, 4.0


def gap_feature(gaps: np.ndarray, later: np.ndarray) -> np.ndarray:
    """Each later row's gap as ``(log1p(seconds) - 8) / 4``; 0 for a window's first row. The
    critics read the gap itself, beside the calendar: a burst is gaps of minutes."""
    return np.where(later, (np.log1p(np.maximum(gaps, 0.0)) - GAP_CENTRE) / GAP_SCALE, 0.0)


def week_phases(seconds: np.ndarray) -> np.ndarray:
    """[..., 4]: cos and sin of each instant's angle within the week and within the day (the
    day's angle is seven times the week's: the epoch starts a day and a week)."""
    angle = 2 * np.pi * np.mod(seconds, WEEK) / WEEK
    return np.stack([np.cos(angle), np.sin(angle), np.cos(7 * angle), np.sin(7 * angle)], -1)


@dataclass(frozen=True)
class Windows:
    """The rows of some entities, sorted by entity then time, and their windows."""

    rows: pd.DataFrame  # sorted, fresh index
    seconds: np.ndarray  # per row: wall-clock seconds
    gaps: np.ndarray  # per row: seconds since the row before in its window (0 for the first)
    window: np.ndarray  # per row: its window's number
    position: np.ndarray  # per row: its place in its window
    row_classes: np.ndarray  # per row: 1 for the rare class
    starts: np.ndarray  # per window: its first row
    lengths: np.ndarray  # per window: its rows
    owners: np.ndarray  # per window: its entity's code
    classes: np.ndarray  # per window: 1 when it holds a rare-class row

    @property
    def count(self) -> int:
        return len(self.starts)

    @property
    def days(self) -> np.ndarray:
        """Per row, the whole days of its gap beyond the wrap of the clock to its time of day
        (:func:`day_skips`); 0 for a window's first row."""
        return day_skips(self.seconds, self.gaps, self.position > 0)

    def first_rows(self) -> pd.DataFrame:
        """One row per window: its first (what its attributes are read from)."""
        return self.rows.iloc[self.starts].reset_index(drop=True)


def cut_windows(
    frame: pd.DataFrame,
    *,
    entity: str,
    time_column: ColumnSchema,
    row_classes: np.ndarray,
    max_length: int,
) -> Windows:
    """``frame``'s rows (entity codes in ``entity``) as windows of at most ``max_length``
    consecutive rows of one entity in time order (module doc)."""
    seconds = wall_seconds(frame[time_column.name], time_column)
    owners = frame[entity].to_numpy(np.int64)
    order = np.lexsort((np.arange(len(frame)), seconds, owners))  # stable: ties keep their order
    rows = frame.iloc[order].reset_index(drop=True)
    seconds, owners, row_classes = seconds[order], owners[order], np.asarray(row_classes)[order]
    new_owner = np.r_[True, owners[1:] != owners[:-1]] if len(owners) else np.zeros(0, bool)
    owner_start = np.maximum.accumulate(np.where(new_owner, np.arange(len(owners)), 0))
    rank = np.arange(len(owners)) - owner_start
    first = rank % max_length == 0
    window = np.cumsum(first) - 1
    starts = np.flatnonzero(first)
    lengths = np.diff(np.r_[starts, len(owners)])
    gaps = np.where(first, 0.0, seconds - np.r_[seconds[:1], seconds[:-1]])
    classes = np.zeros(len(starts), dtype=np.int64)
    np.maximum.at(classes, window, row_classes.astype(np.int64))
    return Windows(
        rows=rows,
        seconds=seconds,
        gaps=np.maximum(gaps, 0.0),
        window=window,
        position=rank % max_length,
        row_classes=row_classes.astype(np.int64),
        starts=starts,
        lengths=lengths,
        owners=owners[starts],
        classes=classes,
    )


def day_skips(seconds: np.ndarray, gaps: np.ndarray, later: np.ndarray) -> np.ndarray:
    """How a gap reads as the networks draw it: whole days, then forward to the row's time of day
    (``gap = days x 86400 + (time of day - previous time of day) mod 86400``); the days of each
    ``later`` row (0 elsewhere). Every gap of 0 or more has one such reading."""
    previous = np.mod(seconds - gaps, DAY)
    wrap = np.mod(np.mod(seconds, DAY) - previous, DAY)
    return np.where(later, np.maximum(np.round((gaps - wrap) / DAY), 0.0), 0.0)
