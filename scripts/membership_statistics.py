"""The membership audit's statistics: how well scores tell members from others (AUC, the
advantage), and how much of that chance alone reads (bootstrap intervals, a permutation null)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

BOOTSTRAP = 2000
PERMUTATIONS = 2000


def auc(members: np.ndarray, others: np.ndarray) -> float:
    """P(a member's score > another's), ties counting one half (Mann-Whitney)."""
    members, others = np.asarray(members, float), np.asarray(others, float)
    if not len(members) or not len(others):
        return float("nan")
    diff = np.subtract.outer(members, others)
    return float(np.mean(diff > 0) + 0.5 * np.mean(diff == 0))


def advantage(members: np.ndarray, others: np.ndarray) -> float:
    """max over thresholds t of TPR - FPR, guessing "member" for a score >= t (0 when no
    threshold separates them better than guessing no one)."""
    members, others = np.asarray(members, float), np.asarray(others, float)
    thresholds = np.unique(np.concatenate([members, others]))
    tpr = (members[None, :] >= thresholds[:, None]).mean(axis=1)
    fpr = (others[None, :] >= thresholds[:, None]).mean(axis=1)
    return float(max(0.0, np.max(tpr - fpr)))


Statistic = Callable[[np.ndarray, np.ndarray], float]


def bootstrap_interval(
    members: Sequence[np.ndarray],
    others: Sequence[np.ndarray],
    statistic: Statistic,
    seed: int,
    repeats: int | None = None,
) -> tuple[float, float]:
    """95% percentile interval of ``statistic`` on the concatenated groups, each seed's members
    and others resampled with replacement on their own."""
    rng = np.random.default_rng([seed, 3])
    repeats = repeats or BOOTSTRAP
    values = np.empty(repeats)
    for r in range(repeats):
        a = np.concatenate([g[rng.integers(len(g), size=len(g))] for g in members])
        b = np.concatenate([g[rng.integers(len(g), size=len(g))] for g in others])
        values[r] = statistic(a, b)
    low, high = np.percentile(values, [2.5, 97.5])
    return float(low), float(high)


def permutation_null(
    members: Sequence[np.ndarray],
    others: Sequence[np.ndarray],
    statistic: Statistic,
    seed: int,
    repeats: int | None = None,
) -> tuple[float, float]:
    """What ``statistic`` reads when membership carries no signal, labels shuffled within each
    seed: the one-sided p-value of the observed value, (1 + #{shuffled >= observed}) /
    (1 + repeats), and the shuffled values' 95th percentile (what an audit of this size reads
    one time in 20 with nothing to find)."""
    rng = np.random.default_rng([seed, 4])
    repeats = repeats or PERMUTATIONS
    observed = statistic(np.concatenate(members), np.concatenate(others))
    pooled = [np.concatenate([a, b]) for a, b in zip(members, others, strict=True)]
    sizes = [len(a) for a in members]
    values = np.empty(repeats)
    for r in range(repeats):
        shuffled = [rng.permutation(p) for p in pooled]
        a = np.concatenate([p[:k] for p, k in zip(shuffled, sizes, strict=True)])
        b = np.concatenate([p[k:] for p, k in zip(shuffled, sizes, strict=True)])
        values[r] = statistic(a, b)
    p_value = (1 + int(np.sum(values >= observed - 1e-12))) / (1 + repeats)
    return p_value, float(np.percentile(values, 95))


def compare(
    members: Sequence[np.ndarray], others: Sequence[np.ndarray], seed: int
) -> dict[str, float]:
    """AUC and advantage of ``members`` (scores, one array per seed) against ``others``, with
    their bootstrap intervals, permutation p-values and the null's 95th percentiles."""
    a, b = np.concatenate(members), np.concatenate(others)
    figures: dict[str, float] = {"n_members": len(a), "n_others": len(b)}
    for name, statistic in (("auc", auc), ("advantage", advantage)):
        figures[name] = statistic(a, b)
        low, high = bootstrap_interval(members, others, statistic, seed)
        figures[f"{name}_low"], figures[f"{name}_high"] = low, high
        p_value, null95 = permutation_null(members, others, statistic, seed)
        figures[f"{name}_p"], figures[f"{name}_null95"] = p_value, null95
    return figures
