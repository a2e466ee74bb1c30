"""Rows that meet rare conditions at the cost of common ones: resample-move over the noise.

Rejection keeps the generated rows that meet the conditions, so a condition met by a share s of
the rows costs n / s rows: a level the model makes once in 10,000 rows costs 10,000 rows per row
returned. The same rows can be reached through the noise z they come from. A row generated from
z meets every condition with probability

    w(z) = product over the conditions of the heads' probability of the levels asked for (a
           categorical), or whether the value lies in the range (a number or a date), times the
           chance the cell is not a gap,

which one generator call gives exactly (the calibration applied), so the model's conditional
distribution is pi(z) proportional to N(z; 0, I) w(z), with, given z, each conditioned column's
level drawn from the heads' probabilities restricted to the levels asked for, no gap drawn where
a condition is, and every other column drawn as in any row. Nothing is clipped or overwritten.
:func:`sample_conditioned` draws it:

1. Rounds of z ~ N(0, I), the rows rejection would draw (the same rows for the same seed); the
   rows among them that meet every condition are kept. Where the conditions are common, that is
   the answer, as it was.
2. Where the share met is under 1 / MOVES, and the weights' effective sample size has reached
   ``min(missing rows, ESS_MIN)``: the missing rows'
   noise is drawn from the rounds in proportion to w (systematic resampling),
3. then moved MOVES times by Metropolis-Hastings, each move leaving pi invariant, so copies of
   one resampled z drift apart while staying distributed as pi. The moves alternate (STEPS): a
   draw from a normal q fitted to the weighted rounds, independent of z (kept with probability
   ``min(1, w(z') N(z') q(z) / (w(z) N(z) q(z')))``: it decorrelates where pi is one lump), and a
   preconditioned Crank-Nicolson step ``z' = sqrt(1 - b^2) z + b xi``, which leaves N(0, I)
   invariant and is kept with probability ``min(1, w(z') / w(z))`` (large steps travel, small
   ones are kept where w is narrow).
4. Each moved noise's current row.

A call costs the rounds (about ESS_MIN / s rows, at most MAX_DRAWN) plus MOVES generated rows per
row moved, instead of n / s; docs/api.md measures it, and that the rows read as the level's real
rows as well as rejection's do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pandas as pd

from wgangp.data.transform.layout import MISSING, Block, draw_discrete, level_probabilities
from wgangp.serving.conditions import (
    FIRST_ROUND,
    MAX_DRAWN,
    MAX_ROUND,
    Condition,
    ConditionError,
    round_seed,
    too_rare,
)

#: Moves per resampled noise: also the share (1 / MOVES) under which moving beats rejection.
MOVES = 16
#: The moves' cycle: None, a draw from a normal fitted to the weighted rounds (independent of
#: where the noise is: it decorrelates); a number, a Crank-Nicolson step of that size (0.8: far,
#: mostly refused where w is narrow; 0.1: a nudge, mostly kept).
STEPS = (None, 0.8, None, 0.4, None, 0.2, None, 0.1)
#: How much wider than the weighted rounds' spread the fitted normal is, and its least spread.
WIDEN, SD_FLOOR = 1.5, 1e-3
#: The effective sample size the rounds' weights must reach before resampling from them.
ESS_MIN = 64
#: The most rounds' rows kept to resample from (memory: where conditions are common, rejection
#: answers and the pool is never used).
POOL_ROWS = 100_000
#: Random streams beside a round's seed: the free draws of levels and gaps (the stream an
#: unconditional sample uses), the draws given the conditions; and beside the call's seed, the
#: moves'.
_FREE, _GIVEN, _MOVES = 1, 2, 3


class LatentModel(Protocol):
    """What the sampler needs of a synthesizer, one class at a time."""

    @property
    def latent_dim(self) -> int: ...

    @property
    def layout(self) -> tuple[Block, ...]: ...

    @property
    def levels(self) -> Mapping[str, Sequence[object]]:
        """Each categorical feature's levels, in the order of its block's slots."""

    def decode(self, z: np.ndarray) -> np.ndarray:
        """Noise [rows, latent_dim] -> the heads' rows as sampling reads them (calibrated)."""

    def rows(self, x: np.ndarray) -> pd.DataFrame:
        """Rows with levels and gaps drawn -> the sample's frame (every column, the label)."""


def latent_noise(rows: int, latent_dim: int, seed: int) -> np.ndarray:
    """The noise of ``rows`` generated rows for ``seed``: what an unconditional sample draws."""
    return np.random.default_rng(seed).standard_normal((rows, latent_dim)).astype(np.float32)


@dataclass
class Weighed:
    """Rows of the heads, weighed against the conditions."""

    w: np.ndarray  # [rows] the chance a row of this noise meets every condition
    given: np.ndarray  # [rows, width] levels and gaps drawn given the conditions
    free: np.ndarray  # [rows, width] levels and gaps drawn as an unconditional sample draws them
    met: np.ndarray  # [conditions, rows] each condition met by the free row


