"""A table as histories: each entity's rows in time order, with the gaps and time windows that
every behavioral measure reads (per entity in ``history_features.py``, per pattern in
``behavior.py``).

Time is seconds on the wall clock: a datetime column (naive or zoned) is read as its local wall
clock, so hours of the day and days of the week are the customers' own (a gap across a daylight
saving change is off by that hour); a numeric column is taken as seconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

HOUR = 3600.0
DAY = 86400.0
#: 1970-01-01, day 0 of the epoch, was a Thursday: (day + 3) % 7 is 0 on Mondays.
EPOCH_WEEKDAY = 3


@dataclass(frozen=True)
class HistoryColumns:
    """Which columns make a table a set of histories.

    ``positive`` is the label value of a fraud row (compared as text, so ``1`` and ``"1"``
    agree); ``amount`` is optional (the amount rule and amount statistics need it); ``shared``
    are the high-cardinality ids that many entities share (a terminal, a device, a merchant).
    """

    entity: str
    time: str
    label: str
    positive: object
    amount: str | None = None
    shared: tuple[str, ...] = ()


def wall_seconds(values: pd.Series) -> np.ndarray:
    """A time column as float seconds on its wall clock; numbers are seconds already."""
    if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        return values.to_numpy(dtype=np.float64)
    times = values if pd.api.types.is_datetime64_any_dtype(values) else pd.to_datetime(values)
    if getattr(times.dt, "tz", None) is not None:
        times = times.dt.tz_localize(None)  # the wall clock of the column's own zone
    nanos = times.astype("datetime64[ns]").to_numpy().astype(np.int64)
    return nanos.astype(np.float64) / 1e9


def fraud_rows(frame: pd.DataFrame, cols: HistoryColumns) -> np.ndarray:
    """Which rows carry the fraud label value (as text, stripped)."""
    return (frame[cols.label].astype(str).str.strip() == str(cols.positive).strip()).to_numpy()


@dataclass(frozen=True)
class Timeline:
    """A table's rows sorted by entity, then time; entity ``k``'s rows are
    ``starts[k]:starts[k + 1]``."""

    #: Each row's entity as a code 0..n-1, ascending.
    entity: np.ndarray
    seconds: np.ndarray
    fraud: np.ndarray
    amount: np.ndarray | None
    #: Each shared column's values, in the sorted order.
    shared: dict[str, np.ndarray]
    #: Each code's entity id as the table wrote it.
    ids: np.ndarray
    starts: np.ndarray
    #: Each sorted row's position in the frame it came from.
    order: np.ndarray

    @classmethod
    def of(cls, frame: pd.DataFrame, cols: HistoryColumns) -> Timeline:
        codes, ids = pd.factorize(frame[cols.entity], sort=True)
        seconds = wall_seconds(frame[cols.time])
        if np.isnan(seconds).any() or (codes < 0).any():
            raise ValueError(
                f"histories need an entity and a time on every row ({cols.entity}, {cols.time})"
            )
        order = np.lexsort((seconds, codes))
        amount = None
        if cols.amount is not None:
            amount = pd.to_numeric(frame[cols.amount], errors="coerce").to_numpy(np.float64)[order]
        entity = codes[order]
        starts = np.searchsorted(entity, np.arange(len(ids) + 1))
        return cls(
            entity=entity,
            seconds=seconds[order],
            fraud=fraud_rows(frame, cols)[order],
            amount=amount,
            shared={name: frame[name].to_numpy()[order] for name in cols.shared},
            ids=np.asarray(ids),
            starts=starts,
            order=order,
        )

    @property
    def n_entities(self) -> int:
        return len(self.ids)

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.starts)

    def first_rows(self) -> np.ndarray:
        """True on each entity's first row (where it has no gap)."""
        first = np.ones(len(self.entity), dtype=bool)
        first[1:] = self.entity[1:] != self.entity[:-1]
        return first

    def log_gaps(self) -> np.ndarray:
        """Each row's ``log(1 + seconds since the entity's previous row)``; NaN on first rows.
        The ``1 +`` keeps rows at the same second finite (0)."""
        gaps = np.full(len(self.seconds), np.nan)
        gaps[1:] = np.log1p(np.maximum(np.diff(self.seconds), 0.0))
        gaps[self.first_rows()] = np.nan
        return gaps

    def _stacked(self, window: float) -> np.ndarray:
        """Times laid end to end, each entity after the previous one with more than ``window``
        between them, so one sorted search finds windows that never cross entities."""
        if len(self.seconds) == 0:
            return self.seconds
        local = self.seconds - self.seconds[self.starts[:-1]][self.entity]
        stride = float(local.max()) + 2.0 * window + 1.0
        return local + self.entity * stride

    def backward_counts(self, window: float) -> np.ndarray:
        """Each row's count of its entity's rows in ``[t - window, t]``, itself included: what a
        velocity rule reads when the row arrives."""
        stacked = self._stacked(window)
        low = np.searchsorted(stacked, stacked - window, side="left")
        high = np.searchsorted(stacked, stacked, side="right")
        return high - low

    def in_burst(self, rows: int = 3, window: float = HOUR) -> np.ndarray:
        """True on a row that lies, with at least ``rows - 1`` others of its entity, within one
        span of ``window`` seconds (3 rows in an hour by default)."""
        stacked = self._stacked(window)
        ends = np.searchsorted(stacked, stacked + window, side="right")
        opens = np.flatnonzero(ends - np.arange(len(stacked)) >= rows)
        marks = np.zeros(len(stacked) + 1, dtype=np.int64)
        np.add.at(marks, opens, 1)
        np.add.at(marks, ends[opens], -1)
        return np.cumsum(marks)[:-1] > 0

    def per_entity_sum(self, values: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """Each entity's sum of ``values`` over its rows (or over those where ``rows``)."""
        keep = np.ones(len(values), dtype=bool) if rows is None else rows
        return np.bincount(self.entity[keep], values[keep], minlength=self.n_entities)

    def gap_autocorrelation(self, min_gaps: int = 3) -> np.ndarray:
        """Each entity's lag-1 autocorrelation of its log gaps,
        ``sum_k (g_k - m)(g_k+1 - m) / sum_k (g_k - m)^2`` over its own gaps ``g`` and their
        mean ``m``; NaN with fewer than ``min_gaps`` gaps or gaps all alike."""
        gaps = self.log_gaps()
        has = ~np.isnan(gaps)
        count = self.per_entity_sum(np.ones(len(gaps)), has)
        mean = self.per_entity_sum(np.where(has, gaps, 0.0)) / np.maximum(count, 1)
        deviation = np.where(has, gaps - mean[self.entity], 0.0)
        pairs = np.zeros(len(gaps))
        pairs[:-1] = deviation[:-1] * deviation[1:] * (self.entity[:-1] == self.entity[1:])
        numerator = self.per_entity_sum(pairs)
        denominator = self.per_entity_sum(deviation**2)
        defined = (count >= min_gaps) & (denominator > 1e-12 * np.maximum(count, 1))
        result = np.full(self.n_entities, np.nan)
        result[defined] = numerator[defined] / denominator[defined]
        return result

    def longest_fraud_run(self) -> np.ndarray:
        """Each entity's longest run of consecutive fraud rows (its fraud episode, in rows)."""
        continues = np.zeros(len(self.fraud), dtype=bool)
        continues[1:] = self.fraud[1:] & self.fraud[:-1] & (self.entity[1:] == self.entity[:-1])
        run = np.cumsum(self.fraud & ~continues)  # a new run starts at a fraud row not continuing
        longest = np.zeros(self.n_entities)
        if self.fraud.any():
            lengths = np.bincount(run[self.fraud])
            np.maximum.at(longest, self.entity[self.fraud], lengths[run[self.fraud]])
        return longest

    def hours_of_day(self) -> np.ndarray:
        return np.mod(self.seconds, DAY) / HOUR

    def weekdays(self) -> np.ndarray:
        """0 on Mondays .. 6 on Sundays."""
        return np.mod(np.floor(self.seconds / DAY) + EPOCH_WEEKDAY, 7)
