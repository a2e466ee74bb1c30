"""Histories into the networks' space and back: attributes, lengths, starts, days and records.

Each window (:mod:`.windows`) becomes an attribute vector and a sequence of ``max_length`` record
vectors with a mask:

- attributes: the attribute columns through a :class:`~wgangp.data.transform.table_transform.
  TableTransform` (per history class, one row per window), then the history's length (log), the
  week it starts in (a whole number, standardised) and where in the week it starts (cos and sin
  of the angle: the day and the time of day);
- records: the whole days the gap since the previous record spans beyond the clock's wrap to the
  record's time of day (:func:`~wgangp.data.histories.windows.day_skips`; log1p, standardised:
  :class:`LogScale`), then the record columns, the row's class (``wgangp:rare``) and, per shared
  id, whether the row's id is one the history used before (``wgangp:repeat:<column>``: new,
  repeat, and empty when the column has gaps) through a second TableTransform, per row class;
- phases: cos and sin of each record's angle within the week and the day (from its wall-clock
  time), and its gap (log seconds): the critic's view of the calendar and the pace, which the
  generator computes from the start and its days and times of day, so dates and gaps always
  agree (Banksformer shows a GAN loses the calendar otherwise).

Both transforms keep the project's rules: every stored number is no entity's own (quantile knots
and bounds over ``ship.min_atom_rows`` entities), levels fewer entities hold are ``other``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from wgangp.config import Config
from wgangp.data.histories.roles import HistoryRoles
from wgangp.data.histories.windows import DAY, WEEK, Windows, gap_feature, week_phases
from wgangp.data.knots import private_range
from wgangp.data.schema.table_schema import ColumnSchema, TableSchema
from wgangp.data.transform.layout import Block
from wgangp.data.transform.table_transform import TableTransform

#: The derived columns of the records' transform and the attribute slots after the table's.
RARE = "wgangp:rare"
REPEAT = "wgangp:repeat:"
DAYS, LENGTH, WEEK_SLOT = "wgangp:days", "wgangp:length", "wgangp:week"
#: The record columns' share of repeat tokens: a new id, one used before in the history, none.
NEW, REPEATED, EMPTY = 0, 1, 2
#: Time features per record: cos and sin of the week's angle, then of the day's, then the gap.
PHASES = 5


@dataclass(frozen=True)
class LogScale:
    """A positive quantity's log (``log1p``: days; ``log``: lengths) standardised, clipped into
    ``[low, high]`` (log units) when mapped back: the generator's cell applies the same map."""

    mean: float
    std: float
    low: float
    high: float
    plus_one: bool = True

    def parameters(self) -> tuple[float, float, float, float]:
        """(mean, std, low, high): what the generator's layers map back with."""
        return self.mean, self.std, self.low, self.high

    def forward(self, values: np.ndarray) -> np.ndarray:
        logged = np.log1p(values) if self.plus_one else np.log(values)
        return (logged - self.mean) / self.std

    def inverse(self, z: np.ndarray) -> np.ndarray:
        logged = np.clip(self.mean + self.std * np.asarray(z, np.float64), self.low, self.high)
        return np.expm1(logged) if self.plus_one else np.exp(logged)

    @classmethod
    def fit(cls, logged: np.ndarray, low: float, high: float, plus_one: bool) -> LogScale:
        if len(logged) < 2 or float(np.std(logged)) < 1e-6:
            center = float(np.mean(logged)) if len(logged) else 0.0
            return cls(center, 1.0, low, high, plus_one)
        return cls(float(np.mean(logged)), float(np.std(logged)), low, high, plus_one)


@dataclass(frozen=True)
class HistoryArrays:
    """Windows in the networks' space: ``attributes`` [N, A], ``records`` [N, T, R], ``phases``
    [N, T, 4], ``mask`` [N, T] (1 where a record is), ``classes`` [N]."""

    attributes: np.ndarray
    records: np.ndarray
    phases: np.ndarray
    mask: np.ndarray
    classes: np.ndarray


