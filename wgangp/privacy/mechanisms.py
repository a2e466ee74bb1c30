"""Differentially private statistics of the training rows, where neighbours differ by one entity.

What a run fits on training rows and ships (the bounds of a number, the knots of its scaling, the
categorical levels it keeps, counts) is released through the mechanisms here. Two datasets are
neighbours when one holds *all* the rows of one more entity (a customer; a row without one is its
own entity). Every mechanism is a Gaussian mechanism of L2 sensitivity at most 1 under that
relation, so each returns ``dp_accounting.GaussianDpEvent(noise_multiplier)`` (the noise's standard
deviation is ``noise_multiplier``) and all of them compose with DP-SGD's events in one accountant
(:mod:`wgangp.privacy.accountant`). Only :func:`dp_levels` adds a delta of its own.

**Contribution bounding by normalisation.** An entity with m rows (gaps left out) gives each of
them weight 1/m, so its contribution to any histogram is a vector of L1 norm 1, hence of L2 norm at
most 1, however many rows it holds and however they spread; the other entities' weights do not
depend on it, so adding or removing it moves the vector by exactly its own contribution.

**Numbers** fall in the bins of a public grid (:data:`DEFAULT_GRID`), fixed before any value is
read: 0 and +-10**(j/40) for magnitudes 1e-9 to 1e15 (``MAX_ABS_VALUE`` of
:mod:`wgangp.data.numbers`; Unix times in milliseconds are 1.7e12), 1,922 bins; values past its
ends fall in its end bins. 40 edges a decade make a bin 5.9% of its magnitude wide (a value read
inside it is interpolated), while the bulk of a column of 20,000 entities puts hundreds in a bin,
far more than a quantile's noise moves (about 10 entities at noise 1): finer bins would add tree
depth and buy nothing. Fewer would make the within-bin error the larger one. The grid is
relative: it resolves 1.7e9 only to within 1e8 (a Unix time in seconds to within 3 years). For
such a column, read :func:`dp_bounds` first and pass ``np.linspace(low, high, 1025)`` as the edges
of a second release (edges from a release are public: post-processing), at a second event's cost.

**Quantiles read a tree, not the flat histogram's cumulative sum.** Over ~2,000 mostly empty bins
the cumulative sum carries one noise term per bin (31 sigma halfway), and clipping negative counts
to 0 adds 0.4 sigma per empty bin, ~760 sigma of mass no entity holds, spread over the empty grid:
it drags the tail quantiles, the bounds, out into empty space. A binary tree with every level
released (each level a histogram an entity moves by L2 <= 1, so all ``L`` levels by sqrt(L),
scaled back to 1: noise sqrt(L) sigma a node, L = 11) places any prefix from <= L nodes. It is read
top-down (:func:`_leaf_shares`): a node's share goes to its children in proportion to their noisy
counts among those at least ``KEEP_SIGMAS`` node deviations up; when neither is, all of it goes to
the child nearer the centre of the shares placed so far. Weak evidence so moves mass towards the
data, never out into the grid's empty reaches (docs/privacy.md measures how often spreading it by
its noisy counts put a bound a decade past the data); the price is a tail of fewer entities than
the threshold pulled in next to its neighbours.
"""

from __future__ import annotations

import math

import dp_accounting
import numpy as np

#: The default grid's magnitudes: 1e-9 to 1e15 (``wgangp.data.numbers.MAX_ABS_VALUE``), 40 a decade.
GRID_LOW, GRID_HIGH, GRID_PER_DECADE = 1e-9, 1e15, 40
#: Reading the tree, a child whose noisy count is below this many node standard deviations is
#: given none of its parent's share unless neither child reaches it (then the share goes towards
#: the data): an empty node rarely reaches it, where its noise would otherwise move tail
#: quantiles (the bounds) into empty space; the price is that a tail of fewer entities than that
#: moves next to its neighbours. docs/privacy.md measures 2, 3 and 4.
KEEP_SIGMAS = 3.0
#: The widest node (in bins of the geometric grid: 1.6 decades) whose weak evidence a private
#: transform's bounds spread evenly (:func:`_leaf_shares`); wider ones send it towards the data,
#: as spreading them put bounds at +-1e14 under heavy noise.
BOUND_SPREAD = 64
#: The default (low, high) probabilities of :func:`dp_bounds`.
BOUND_PROBABILITIES = (0.001, 0.999)


