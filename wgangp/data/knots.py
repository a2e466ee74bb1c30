"""Quantile knots that hold no training value: each knot is the mean of a group of >= k entities.

A quantile table fitted with one entry per training row (scikit-learn's ``QuantileTransformer``
with ``n_quantiles`` = rows) stores every row's value of every column, and a bundle is shared
with people who must not read the training customers' amounts and times (docs/privacy.md). Here
each column's sorted values are cut into consecutive groups of at least ``min_rows`` rows (at
most ``max_knots`` groups) and each group is stored as its mean, the k-anonymous aggregate of
statistical disclosure control (microaggregation). A group whose rows all share one value (the
frauds' Amount 1.00) stores that value exactly: many rows hold it, so it names no one; such a
value (an atom) spans its rows' share of the scale, half a rank past its first and last row, so
two neighbouring atoms meet with no values between them, as in the data. A mean that
lands on a value fewer than ``min_rows`` rows hold moves halfway to the next distinct value of its
group, so it equals none. Two more knots extend the line through the outermost groups to the
probabilities 0 and 1: the generated tails keep spreading instead of piling up on one value.

Knots never decrease (groups are consecutive in sorted order and every knot stays within its
group's range) and the references are shared by all columns, as a ``QuantileTransformer``'s are.
A class with fewer than ``2 * min_rows`` rows has no two such groups: it gets two knots, its mean
-/+ sqrt(3) standard deviations (the uniform with its mean and variance); the transform's fit warns
about such a class once, since so few rows cannot be hidden in groups of ``min_rows``.

**Entities, not rows.** Every count above is of distinct *owners* when each row's owner is given
(``owners``: the entity codes of :mod:`wgangp.data.entities`, a customer's rows sharing one):
a value is an atom when ``min_rows`` customers hold it, a group closes once it spans ``min_rows``
customers (neighbouring groups merge until it does; the knots between merged groups' means lie on
the line through them), a bound is the mean of the ``min_rows`` most extreme customers' values.
A customer with six rows of one amount is one holder of it, and so is a row repeated five times.
Without ``owners`` each row is its own.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

log = logging.getLogger(__name__)

#: The default k: no stored number comes from fewer training rows (``ship.min_atom_rows``).
DEFAULT_MIN_ROWS = 5
#: Two values closer than this (relative, at least 1e-9 absolute) count as equal.
SAME = 1e-9
#: A value is a point mass of a column when at least this share of the rows hold it (and at least
#: ``min_rows`` of them): a rate from a lookup, a favourite ratio, an amount of exactly 0, a cap.
POINT_MASS_SHARE = 0.01
#: Where two atoms meet, the later one starts this much further on the probability scale.
_GAP = 1e-12


def grouped_knots(
    x: np.ndarray, min_rows: int, max_knots: int, owners: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(references, quantiles)`` of the rows ``x`` (rows, columns) held by ``owners`` (one
    entity code per row; None: each row its own): ``references`` in [0, 1] increasing,
    ``quantiles`` (knots, columns) non-decreasing per column."""
    x = np.asarray(x, np.float64)
    n = len(x)
    if min_rows < 2:
        raise ValueError(f"min_rows must be >= 2 (got {min_rows})")
    owners = None if owners is None else np.asarray(owners, np.int64)
    if owners is not None and len(owners) != n:
        raise ValueError(f"{len(owners)} owners for {n} rows")
    holders = n if owners is None else len(pd.unique(owners))
    if holders == n:
        owners = None  # each row its own owner: the row counts are the owner counts
    if holders < 2 * min_rows:  # the transform's fit warns once per class (TableTransform.fit)
        log.debug(
            "%d entities of a class are fewer than 2 x %d: its quantile tables are its mean "
            "-/+ sqrt(3) sd, which so few can reveal",
            holders,
            min_rows,
        )
        return np.array([0.0, 1.0]), _two_knots(x)
    groups = max(2, min(max_knots - 2, n // min_rows))
    sizes = np.full(groups, n // groups) + (np.arange(groups) < n % groups)
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    centres = _centres(bounds, n)
    orders = [np.argsort(column, kind="stable") for column in x.T]
    columns = [column[order] for column, order in zip(x.T, orders, strict=True)]
    held_by = [None if owners is None else owners[order] for order in orders]
    atoms = [_atoms(column, min_rows, who) for column, who in zip(columns, held_by, strict=True)]
    edges = [r for found in atoms for _, low, high in found for r in (low, high)]
    references = np.unique(np.concatenate([[0.0], centres, [1.0], edges]))
    quantiles = np.column_stack(
        [
            _column_knots(column, found, bounds, references, min_rows, who)
            for column, found, who in zip(columns, atoms, held_by, strict=True)
        ]
    )
    return references, quantiles


def holder_counts(
    values: np.ndarray, owners: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct, counts)``: each distinct value of ``values`` and how many distinct owners
    hold it (rows when ``owners`` is None): the count every rule here compares with k."""
    values = np.asarray(values, np.float64)
    if owners is None:
        return np.unique(values, return_counts=True)
    distinct, index = np.unique(values, return_inverse=True)
    return distinct, _owners_per(index, owners, len(distinct))


def _owners_per(index: np.ndarray, owners: np.ndarray, size: int) -> np.ndarray:
    """How many distinct owners each of ``size`` groups holds (``index``: each row's group),
    by hashing (group, owner) pairs: linear, where sorting them costs several times more."""
    owners = np.asarray(owners, np.int64)
    width = int(owners.max()) + 1 if len(owners) else 1
    pairs = pd.unique(np.asarray(index, np.int64) * width + owners)
    return np.bincount(pairs // width, minlength=size)


def _sorted_holders(values: np.ndarray, owners: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`holder_counts` of already sorted ``values``, without sorting them again."""
    if owners is None or not len(values):
        return holder_counts(values)
    new = np.ones(len(values), dtype=bool)
    new[1:] = values[1:] != values[:-1]
    return values[new], _owners_per(np.cumsum(new) - 1, owners, int(new.sum()))


def point_masses(
    values: np.ndarray,
    min_rows: int,
    min_share: float = POINT_MASS_SHARE,
    owners: np.ndarray | None = None,
) -> np.ndarray:
    """The values at least ``min_rows`` owners (rows, without ``owners``) and ``min_share`` of
    the rows hold, sorted."""
    values = np.asarray(values, np.float64)
    distinct, rows = np.unique(values, return_counts=True)
    found = distinct[(rows >= min_rows) & (rows >= min_share * len(values))]
    if owners is None or not len(found):
        return found
    owners = np.asarray(owners)  # a column has few such values: each one's owners counted
    return np.array([v for v in found if len(pd.unique(owners[values == v])) >= min_rows])


def _two_knots(x: np.ndarray) -> np.ndarray:
    """Knots at 0 and 1 of rows too few to group: the mean -/+ sqrt(3) sd, per column."""
    spread = np.sqrt(3.0) * x.std(axis=0)
    return np.vstack([x.mean(axis=0) - spread, x.mean(axis=0) + spread])


def _centres(bounds: np.ndarray, n: int) -> np.ndarray:
    """Each group's middle rank on the [0, 1] scale of ``n`` sorted rows."""
    return (bounds[:-1] + bounds[1:] - 1) / 2 / (n - 1)


def _atoms(
    values: np.ndarray, min_rows: int, owners: np.ndarray | None = None
) -> list[tuple[float, float, float]]:
    """``(value, low, high)`` for each value >= ``min_rows`` owners of the sorted rows share:
    the probabilities half a rank before its first row and half a rank after its last, so that
    atoms on adjacent ranks meet (the later starting just after) and no value between them is
    ever drawn."""
    distinct, first, counts = np.unique(values, return_index=True, return_counts=True)
    _, holders = _sorted_holders(values, owners)
    last = len(values) - 1
    half = 0.5 / last
    atoms: list[tuple[float, float, float]] = []
    held = holders >= min_rows  # the loop visits only the atoms: a column has few
    for v, i, c in zip(distinct[held], first[held], counts[held], strict=True):
        low, high = max(0.0, i / last - half), min(1.0, (i + c - 1) / last + half)
        if atoms and low <= atoms[-1][2]:
            low = atoms[-1][2] + _GAP
        atoms.append((float(v), low, high))
    return atoms


def _owned_groups(bounds: np.ndarray, owners: np.ndarray | None, min_rows: int) -> np.ndarray:
    """``bounds`` with neighbouring groups merged until each spans >= ``min_rows`` owners (the
    sorted column's ``owners``); unchanged when every group already does, or without owners."""
    if owners is None:
        return bounds
    group = np.repeat(np.arange(len(bounds) - 1), np.diff(bounds))
    if (_owners_per(group, owners, len(bounds) - 1) >= min_rows).all():
        return bounds
    kept, seen = [0], set()
    for start, stop in zip(bounds[:-1], bounds[1:], strict=True):
        seen.update(owners[start:stop].tolist())
        if len(seen) >= min_rows:
            kept.append(int(stop))
            seen = set()
    if kept[-1] != bounds[-1]:  # the last groups span too few: they join the one before
        kept[-1] = int(bounds[-1])
    return np.asarray(kept)


def _column_knots(
    values: np.ndarray,
    atoms: list[tuple[float, float, float]],
    bounds: np.ndarray,
    references: np.ndarray,
    min_rows: int,
    owners: np.ndarray | None = None,
) -> np.ndarray:
    """One sorted column's knots at ``references``: the line through its groups' means (extended
    to 0 and 1), its atoms over the whole share of the scale their rows hold."""
    distinct, counts = _sorted_holders(values, owners)
    rare = distinct[counts < min_rows]
    bounds = _owned_groups(bounds, owners, min_rows)
    if len(bounds) < 3:  # too few owners in sorted order for two groups: two knots
        first, last = _two_knots(values[:, None])[:, 0]
        knots = _off_rare_all(first + (last - first) * references, rare, distinct, up=True)
        return np.maximum.accumulate(knots)
    centres = _centres(bounds, len(values))
    group_means = []
    for start, stop in zip(bounds[:-1], bounds[1:], strict=True):
        group = values[start:stop]
        low, high = group[0], group[-1]
        group_means.append(low if low == high else float(np.clip(group.mean(), low, high)))
    means = _off_rare_all(np.asarray(group_means, np.float64), rare, distinct, up=True)  # in it
    slope_low = (means[1] - means[0]) / (centres[1] - centres[0])
    slope_high = (means[-1] - means[-2]) / (centres[-1] - centres[-2])
    first = means[0] - slope_low * centres[0]
    last = means[-1] + slope_high * (1 - centres[-1])
    at = np.concatenate([[0.0], centres, [1.0]])
    line = np.interp(references, at, np.concatenate([[first], means, [last]]))
    knots = _off_rare_all(line, rare, distinct, up=references > 0)
    for value, low, high in atoms:
        knots[(references >= low) & (references <= high)] = value
    return np.maximum.accumulate(knots)  # a mean beside a short atom may sit past it


def _holds_all(rare: np.ndarray, values: np.ndarray) -> np.ndarray:
    """:func:`_holds` of each of ``values``, the same arithmetic on whole arrays."""
    values = np.asarray(values, np.float64)
    if not len(rare):
        return np.zeros(values.shape, dtype=bool)
    i = np.searchsorted(rare, values)
    found = np.zeros(values.shape, dtype=bool)
    for j, valid in ((i - 1, i >= 1), (i, i < len(rare))):  # the neighbours _holds looks at
        near = rare[np.clip(j, 0, len(rare) - 1)]
        close = np.abs(near - values) <= SAME * np.maximum(1.0, np.abs(near))
        found |= valid & close
    return found


def _off_rare_all(
    values: np.ndarray, rare: np.ndarray, distinct: np.ndarray, *, up: bool | np.ndarray
) -> np.ndarray:
    """:func:`_off_rare` of each of ``values`` (``up`` one flag, or one per value): the values a
    rare one holds (few) move one by one, the others stay as they are."""
    out = np.array(values, np.float64, copy=True)
    ups = np.broadcast_to(np.asarray(up, dtype=bool), out.shape)
    for k in np.flatnonzero(_holds_all(rare, out)):
        out[k] = _off_rare(out[k], rare, distinct, up=bool(ups[k]))
    return out


def _holds(rare: np.ndarray, value: float) -> bool:
    """Whether ``value`` equals one of the sorted values ``rare``."""
    if not len(rare):
        return False
    i = np.searchsorted(rare, value)
    near = rare[max(i - 1, 0) : i + 1]
    return bool(np.any(np.abs(near - value) <= SAME * np.maximum(1.0, np.abs(near))))


def _off_rare(value: float, rare: np.ndarray, distinct: np.ndarray, *, up: bool) -> float:
    """``value``, or when it equals a rare value, the midpoint between that value and the next
    distinct one (above when ``up``, else below; the other side at the column's edge). Nothing
    lies strictly between two neighbouring distinct values, so the midpoint is no one's."""
    if not _holds(rare, value):
        return float(value)
    i = int(np.argmin(np.abs(distinct - value)))
    if len(distinct) == 1:
        return float(distinct[0] + (1 if up else -1) * max(1.0, abs(distinct[0])))
    j = i + 1 if up else i - 1
    if not 0 <= j < len(distinct):
        j = i - 1 if up else i + 1
    return float((distinct[i] + distinct[j]) / 2)


def extreme_mean(
    values: np.ndarray, min_rows: int, *, largest: bool, owners: np.ndarray | None = None
) -> float:
    """The mean of the ``min_rows`` largest (or smallest) ``values``, each owner counted once at
    its own most extreme value: a bound that is no one's value (moved inward, halfway to the
    next distinct value, when fewer than ``min_rows`` owners hold it)."""
    values = np.asarray(values, np.float64)
    extremes = values if owners is None else _owner_extremes(values, owners, largest=largest)
    ordered = np.sort(extremes)
    group = ordered[-min_rows:] if largest else ordered[:min_rows]
    bound = float(group[0] if group[0] == group[-1] else np.clip(group.mean(), group[0], group[-1]))
    if not _held(bound, values):
        return bound
    distinct, counts = holder_counts(values, owners)
    return _off_rare(bound, distinct[counts < min_rows], distinct, up=not largest)


def _held(value: float, values: np.ndarray) -> bool:
    """Whether a row may hold ``value`` (twice :func:`_holds`'s tolerance, so never a miss):
    when none does, no rule here moves it, and the owners need no counting."""
    return bool(np.any(np.abs(values - value) <= 2 * SAME * max(1.0, abs(value))))


def _owner_extremes(values: np.ndarray, owners: np.ndarray, *, largest: bool) -> np.ndarray:
    """Each owner's largest (or smallest) value."""
    grouped = pd.Series(values).groupby(np.asarray(owners, np.int64), sort=False)
    return (grouped.max() if largest else grouped.min()).to_numpy(np.float64)


def no_ones_value(
    value: float,
    values: np.ndarray,
    min_rows: int,
    *,
    whole: bool,
    up: bool,
    owners: np.ndarray | None = None,
) -> float:
    """``value`` moved, when fewer than ``min_rows`` owners of ``values`` (rows, without
    ``owners``) hold it, to a value none or at least ``min_rows`` hold: halfway to the next
    distinct value (``up`` or down), or for whole numbers the nearest whole number that way
    (rounded that way first)."""
    values = np.asarray(values, np.float64)
    first = float(value if not whole else np.ceil(value) if up else np.floor(value))
    if not _held(first, values):
        return first
    distinct, counts = holder_counts(values, owners)
    rare = distinct[counts < min_rows]
    if not whole:
        return _off_rare(value, rare, distinct, up=up)
    step = 1.0 if up else -1.0
    number = float(np.ceil(value) if up else np.floor(value))
    for _ in range(len(rare) + 1):  # each step passes at most one rare value
        if not _holds(rare, number):
            break
        number += step
    return number


def private_range(
    values: np.ndarray, min_rows: int, *, whole: bool, owners: np.ndarray | None = None
) -> tuple[float, float]:
    """A column's (low, high) that names no entity: the means of its ``min_rows`` most extreme
    owners' values at each end, inside the observed range, whole for whole numbers (rounded
    inward), and never a value fewer than ``min_rows`` owners hold."""
    low = extreme_mean(values, min_rows, largest=False, owners=owners)
    high = extreme_mean(values, min_rows, largest=True, owners=owners)
    if whole:
        low = no_ones_value(low, values, min_rows, whole=True, up=True, owners=owners)
        high = no_ones_value(high, values, min_rows, whole=True, up=False, owners=owners)
    return (low, high) if low <= high else (high, low)