class Target:
    """The conditions laid onto the networks' space: :meth:`weigh` gives w(z) and the rows."""

    def __init__(self, model: LatentModel, conditions: Sequence[Condition]) -> None:
        self.model = model
        self.conditions = tuple(conditions)
        blocks: dict[str, list[Block]] = {}
        for block in model.layout:
            blocks.setdefault(block.column, []).append(block)
        self.values = [blocks[c.column][0] for c in self.conditions]
        self.gaps = [
            next((b for b in blocks[c.column] if b.kind == MISSING), None) for c in self.conditions
        ]
        self.slots = [
            None
            if c.levels is None
            else np.array([list(model.levels[c.column]).index(v) for v in c.levels])
            for c in self.conditions
        ]

    def weigh(
        self, x: np.ndarray, free: np.random.Generator, given: np.random.Generator
    ) -> Weighed:
        """Heads' rows ``x``: w, and their levels and gaps drawn freely (``free``: an
        unconditional sample's stream) and given the conditions (``given``)."""
        rows = len(x)
        drawn = draw_discrete(x, self.model.layout, free)
        out = drawn.copy()
        w = np.ones(rows)
        met = np.zeros((len(self.conditions), rows), bool)
        no_gap = np.ones((len(self.conditions), rows), bool)
        laid = zip(self.values, self.gaps, self.slots, strict=True)
        for i, (value, gap, slots) in enumerate(laid):
            if gap is not None:
                w *= 1.0 - np.clip(x[:, gap.start].astype(np.float64), 0.0, 1.0)
                no_gap[i] = drawn[:, gap.start] < 0.5
                out[:, gap.start] = 0.0
            if slots is None:
                continue
            p = level_probabilities(x[:, value.start : value.stop])[:, slots]
            share = p.sum(axis=1)
            w *= share
            met[i] = (drawn[:, value.start + slots] > 0.5).any(axis=1) & no_gap[i]
            out[:, value.start : value.stop] = 0.0
            out[np.arange(rows), value.start + slots[_restricted(p, share, given)]] = 1.0
        ranges = [i for i, slots in enumerate(self.slots) if slots is None]
        if ranges and rows:
            frame = self.model.rows(out)
            for i in ranges:
                inside = self.conditions[i].met(frame)
                w *= inside
                met[i] = inside & no_gap[i]
        return Weighed(w, out, drawn, met)