class HistoryEncoding:
    """Fitted on the training windows; maps windows to :class:`HistoryArrays` (module doc)."""

    def __init__(
        self,
        roles: HistoryRoles,
        max_length: int,
        attributes: TableTransform | None,
        records: TableTransform,
        days: LogScale,
        length: LogScale,
        week: tuple[float, float, float, float],
        moves: tuple[float, float] | None = None,
    ) -> None:
        self.roles, self.max_length = roles, max_length
        self.attributes, self.records = attributes, records
        self.days, self.length = days, length
        self.week = week  # mean, std, low, high of the start's week number
        # Mean and deviation of the logit of the clock's moves within a day, as shares of a day;
        # None in bundles saved before it.
        self.moves = moves

    @property
    def attribute_layout(self) -> tuple[Block, ...]:
        """The table's attributes, the length and the week: the slots the heads shape (the two
        phase slots follow, on the unit circle)."""
        blocks = list(self.attributes.layout) if self.attributes is not None else []
        start = blocks[-1].stop if blocks else 0
        blocks += [
            Block(LENGTH, "continuous", start, 1),
            Block(WEEK_SLOT, "continuous", start + 1, 1),
        ]
        return tuple(blocks)

    @property
    def record_layout(self) -> tuple[Block, ...]:
        """The days, then the records' transform's blocks."""
        shifted = [Block(b.column, b.kind, b.start + 1, b.width) for b in self.records.layout]
        return (Block(DAYS, "continuous", 0, 1), *shifted)

    @property
    def attribute_width(self) -> int:
        return self.attribute_layout[-1].stop + 2

    @property
    def record_width(self) -> int:
        return self.record_layout[-1].stop

    @property
    def rare_slots(self) -> tuple[int, int]:
        """Where the row class's one-hot lies in a record vector."""
        block = next(b for b in self.record_layout if b.column == RARE)
        return block.start, block.stop

    @classmethod
    def fit(
        cls, windows: Windows, roles: HistoryRoles, schema: TableSchema, cfg: Config
    ) -> HistoryEncoding:
        """Fit on the training windows (their entities are what the k rules count)."""
        k, pre = cfg.ship.min_atom_rows, cfg.preprocess
        options: dict[str, Any] = dict(
            scaling=pre.scaling, per_class=pre.per_class, point_masses=pre.point_masses,
            min_rows=k,
        )  # fmt: skip
        attributes = None
        if roles.attributes:
            attribute_schema = _schema(schema, [schema.column(n) for n in roles.attributes])
            firsts = windows.first_rows()
            attributes = TableTransform.fit(
                firsts, attribute_schema, windows.classes, source="history attributes",
                entities=windows.owners, **options,
            )  # fmt: skip
        record_frame = record_columns(windows, roles)
        derived = [ColumnSchema(RARE, "categorical", levels=(0, 1))] + [
            ColumnSchema(f"{REPEAT}{name}", "categorical", levels=tokens)
            for name in roles.shared
            if (tokens := (NEW, REPEATED, EMPTY) if (train_codes(windows, name) < 0).any()
                else (NEW, REPEATED))
        ]  # fmt: skip
        record_schema = _schema(schema, [*(schema.column(n) for n in roles.records), *derived])
        row_owners = windows.rows[roles.entity].to_numpy()
        # Every number of a record through its quantiles: with no calibration after it, a scale
        # by mean and deviation sent a skewed amount's lower tail to its bound.
        numbers = [c.name for c in record_schema.features if c.kind != "categorical"]
        records = TableTransform.fit(
            record_frame, record_schema, windows.row_classes, source="history records",
            entities=row_owners, quantile_columns=numbers, **options,
        )  # fmt: skip
        later = windows.position > 0
        skips = windows.days[later]
        high = (
            private_range(skips, k, whole=True, owners=row_owners[later])[1]
            if later.sum() >= 2 * k else 365.0
        )  # fmt: skip
        days = LogScale.fit(np.log1p(skips), 0.0, float(np.log1p(high)), plus_one=True)
        logits = move_logits(windows.gaps[later], skips)
        moves = (0.0, 1.0)  # a sigmoid's own scale where no history has two rows
        if len(logits) >= 2:
            moves = (float(logits.mean()), max(float(logits.std()), 0.1))
        length = LogScale.fit(
            np.log(windows.lengths), 0.0, float(np.log(cfg.history.max_length)), plus_one=False
        )
        weeks = np.floor(windows.seconds[windows.starts] / WEEK)
        w_low, w_high = private_range(weeks, min(k, len(weeks)), whole=True, owners=windows.owners)
        week = (float(weeks.mean()), max(float(weeks.std()), 1.0), w_low, w_high)
        return cls(roles, cfg.history.max_length, attributes, records, days, length, week, moves)

    def arrays(self, windows: Windows) -> HistoryArrays:
        """``windows`` in the networks' space (module doc)."""
        n, t = windows.count, self.max_length
        attributes = np.zeros((n, self.attribute_width), np.float32)
        width = self.attributes.width if self.attributes is not None else 0
        if self.attributes is not None:
            attributes[:, :width] = self.attributes.transform(
                windows.first_rows(), windows.classes, "history attributes"
            )
        starts = windows.seconds[windows.starts]
        mean, std, _, _ = self.week
        angle = 2 * np.pi * np.mod(starts, WEEK) / WEEK
        attributes[:, width] = self.length.forward(windows.lengths.astype(np.float64))
        attributes[:, width + 1] = (np.floor(starts / WEEK) - mean) / std
        attributes[:, width + 2], attributes[:, width + 3] = np.cos(angle), np.sin(angle)
        flat = np.zeros((len(windows.rows), self.record_width), np.float32)
        flat[:, 0] = np.where(windows.position > 0, self.days.forward(windows.days), 0.0)
        flat[:, 1:] = self.records.transform(
            record_columns(windows, self.roles), windows.row_classes, "history records"
        )
        records = np.zeros((n, t, self.record_width), np.float32)
        records[windows.window, windows.position] = flat
        phases = np.zeros((n, t, PHASES), np.float32)
        phases[windows.window, windows.position] = np.concatenate(
            [week_phases(windows.seconds),
             gap_feature(windows.gaps, windows.position > 0)[:, None]], -1
        )  # fmt: skip
        mask = np.zeros((n, t), np.float32)
        mask[windows.window, windows.position] = 1.0
        return HistoryArrays(attributes, records, phases, mask, windows.classes.astype(np.int64))

    def to_dict(self) -> dict[str, Any]:
        return {
            "roles": self.roles.to_dict(),
            "max_length": self.max_length,
            "attributes": self.attributes.to_dict() if self.attributes is not None else None,
            "records": self.records.to_dict(),
            "days": self.days.__dict__,
            "length": self.length.__dict__,
            "week": list(self.week),
            "moves": list(self.moves) if self.moves is not None else None,
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any], source: str) -> HistoryEncoding:
        attributes = raw["attributes"]
        return cls(
            HistoryRoles.from_dict(raw["roles"]),
            int(raw["max_length"]),
            TableTransform.from_dict(attributes, source) if attributes is not None else None,
            TableTransform.from_dict(raw["records"], source),
            LogScale(**raw["days"]),
            LogScale(**raw["length"]),
            (
                float(raw["week"][0]),
                float(raw["week"][1]),
                float(raw["week"][2]),
                float(raw["week"][3]),
            ),
            _pair(raw["moves"]) if raw.get("moves") is not None else None,
        )