def geometric_grid(
    low: float = GRID_LOW, high: float = GRID_HIGH, per_decade: int = GRID_PER_DECADE
) -> np.ndarray:
    """Public bin edges: 0 and +-10**(j/per_decade) from ``low`` to ``high`` (powers of ten),
    symmetric in sign and geometric in magnitude, so any number has a bin without the data being
    read (:func:`bin_index`)."""
    steps = np.arange(round(math.log10(low) * per_decade), round(math.log10(high) * per_decade) + 1)
    magnitudes = 10.0 ** (steps / per_decade)
    return np.concatenate([-magnitudes[::-1], [0.0], magnitudes])


#: The grid every numeric release uses unless given public edges of its own (read-only).
DEFAULT_GRID = geometric_grid()
DEFAULT_GRID.flags.writeable = False


def bin_index(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Each value's bin: i for edges[i] <= value < edges[i + 1]; values below the first edge fall
    in the first bin and values from the last edge up (infinities too) in the last."""
    return np.clip(np.searchsorted(edges, values, side="right") - 1, 0, len(edges) - 2)


def entity_histogram(values: np.ndarray, entities: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """The entity-normalised count of each bin (before noise): each row weighs 1/m, m its
    entity's rows with a value; NaNs (gaps) are left out. One entity moves it by L2 <= 1."""
    values, entities = _numbers(values, entities)
    edges = _edges(edges)
    present = ~np.isnan(values)
    weights = _row_weights(entities, present)[present]
    return np.bincount(bin_index(values[present], edges), weights, minlength=len(edges) - 1)


def noisy_histogram(
    values: np.ndarray,
    entities: np.ndarray,
    edges: np.ndarray,
    noise_multiplier: float,
    rng: np.random.Generator,
) -> tuple[np.ndarray, dp_accounting.DpEvent]:
    """:func:`entity_histogram` plus N(0, noise_multiplier**2) in every bin (may be negative)."""
    histogram = entity_histogram(values, entities, edges)
    return histogram + rng.normal(0.0, _sigma(noise_multiplier), histogram.shape), _event(
        noise_multiplier
    )


def entity_tree(
    values: np.ndarray, entities: np.ndarray, edges: np.ndarray = DEFAULT_GRID
) -> np.ndarray:
    """The vector :func:`dp_quantiles` adds noise to (before noise): every level but the root of a
    binary tree over :func:`entity_histogram`'s bins (padded with empty bins to a power of two),
    leaves first, times 1/sqrt(levels). Each level is a histogram an entity moves by L2 <= 1, so
    the scaled whole moves by <= 1."""
    levels = _tree_levels(entity_histogram(values, entities, edges))
    return np.concatenate(levels) / math.sqrt(len(levels))


def dp_quantiles(
    values: np.ndarray,
    entities: np.ndarray,
    probabilities: np.ndarray | list[float] | tuple[float, ...],
    noise_multiplier: float,
    rng: np.random.Generator,
    edges: np.ndarray = DEFAULT_GRID,
    spread: int = 0,
) -> tuple[np.ndarray, dp_accounting.DpEvent]:
    """The values at ``probabilities`` (in [0, 1]) of the entity-weighted distribution of
    ``values`` (NaNs left out), read off the noisy :func:`entity_tree` (post-processing): the
    tree's leaf shares (``spread``: see :func:`_leaf_shares`), cumulated, interpolated linearly
    within the bin a probability falls in.
    Non-decreasing in the probability and within the grid's ends; probability 0 reads the lower
    edge of the first bin given any share. With no entity (or noise drowning every count) the
    answer is still values of the grid, read off noise."""
    edges = _edges(edges)
    probabilities = np.asarray(probabilities, np.float64)
    if probabilities.ndim != 1 or not ((probabilities >= 0) & (probabilities <= 1)).all():
        raise ValueError("probabilities must be a 1-D array of values in [0, 1]")
    tree = entity_tree(values, entities, edges)
    noisy = tree + rng.normal(0.0, _sigma(noise_multiplier), tree.shape)
    shares = _leaf_shares(noisy, len(edges) - 1, noise_multiplier, spread)
    return _read_quantiles(shares, edges, probabilities), _event(noise_multiplier)


def dp_bounds(
    values: np.ndarray,
    entities: np.ndarray,
    noise_multiplier: float,
    rng: np.random.Generator,
    probabilities: tuple[float, float] = BOUND_PROBABILITIES,
    edges: np.ndarray = DEFAULT_GRID,
    spread: int = 0,
) -> tuple[tuple[float, float], dp_accounting.DpEvent]:
    """``(low, high)``: the :func:`dp_quantiles` at ``probabilities`` moved out to the edges of
    their bins, so a bound is a public grid edge (derived from no entity's value) and brackets its
    bin's whole share. ``spread`` (:func:`_leaf_shares`): inside nodes that narrow, where
    evidence is weak the bounds err wide rather than narrow (a narrow bound clips the column);
    wider nodes keep the rule that never sends mass into the grid's empty reaches."""
    edges = _edges(edges)
    (low, high), event = dp_quantiles(
        values, entities, probabilities, noise_multiplier, rng, edges, spread
    )
    low = edges[max(int(np.searchsorted(edges, low, side="right")) - 1, 0)]
    high = edges[min(int(np.searchsorted(edges, high, side="left")), len(edges) - 1)]
    return (float(low), float(high)), event


def noisy_count(
    entities: np.ndarray, noise_multiplier: float, rng: np.random.Generator
) -> tuple[float, dp_accounting.DpEvent]:
    """The number of distinct entities plus N(0, noise_multiplier**2) (sensitivity 1; may be
    negative, clip it if a count is needed)."""
    entities = _entities(entities)
    count = len(np.unique(entities))
    return count + float(rng.normal(0.0, _sigma(noise_multiplier))), _event(noise_multiplier)


def noisy_group_counts(
    groups: np.ndarray, count: int, noise_multiplier: float, rng: np.random.Generator
) -> tuple[np.ndarray, dp_accounting.DpEvent]:
    """The entities in each of ``count`` disjoint groups (``groups[i]``: entity i's group, one
    entry per entity) plus N(0, noise_multiplier**2) each: an entity is in one group, so it
    moves the vector by 1 in L2, one release for all the groups."""
    groups = np.asarray(groups, np.int64)
    counts = np.bincount(groups, minlength=count).astype(np.float64)
    return counts + rng.normal(0.0, _sigma(noise_multiplier), count), _event(noise_multiplier)


def noisy_share(
    mask: np.ndarray, entities: np.ndarray, noise_multiplier: float, rng: np.random.Generator
) -> tuple[float, dp_accounting.DpEvent]:
    """The entity-weighted share of rows where ``mask`` holds (e.g. a column's gaps): each entity
    counts the share f of its rows that hold it. Released as two noisy sums, sum(f) and
    sum(1 - f): one entity moves them by (f, 1 - f), L2 = sqrt(f**2 + (1 - f)**2) <= 1 (releasing
    sum(f) and the entity count would be sqrt(2)). The ratio of the two, clipped at 0 first, is
    post-processing; 0 when both clip to 0 (no evidence of any entity)."""
    mask = np.asarray(mask)
    entities = _entities(entities)
    if mask.dtype != bool or mask.shape != entities.shape:
        raise ValueError("mask must be a boolean array with one entry per entity code")
    weights = _row_weights(entities, np.ones(len(mask), bool))
    sums = np.array([weights[mask].sum(), weights[~mask].sum()])
    held, not_held = np.maximum(sums + rng.normal(0.0, _sigma(noise_multiplier), 2), 0.0)
    share = held / (held + not_held) if held + not_held > 0 else 0.0
    return float(share), _event(noise_multiplier)


def entity_level_counts(
    values: np.ndarray, entities: np.ndarray, max_levels: int = 1
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(levels, counts, holders)`` (before noise) of the levels present in ``values`` (gaps,
    None or NaN, left out), sorted. Each entity keeps its ``max_levels`` levels with the most of
    its rows (ties: the smaller level), a rule on its own rows only; each row at a kept level
    weighs 1/m, m its rows at kept levels, so an entity moves ``counts`` by L1 = 1, L2 <= 1.
    ``holders``: the entities that kept the level (entities whose weight on it is > 0)."""
    values, entities = np.asarray(values), _entities(entities)
    if values.shape != entities.shape:
        raise ValueError("values and entities must be 1-D arrays of the same length")
    if max_levels < 1:
        raise ValueError(f"max_levels must be >= 1 (got {max_levels})")
    present = ~_gaps(values)
    levels, level = np.unique(values[present], return_inverse=True)
    if not len(levels):
        return levels, np.zeros(0), np.zeros(0, np.int64)
    owner = np.unique(entities[present], return_inverse=True)[1].astype(np.int64)
    pairs, rows = np.unique(owner * len(levels) + level, return_counts=True)
    owner, level = np.divmod(pairs, len(levels))
    order = np.lexsort((level, -rows, owner))  # by owner, then its most-held levels first
    owner, level, rows = owner[order], level[order], rows[order]
    kept = np.arange(len(owner)) - np.searchsorted(owner, owner) < max_levels
    owner, level, rows = owner[kept], level[kept], rows[kept]
    weights = rows / np.bincount(owner, rows)[owner]
    counts = np.bincount(level, weights, minlength=len(levels))
    return levels, counts, np.bincount(level, minlength=len(levels))


def dp_levels(
    values: np.ndarray,
    entities: np.ndarray,
    noise_multiplier: float,
    threshold: float,
    rng: np.random.Generator,
    *,
    min_entities: int,
    max_levels: int = 1,
) -> tuple[dict[object, float], dp_accounting.DpEvent, float]:
    """``(kept, event, selection_delta)``: the levels of ``values`` with their noisy
    :func:`entity_level_counts`, kept when the noisy count is >= ``threshold``; a level that fewer
    than ``min_entities`` (k) entities hold is never kept, nor noised.

    Thresholded partition selection: which levels exist is itself private. Take neighbours D and
    D' = D plus entity e. A level held by >= k entities in D is a candidate in both: its noisy count
    is a Gaussian mechanism (with all such levels, L2 sensitivity <= 1: the event) and keeping it
    is post-processing. A level held by < k entities in D' is never released from either. What
    differs is a level e lifts from k - 1 holders to k: absent from D's output, released from D'
    with the probability that its noisy count passes. Its count is at most (k - 1) + w (the k - 1
    others weigh <= 1 each, e weighs w), and e's weights over its <= ``max_levels`` levels sum to
    1, so (the pass probability being convex in w on [0, 1] when threshold >= k) the probability
    that any such level passes is at most P(N >= threshold - k) + (max_levels - 1) P(N >= threshold
    - k + 1), N ~ N(0, sigma**2): ``selection_delta`` (:func:`selection_delta_for`). The release is
    then (eps + ln(1 / (1 - delta_s)), delta + delta_s)-DP where the events give (eps, delta): add
    ``selection_delta`` to the accountant's delta (the eps term is ~delta_s, negligible).

    Two conditions are needed, and checked: threshold >= k (else the bound above fails), and a
    bounded number of levels per entity (``max_levels``). Without the latter, weights 1/m over m
    levels an entity holds alone pass with probability ~m P(N >= threshold), unbounded in m: the
    usual P(N >= threshold - 1) holds only for one level per entity and no k rule. The k rule
    costs k - 1 in the threshold, as a level e completes can hold k - 1 of others' weight.
    """
    delta = selection_delta_for(
        noise_multiplier, threshold, min_entities=min_entities, max_levels=max_levels
    )
    levels, counts, holders = entity_level_counts(values, entities, max_levels)
    held = holders >= min_entities
    noisy = counts[held] + rng.normal(0.0, _sigma(noise_multiplier), int(held.sum()))
    kept = {
        _plain(level): float(count)
        for level, count in zip(levels[held], noisy, strict=True)
        if count >= threshold
    }
    return kept, _event(noise_multiplier), delta


def selection_delta_for(
    noise_multiplier: float, threshold: float, *, min_entities: int, max_levels: int = 1
) -> float:
    """The extra delta of :func:`dp_levels`: P(N >= threshold - k) + (max_levels - 1) P(N >=
    threshold - k + 1) (at most 1), N ~ N(0, noise_multiplier**2), k = ``min_entities``."""
    sigma = _sigma(noise_multiplier)
    if min_entities < 1 or max_levels < 1:
        raise ValueError("min_entities and max_levels must be >= 1")
    if not threshold >= min_entities:
        raise ValueError(
            f"threshold {threshold} is below min_entities {min_entities}: a level completed by one "
            "entity could pass with no noise at all"
        )
    margin = threshold - min_entities
    delta = _tail(margin, sigma) + (max_levels - 1) * _tail(margin + 1, sigma)
    return min(delta, 1.0)


def threshold_for(
    noise_multiplier: float, selection_delta: float, *, min_entities: int, max_levels: int = 1
) -> float:
    """The least threshold (>= ``min_entities``) whose :func:`selection_delta_for` is at most the
    given one (to 1e-9 of the threshold), by bisection: the delta falls as the threshold rises."""
    if not 0 < selection_delta < 1:
        raise ValueError(f"selection_delta must be in (0, 1) (got {selection_delta})")

    def delta_at(threshold: float) -> float:
        return selection_delta_for(
            noise_multiplier, threshold, min_entities=min_entities, max_levels=max_levels
        )

    low = float(min_entities)
    if delta_at(low) <= selection_delta:
        return low
    high = low + 1.0
    while delta_at(high) > selection_delta:
        high = low + 2 * (high - low)
    while high - low > 1e-9 * max(1.0, high):
        middle = (low + high) / 2
        low, high = (low, middle) if delta_at(middle) <= selection_delta else (middle, high)
    return high


def _tail(margin: float, sigma: float) -> float:
    """P(N(0, sigma**2) >= margin), accurate far into the tail (erfc, not 1 - cdf)."""
    if sigma == 0:
        return 1.0 if margin <= 0 else 0.0
    return 0.5 * math.erfc(margin / (sigma * math.sqrt(2)))


def _tree_levels(histogram: np.ndarray) -> list[np.ndarray]:
    """The tree's levels, leaves (``histogram`` padded with zeros to a power of two >= 2) first,
    each the sums of the pairs below it, down to the two children of the root."""
    leaves = 2 ** max(1, math.ceil(math.log2(max(len(histogram), 1))))
    level = np.zeros(leaves)
    level[: len(histogram)] = histogram
    levels = []
    while len(level) > 1:
        levels.append(level)
        level = level[0::2] + level[1::2]
    return levels


def _leaf_shares(
    noisy: np.ndarray, bins: int, noise_multiplier: float, spread: int = 0
) -> np.ndarray:
    """Each bin's share of the mass from a noisy :func:`entity_tree`, top-down. A node's share is
    split between its children in proportion to their noisy counts (clipped at 0) among those at
    or above ``KEEP_SIGMAS`` node deviations; when neither is, it all goes to the child nearer the
    centre of the shares placed so far (at the top, the larger count): evidence too weak to place
    mass moves it towards the data, never out into the grid's empty reaches. In a node of at most
    ``spread`` bins it is split evenly instead: piled into one bin, a column of a few hundred
    entities would come back as a handful of values (``spread`` = the bins: everywhere, for edges
    with no empty reaches, equal bins between released bounds). Padding gets nothing; the shares
    sum to 1."""
    leaves = 2 ** max(1, math.ceil(math.log2(max(bins, 1))))
    sizes = [leaves >> depth for depth in range(leaves.bit_length() - 1)]
    starts = np.cumsum([0, *sizes[:-1]]).tolist()
    scale = math.sqrt(len(sizes))
    keep = KEEP_SIGMAS * noise_multiplier * scale
    share = np.ones(1)
    for size, start in zip(reversed(sizes), reversed(starts), strict=True):
        real = (np.arange(size) * (leaves // size) < bins).reshape(-1, 2)
        counts = np.maximum(noisy[start : start + size].reshape(-1, 2), 0) * scale
        strong = real & (counts > 0) & (counts >= keep)
        counts = np.where(strong, counts, 0.0)
        total = counts.sum(axis=1, keepdims=True)
        if size == 2:
            nearer = np.argmax(np.where(real[0], noisy[start : start + 2], -np.inf)).reshape(1)
        else:  # in units of a parent node: parent j spans [j, j + 1), its children meet at j + 1/2
            centre = share @ (np.arange(len(share)) + 0.5)
            nearer = (centre > np.arange(len(share)) + 0.5).astype(np.int64)
            nearer = np.where(real[np.arange(len(share)), nearer], nearer, 0)
        weak = (np.arange(2) == nearer[:, None]).astype(np.float64)
        if 2 * (leaves // size) <= spread:  # the parents span at most ``spread`` bins
            weak = real / np.maximum(real.sum(axis=1, keepdims=True), 1)
        split = np.where(total > 0, counts / np.where(total > 0, total, 1.0), weak)
        share = (share[:, None] * split).ravel()
    return share[:bins]


def _read_quantiles(shares: np.ndarray, edges: np.ndarray, probabilities: np.ndarray) -> np.ndarray:
    """The value at each probability of the distribution with ``shares`` in the bins of ``edges``,
    uniform within a bin; non-decreasing in the probability."""
    cdf = np.cumsum(shares)
    targets = np.maximum(probabilities * cdf[-1], np.finfo(float).tiny)
    index = np.minimum(np.searchsorted(cdf, targets, side="left"), len(shares) - 1)
    before = np.where(index > 0, cdf[index - 1], 0.0)
    mass = shares[index]
    fraction = np.clip(np.divide(targets - before, mass, np.zeros_like(mass), where=mass > 0), 0, 1)
    quantiles = edges[index] * (1 - fraction) + edges[index + 1] * fraction
    order = np.argsort(probabilities, kind="stable")
    quantiles[order] = np.maximum.accumulate(quantiles[order])  # rounding never breaks the order
    return quantiles


def _row_weights(entities: np.ndarray, counted: np.ndarray) -> np.ndarray:
    """Each row's weight: 1/m for a counted row, m its entity's counted rows; 0 for the rest."""
    codes = np.unique(entities, return_inverse=True)[1]
    rows = np.bincount(codes, counted.astype(np.float64))
    return np.where(counted, 1.0 / np.maximum(rows[codes], 1.0), 0.0)


def _gaps(values: np.ndarray) -> np.ndarray:
    """Which cells are gaps: NaN in a float array; None or a float NaN in an object array."""
    if values.dtype.kind == "f":
        return np.isnan(values)
    if values.dtype.kind == "O":
        return np.fromiter(
            (v is None or (isinstance(v, float | np.floating) and v != v) for v in values),
            bool,
            len(values),
        )
    return np.zeros(len(values), bool)


def _plain(level: object) -> object:
    """A numpy scalar as the Python one (``np.str_('a')`` -> ``'a'``), anything else as it is."""
    return level.item() if isinstance(level, np.generic) else level


def _entities(entities: np.ndarray) -> np.ndarray:
    entities = np.asarray(entities)
    if entities.ndim != 1 or entities.dtype.kind not in "iu":
        raise ValueError("entities must be a 1-D array of integer entity codes, one per row")
    return entities


def _numbers(values: np.ndarray, entities: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    values, entities = np.asarray(values, np.float64), _entities(entities)
    if values.shape != entities.shape:
        raise ValueError("values and entities must be 1-D arrays of the same length")
    return values, entities


def _edges(edges: np.ndarray) -> np.ndarray:
    edges = np.asarray(edges, np.float64)
    if edges.ndim != 1 or len(edges) < 2 or not np.isfinite(edges).all():
        raise ValueError("edges must be a 1-D array of at least 2 finite numbers")
    if not (np.diff(edges) > 0).all():
        raise ValueError("edges must increase strictly")
    return edges


def _sigma(noise_multiplier: float) -> float:
    sigma = float(noise_multiplier)
    if not (math.isfinite(sigma) and sigma >= 0):
        raise ValueError(f"noise_multiplier must be a finite number >= 0 (got {noise_multiplier})")
    return sigma


def _event(noise_multiplier: float) -> dp_accounting.DpEvent:
    return dp_accounting.GaussianDpEvent(_sigma(noise_multiplier))