def _restricted(p: np.ndarray, share: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Per row, the index among the allowed levels drawn in proportion to ``p`` (each alike where
    the heads give them nothing)."""
    q = np.where(share[:, None] > 0, p / np.where(share > 0, share, 1.0)[:, None], 1 / p.shape[1])
    picked = (q.cumsum(axis=1) < rng.random((len(p), 1))).sum(axis=1)
    return np.minimum(picked, p.shape[1] - 1)


def effective_size(w: np.ndarray) -> float:
    """Kish's effective sample size of weights ``w``: (sum w)^2 / sum w^2 (0 for none)."""
    total = float(w.sum())
    return total * total / float(np.square(w).sum()) if total > 0 else 0.0


class _Pool:
    """The rounds' noise of positive weight, with its weights and rows given the conditions."""

    def __init__(self) -> None:
        self.z: list[np.ndarray] = []
        self.w: list[np.ndarray] = []
        self.given: list[np.ndarray] = []

    def add(self, z: np.ndarray, weighed: Weighed) -> None:
        """The round's noise of positive weight, up to POOL_ROWS in all (the rounds' rows are
        independent draws, so the first ones are a sample like any other)."""
        room = POOL_ROWS - sum(len(w) for w in self.w)
        keep = np.flatnonzero(weighed.w > 0)[: max(room, 0)]
        self.z.append(z[keep])
        self.w.append(weighed.w[keep])
        self.given.append(weighed.given[keep])

    def ess(self) -> float:
        return effective_size(np.concatenate(self.w)) if self.w else 0.0

    def normal(self) -> _PoolNormal:
        """A normal fitted to the weighted pool, its spread widened (an independence proposal)."""
        z, w = np.concatenate(self.z).astype(np.float64), np.concatenate(self.w)
        mean = np.average(z, axis=0, weights=w)
        sd = np.sqrt(np.average(np.square(z - mean), axis=0, weights=w))
        return _PoolNormal(mean, WIDEN * np.maximum(sd, SD_FLOOR))

    def resample(self, count: int, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
        """``count`` draws in proportion to the weights (systematic resampling)."""
        w = np.concatenate(self.w)
        edges = np.cumsum(w / w.sum())
        picks = np.searchsorted(edges, (rng.random() + np.arange(count)) / count, side="right")
        picks = np.minimum(picks, len(w) - 1)
        return np.concatenate(self.z)[picks], w[picks], np.concatenate(self.given)[picks]


@dataclass(frozen=True)
class _PoolNormal:
    """N(mean, diag(sd^2)) over the noise: proposes z' independently of z."""

    mean: np.ndarray
    sd: np.ndarray

    def draw(self, count: int, rng: np.random.Generator) -> np.ndarray:
        return self.mean + self.sd * rng.standard_normal((count, len(self.mean)))

    def log_prior_ratio(self, z: np.ndarray, proposal: np.ndarray) -> np.ndarray:
        """log [N(z') q(z) / (N(z) q(z'))]: the Metropolis-Hastings factor besides w' / w."""

        def log_q(v: np.ndarray) -> np.ndarray:
            return -0.5 * np.square((v - self.mean) / self.sd).sum(axis=1)

        def log_n(v: np.ndarray) -> np.ndarray:
            return -0.5 * np.square(v).sum(axis=1)

        z = z.astype(np.float64)
        return log_n(proposal) - log_n(z) + log_q(z) - log_q(proposal)


def sample_conditioned(
    model: LatentModel,
    n: int,
    conditions: Sequence[Condition],
    seed: int,
    max_drawn: int = MAX_DRAWN,
    *,
    moved_only: bool = False,
) -> pd.DataFrame:
    """``n`` rows of ``model`` meeting every one of ``conditions`` (module doc): rejection's rows
    while they come cheaply, moved noise for the rest; ConditionError when the rounds cannot
    find them within ``max_drawn`` rows (or MOVES rows per row asked, if more: what moving
    them would cost). ``moved_only``: every row moved (the rounds only weigh
    noise), to judge moved rows where rejection would have answered (scripts/)."""
    target = Target(model, conditions)
    kept: list[pd.DataFrame] = []
    pool = _Pool()
    have = drawn = round_ = 0
    met_each = np.zeros(len(target.conditions), np.int64)
    max_drawn = max(max_drawn, MOVES * n)
    while have < n:
        missing, need, ess = n - have, min(n - have, ESS_MIN), pool.ess()
        rejecting = not moved_only and _rejection_pays(have, drawn)
        if drawn and ess >= need and not rejecting:
            kept.append(_moved(model, target, pool, missing, seed))
            have = n
            break
        rows = _round_rows(have, ess, drawn, missing, need, rejecting, max_drawn, n)
        if rows <= 0:
            break
        s = round_seed(seed, round_)
        z = latent_noise(rows, model.latent_dim, s)
        weighed = target.weigh(
            model.decode(z), np.random.default_rng([s, _FREE]), np.random.default_rng([s, _GIVEN])
        )
        every = weighed.met.all(axis=0) & (not moved_only)
        kept.append(model.rows(weighed.free[every]))
        pool.add(z, weighed)
        have += int(every.sum())
        met_each += weighed.met.sum(axis=1)
        drawn += rows
        round_ += 1
    if have < n:
        raise ConditionError(too_rare(target.conditions, met_each, have, drawn, n))
    return pd.concat(kept, ignore_index=True).iloc[:n].reset_index(drop=True)


def _rejection_pays(have: int, drawn: int) -> bool:
    """Whether rejection should go on: its share met so far is at least 1 / MOVES, so a row
    costs it no more generated rows than moving one would (before any round: yes)."""
    return not drawn or have * MOVES >= drawn


def _round_rows(
    have: int,
    ess: float,
    drawn: int,
    missing: int,
    need: int,
    rejecting: bool,
    max_drawn: int,
    n: int,
) -> int:
    """The next round's rows: enough for what is missing at the rate so far (rejection's rows,
    or the weights' effective size); 0 when neither can be reached within the budget."""
    if not drawn:
        return int(min(max(FIRST_ROUND, 2 * n), MAX_ROUND, max_drawn))
    left = max_drawn - drawn
    # Upper estimates while few are met: a share that is rarely zero by chance.
    rate, ess_rate = (have + 3) / drawn, (ess + 3) / drawn
    if have + rate * left < n and ess + ess_rate * left < need:
        return 0
    wanted = missing / rate if rejecting else (need - ess) / ess_rate
    return int(min(max(1.2 * wanted, FIRST_ROUND), MAX_ROUND, left))


def _moved(model: LatentModel, target: Target, pool: _Pool, count: int, seed: int) -> pd.DataFrame:
    """``count`` rows: noise resampled from the pool, then MOVES moves each (module doc)."""
    rng = np.random.default_rng([seed, _MOVES])
    z, w, rows = pool.resample(count, rng)
    fitted = pool.normal()
    for move in range(MOVES):
        step = STEPS[move % len(STEPS)]
        if step is None:  # an independent draw from the pool's normal
            proposal = fitted.draw(count, rng)
            log_ratio = fitted.log_prior_ratio(z, proposal)
        else:
            proposal = np.sqrt(1.0 - step * step) * z + step * rng.standard_normal(z.shape)
            log_ratio = np.zeros(count)
        proposal = proposal.astype(np.float32)
        weighed = target.weigh(model.decode(proposal), rng, rng)
        # u < (w' / w) * ratio, never where w' is 0
        with np.errstate(divide="ignore"):
            log_odds = np.log(weighed.w) - np.log(w) + log_ratio
        accepted = np.log(rng.random(count)) < log_odds
        z[accepted], w[accepted] = proposal[accepted], weighed.w[accepted]
        rows[accepted] = weighed.given[accepted]
    return model.rows(rows)
