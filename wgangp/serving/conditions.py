"""Conditional sampling: rows that meet conditions on their columns, drawn from the model's own
conditional distribution.

A condition (``where``) maps a column to the levels it may hold (a categorical, its ``other``
level included: the model makes it) or to a ``[low, high]`` range, both ends included, either open
(``None``; datetimes as ISO text, a date without a time as its high end meaning that whole day:
``["2024-06-01", "2024-06-01"]`` is the day, not the instant of its midnight). Rows
are drawn as unconditional rows are, in rounds, and kept when they meet every condition: nothing
is clipped or overwritten into shape, so a column not conditioned on follows the model's own
distribution given the conditions. The rounds stop at :data:`MAX_DRAWN` rows, or sooner when the
share met so far cannot reach ``n`` within them; then one line gives that share and names the
rarest condition, instead of a search that never ends. :func:`sample_where` is that rejection
over any draw (a sample with a copula share); a generator's rows go through
:mod:`.latent_moves`, which starts as rejection and makes rare conditions cheap.

Conditions are checked against the schema before anything is drawn (no TensorFlow here): an
unknown column, a level the schema lacks, a range outside a clipped column's bounds, the label
(asked for with ``label=``), each one line.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from wgangp.data.schema.cells import column_hint, shown, shown_text
from wgangp.data.schema.column_codes import bound_seconds, to_seconds
from wgangp.data.schema.table_schema import ColumnSchema, TableSchema
from wgangp.data.schema.text_formats import in_zone
from wgangp.errors import WgangpError

#: The most rows one conditional call draws before it gives up: a condition met by 1 row in 10^5
#: yields about 10 rows within them (docs/api.md measures the time).
MAX_DRAWN = 1_000_000
#: Rows drawn in the first round, at least; later rounds aim at what is still missing.
FIRST_ROUND = 20_000
#: The largest round (memory: a round's rows are one frame).
MAX_ROUND = 250_000
#: A date written without a time of day (ISO ``2024-06-01``).
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
#: How far before the next midnight a day written as a high end reaches (seconds): the day's last
#: instant a float of seconds since 1970 tells from midnight.
_DAY_END_S = 1e-6


class ConditionError(WgangpError):
    """A ``where`` the model cannot meet: a bad column, level or range, or too rare a share."""

    reason = "config"


@dataclass(frozen=True)
class Condition:
    """One column's condition: the levels it may hold, or a closed range (None: open), in the
    column's units (seconds since 1970 UTC for datetimes)."""

    column: str
    kind: str
    levels: tuple[Any, ...] | None = None
    low: float | None = None
    high: float | None = None
    #: How the line names it: ``merchant in [online]``, ``amount in [500, None]``.
    text: str = ""

    def met(self, frame: pd.DataFrame) -> np.ndarray:
        """Which rows of ``frame`` meet the condition (a gap meets none)."""
        values = frame[self.column]
        if self.levels is not None:
            return values.isin(self.levels).to_numpy(copy=True)
        if self.kind == "datetime":
            numbers = pd.Series(to_seconds(pd.to_datetime(values)), index=values.index)
        else:
            numbers = pd.to_numeric(values, errors="coerce").astype("float64")
        met = numbers.notna().to_numpy(copy=True)
        if self.low is not None:
            met &= (numbers >= self.low).to_numpy()
        if self.high is not None:
            met &= (numbers <= self.high).to_numpy()
        return met


def parse_where(
    where: Mapping[str, Any],
    schema: TableSchema,
    bounds: Mapping[str, tuple[float, float]] | None = None,
) -> tuple[Condition, ...]:
    """``where`` checked against ``schema``: one :class:`Condition` per column, or one line.
    ``bounds``: each clipped column's fitted bounds in its units (datetimes in seconds)."""
    if not isinstance(where, Mapping):
        raise ConditionError(
            f"where must map columns to levels or [low, high] ranges, got {shown_text(where)}; "
            "e.g. where={merchant: [online], amount: [500, null]}"
        )
    conditions = []
    for name, wanted in where.items():
        column = _column(str(name), schema)
        if column.kind == "categorical":
            conditions.append(_levels(column, wanted))
        else:
            conditions.append(_range(column, wanted, (bounds or {}).get(column.name)))
    return tuple(conditions)


def sample_where(
    draw: Callable[[int, int], pd.DataFrame],
    n: int,
    conditions: tuple[Condition, ...],
    seed: int,
    max_drawn: int = MAX_DRAWN,
) -> pd.DataFrame:
    """``n`` rows of ``draw(rows, seed)`` that meet every one of ``conditions`` (at least one),
    drawn in rounds of fresh seeds (the first round's seed is ``seed``); ConditionError when
    they cannot be found within ``max_drawn`` rows."""
    if n == 0:
        return draw(0, seed)  # the columns and their types
    kept: list[pd.DataFrame] = []
    have = drawn = 0
    met_each = np.zeros(len(conditions), np.int64)
    round_ = 0
    while have < n:
        rate = (have + 3) / drawn if drawn else None  # an upper estimate while few are met
        if rate is not None and have + rate * (max_drawn - drawn) < n:
            break
        wanted = FIRST_ROUND if rate is None else int(1.2 * (n - have) / rate)
        rows = int(min(max(wanted, FIRST_ROUND, 2 * n if rate is None else 0), MAX_ROUND))
        rows = min(rows, max_drawn - drawn)
        if rows <= 0:
            break
        frame = draw(rows, round_seed(seed, round_))
        masks = np.stack([c.met(frame) for c in conditions])
        every = masks.all(axis=0)
        met_each += masks.sum(axis=1)
        kept.append(frame[every])
        have += int(every.sum())
        drawn += rows
        round_ += 1
    if have < n:
        raise ConditionError(too_rare(conditions, met_each, have, drawn, n))
    return pd.concat(kept, ignore_index=True).iloc[:n].reset_index(drop=True)