def move_logits(gaps: np.ndarray, days: np.ndarray) -> np.ndarray:
    """The logit of each gap's move of the clock within a day (the gap past its whole ``days``),
    as a share of a day a second inside its ends: the scale the generator draws moves on, where
    a burst's minutes (-5) and a habit's hours (-1 to 2) are equally in reach."""
    share = np.clip((gaps - days * DAY) / DAY, 1.0 / DAY, 1.0 - 1.0 / DAY)
    return np.log(share / (1.0 - share))


def _pair(raw: list) -> tuple[float, float]:
    return float(raw[0]), float(raw[1])


def record_columns(windows: Windows, roles: HistoryRoles) -> pd.DataFrame:
    """The records' transform's frame: the record columns, the row class, each shared id's
    repeat token (new, used before in the window, or empty)."""
    rows = windows.rows
    frame = rows.loc[:, list(roles.records)].copy()
    frame[RARE] = windows.row_classes
    for name in roles.shared:
        codes = rows[name].to_numpy(np.int64)
        seen = pd.DataFrame({"w": windows.window, "id": codes}).duplicated(keep="first")
        frame[f"{REPEAT}{name}"] = np.where(codes < 0, EMPTY, np.where(seen, REPEATED, NEW))
    return frame


def train_codes(windows: Windows, name: str) -> np.ndarray:
    """A shared column's codes in the windows' rows (-1: empty)."""
    return windows.rows[name].to_numpy(np.int64)


def _schema(table: TableSchema, features: list[ColumnSchema]) -> TableSchema:
    """A schema of ``features`` and the table's label (which a transform's schema needs)."""
    return TableSchema(
        columns=(*features, table.column(table.label)), label=table.label, positive=table.positive
    )


def start_seconds(week_z: np.ndarray, cos: np.ndarray, sin: np.ndarray, week: tuple) -> np.ndarray:
    """A history's start in wall-clock seconds: its week (whole, within the fitted bounds) and
    its angle within the week."""
    mean, std, low, high = week
    weeks = np.clip(np.round(mean + std * np.asarray(week_z, np.float64)), low, high)
    angle = np.mod(np.arctan2(sin, cos), 2 * np.pi)
    return weeks * WEEK + angle / (2 * np.pi) * WEEK