def round_seed(seed: int, round_: int) -> int:
    """Round 0 draws with ``seed`` itself, later rounds with seeds of their own (of the seed
    and the round), so a call is the same for the same seed."""
    if round_ == 0:
        return seed
    return int(np.random.SeedSequence([seed, round_]).generate_state(1)[0])


def too_rare(
    conditions: tuple[Condition, ...], met_each: np.ndarray, met: int, drawn: int, n: int
) -> str:
    rarest = int(np.argmin(met_each))
    alone = f" ({_percent(int(met_each[rarest]), drawn)} alone)" if len(conditions) > 1 else ""
    return (
        f"where: {met} of {drawn:,} generated rows ({_percent(met, drawn)}) met every condition "
        f"and {n} are asked for; the rarest is {conditions[rarest].text}{alone}: the model "
        "rarely makes such rows; widen the conditions or ask for fewer rows"
    )


def _percent(part: int, whole: int) -> str:
    share = 100 * part / max(whole, 1)
    return f"{share:.2g}%" if share else "0%"


def _column(name: str, schema: TableSchema) -> ColumnSchema:
    if name == schema.label:
        raise ConditionError(
            f"where: {name} is the label; ask for its class with label= (one class a call)"
        )
    names = [c.name for c in schema.features]
    if name not in names:
        hint = column_hint(name, names)
        raise ConditionError(f"where: {name!r} is not a column of the samples; {hint}")
    return schema.column(name)


def _levels(column: ColumnSchema, wanted: Any) -> Condition:
    """A categorical's condition: a level or a list of levels, each one of the schema's."""
    wanted = list(wanted) if isinstance(wanted, list | tuple | set) else [wanted]
    if not wanted:
        raise ConditionError(f"where: {column.name} lists no level; give at least one")
    levels = []
    for value in wanted:
        level = column.lookup.find(value)
        if level is None:
            known = list(column.levels or ())
            raise ConditionError(
                f"where: {shown_text(value)} is not a level of {column.name} the model makes; "
                f"its levels are {shown(known, 8)}"
            )
        levels.append(level)
    text = f"{column.name} in [{', '.join(shown_text(v) for v in levels)}]"
    return Condition(column.name, column.kind, levels=tuple(levels), text=text)


def _range(column: ColumnSchema, wanted: Any, bounds: tuple[float, float] | None) -> Condition:
    """A number's or a datetime's condition: ``[low, high]``, either end None (open)."""
    if not isinstance(wanted, list | tuple) or len(wanted) != 2:
        raise ConditionError(
            f"where: {column.name} is a {column.kind} column: give a range [low, high] (null for "
            f"an open end), got {shown_text(wanted)}"
        )
    low, high = _number(column, wanted[0]), _number(column, wanted[1], high_end=True)
    shown_range = f"[{', '.join('null' if e is None else shown_text(e) for e in wanted)}]"
    if low is not None and high is not None and low > high:
        raise ConditionError(f"where: {column.name}'s range {shown_range} is empty (low > high)")
    if bounds is not None and column.clip:
        lowest, highest = bounds
        if (low is not None and low > highest) or (high is not None and high < lowest):
            raise ConditionError(
                f"where: {column.name} in {shown_range} lies outside the values "
                f"the model makes ({_shown_bound(column, lowest)} to "
                f"{_shown_bound(column, highest)})"
            )
    return Condition(
        column.name, column.kind, low=low, high=high, text=f"{column.name} in {shown_range}"
    )


def _number(column: ColumnSchema, end: Any, high_end: bool = False) -> float | None:
    """An end of a range in the column's units; a day (a date without a time) as the high end
    reaches to that day's last instant."""
    if end is None:
        return None
    if column.kind == "datetime":
        try:
            stamp = pd.Timestamp(str(end))
        except (ValueError, TypeError):
            stamp = None
        if stamp is None or pd.isna(stamp):
            raise ConditionError(
                f"where: {column.name} is a datetime column: give ISO dates "
                f"(2024-03-01 or 2024-03-01T23:00), got {shown_text(end)}"
            )
        day = _is_day(end)
        if day and high_end:
            stamp += pd.Timedelta(days=1)
        if column.zone is not None:
            stamp = in_zone(stamp, column.zone)
        seconds = bound_seconds(stamp.isoformat())
        return seconds - _DAY_END_S if day and high_end else seconds
    try:
        number = float("nan") if isinstance(end, bool) else float(end)  # True is no number
    except (TypeError, ValueError):
        number = float("nan")
    if not np.isfinite(number):
        raise ConditionError(
            f"where: {column.name} is a number column: give finite numbers or null, "
            f"got {shown_text(end)}"
        )
    return number


def _is_day(end: Any) -> bool:
    """Whether a datetime end names a whole day: ISO text without a time, or a ``date``."""
    if isinstance(end, dt.date) and not isinstance(end, dt.datetime):
        return True
    return isinstance(end, str) and _DAY.fullmatch(end.strip()) is not None


def _shown_bound(column: ColumnSchema, value: float) -> str:
    if column.kind == "datetime":
        return pd.Timestamp(value, unit="s").isoformat()
    return shown_text(round(value, 6))
