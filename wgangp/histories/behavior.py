"""Does fraud's behavior over time survive synthesis? The four behavioral patterns of arXiv
2604.13125, each scored as a degradation ratio against the noise floor of real data, and a
classifier that tries to tell real histories from synthetic ones.

A **degradation ratio** is ``distance(real half A, synthetic) / distance(real half A, real half
B)``: 1.0 means the synthetic histories are as close to real ones as real ones are to each other,
10 means ten times farther. The halves split the real entities in two (each half keeps the share
of fraud-touched entities), and the synthetic side is cut to as many entities as half B has,
because count-like figures (how many customers share a terminal) grow with the entities compared.

The measures, and their distances (Wasserstein-1 between two samples of values; the absolute
difference between two rates):

- P1, inter-event timing: the log gaps ``log(1 + seconds)`` between a customer's consecutive rows,
  in fraud-touched histories (``P1.gaps_fraud_touched``) and in the rest (``P1.gaps_other``);
  Wasserstein.
- P2, bursts: each history's lag-1 autocorrelation of its log gaps (histories with 3 gaps or more;
  ``P2.gap_autocorr``, Wasserstein), and the share of fraud rows in a burst, 3 or more of the
  customer's rows within one hour (``P2.fraud_burst_share``, a rate).
- P3, shared infrastructure: among fraud rows, the log of the number of distinct customers on
  each shared id (``P3.log_degree.<column>``, Wasserstein); only with shared columns.
- P4, velocity rules: the share of rows that trigger each rule (3+ rows in 1 h, 6+ in 24 h, an
  amount over 3x the customer's median), among fraud rows and among the rest
  (``P4.rule_3_in_1h.fraud`` ...); rates.

A pattern's ratio is the geometric mean of its measures' ratios, and ``geometric_mean`` that of
the patterns'. A measure real half A has no value for (no fraud row has a shared id) is left out
(NaN); one the synthetic side has no value for while A has (no fraud row generated) is ``inf``.

Zero floors: two halves can agree exactly (no fraud row of either triggers a rule). Both
distances are then raised to the measure's resolution before dividing: ``1/n`` for a rate over
``n`` rows of half A, and for a Wasserstein distance the shift of one of A's ``n`` values by one
standard deviation, ``sd/n`` (``1/n`` when all are alike). A synthetic side within that resolution
reads 1.0 (a ratio below 1 is chance: a synthetic side nearer A than B is).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import wasserstein_distance

from wgangp.evaluation.detection import boosting_model, half_split_aucs
from wgangp.histories.history_features import (
    AMOUNT_FACTOR,
    RULE_WINDOWS,
    amount_rule,
    history_features,
)
from wgangp.histories.timelines import HOUR, HistoryColumns, Timeline, fraud_rows

__all__ = [
    "AMOUNT_FACTOR",
    "HistoryColumns",
    "behavioral_fidelity",
    "behavior_measures",
    "degradation_ratio",
    "history_detection",
    "history_features",
    "real_halves",
]

PATTERNS = ("P1", "P2", "P3", "P4")
BURST_ROWS = 3
BURST_WINDOW = HOUR


def behavior_measures(
    frame: pd.DataFrame, cols: HistoryColumns
) -> dict[str, tuple[np.ndarray, bool]]:
    """Each measure's values in ``frame``: ``(values, is_rate)``; a rate's values are 0/1 hits."""
    timeline = Timeline.of(frame, cols)
    gaps = timeline.log_gaps()
    has_gap = ~np.isnan(gaps)
    touched = (timeline.per_entity_sum(timeline.fraud.astype(float)) > 0)[timeline.entity]
    autocorr = timeline.gap_autocorrelation()
    fraud = timeline.fraud
    found: dict[str, tuple[np.ndarray, bool]] = {
        "P1.gaps_fraud_touched": (gaps[has_gap & touched], False),
        "P1.gaps_other": (gaps[has_gap & ~touched], False),
        "P2.gap_autocorr": (autocorr[~np.isnan(autocorr)], False),
        "P2.fraud_burst_share": (timeline.in_burst(BURST_ROWS, BURST_WINDOW)[fraud] * 1.0, True),
    }
    for name, values in timeline.shared.items():
        rows = pd.DataFrame({"id": values[fraud], "entity": timeline.entity[fraud]}).dropna()
        degree = rows.groupby("id")["entity"].nunique().to_numpy(np.float64)
        found[f"P3.log_degree.{name}"] = (np.log(degree), False)
    hits = {
        name: timeline.backward_counts(window) >= count
        for name, (count, window) in RULE_WINDOWS.items()
    }
    if timeline.amount is not None:
        hits["rule_amount_3x_median"] = amount_rule(timeline)
    for name, hit in hits.items():
        found[f"P4.{name}.fraud"] = (hit[fraud] * 1.0, True)
        found[f"P4.{name}.other"] = (hit[~fraud] * 1.0, True)
    return found


def _distance(a: np.ndarray, b: np.ndarray, rate: bool) -> float:
    if rate:
        return abs(float(np.mean(a)) - float(np.mean(b)))
    return float(wasserstein_distance(a, b))


def _resolution(a: np.ndarray, rate: bool) -> float:
    spread = 1.0 if rate else float(np.std(a))
    return (spread if spread > 0 else 1.0) / len(a)


def degradation_ratio(a: np.ndarray, b: np.ndarray, synthetic: np.ndarray, rate: bool) -> float:
    """``distance(a, synthetic) / distance(a, b)``, both raised to ``a``'s resolution (module
    docstring); NaN without a floor (``a`` or ``b`` empty), ``inf`` with no synthetic value."""
    if len(a) == 0 or len(b) == 0:
        return float("nan")
    if len(synthetic) == 0:
        return float("inf")
    floor = _resolution(a, rate)
    return max(_distance(a, synthetic, rate), floor) / max(_distance(a, b, rate), floor)


def geometric_mean(ratios: list[float]) -> float:
    """Of the defined ratios (NaN left out); ``inf`` if any is; NaN if none is defined."""
    kept = np.array([r for r in ratios if not np.isnan(r)], dtype=np.float64)
    if len(kept) == 0:
        return float("nan")
    if np.isinf(kept).any():
        return float("inf")
    return float(np.exp(np.mean(np.log(kept))))


def real_halves(
    frame: pd.DataFrame, cols: HistoryColumns, seed: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The real entities dealt into two halves at random, fraud-touched ones and the rest each
    split evenly: the pair whose distance is the noise floor."""
    touched = pd.Series(fraud_rows(frame, cols)).groupby(frame[cols.entity].to_numpy()).any()
    rng = np.random.default_rng(seed)
    half_a: list[object] = []
    for group in (touched.index[touched.to_numpy()], touched.index[~touched.to_numpy()]):
        shuffled = rng.permutation(np.asarray(group, dtype=object))
        half_a += list(shuffled[rng.integers(2) :: 2])  # a coin decides who gets an odd one out
    in_a = frame[cols.entity].isin(half_a)
    return frame[in_a].reset_index(drop=True), frame[~in_a].reset_index(drop=True)


def entity_sample(frame: pd.DataFrame, entity: str, n: int, seed: int) -> pd.DataFrame:
    """The rows of ``n`` of ``frame``'s entities drawn at random (all of them if it has fewer)."""
    ids = frame[entity].unique()
    if len(ids) <= n:
        return frame
    chosen = np.random.default_rng(seed).choice(len(ids), size=n, replace=False)
    return frame[frame[entity].isin(ids[chosen])].reset_index(drop=True)


def behavioral_fidelity(
    real_a: pd.DataFrame,
    real_b: pd.DataFrame,
    synthetic: pd.DataFrame,
    cols: HistoryColumns,
    seed: int = 0,
) -> dict[str, float]:
    """Each measure's degradation ratio (``P1.gaps_other`` ...), each pattern's (``P1`` ..
    ``P4``; ``P3`` NaN without shared columns), their ``geometric_mean``, and the entity counts
    compared (``entities_a``, ``entities_b``, ``entities_synthetic``)."""
    count_b = real_b[cols.entity].nunique()
    cut = entity_sample(synthetic, cols.entity, count_b, seed)
    measured = [behavior_measures(frame, cols) for frame in (real_a, real_b, cut)]
    a, b, s = measured
    figures: dict[str, float] = {}
    for name, (values, rate) in a.items():
        figures[name] = degradation_ratio(values, b[name][0], s[name][0], rate)
    for pattern in PATTERNS:
        figures[pattern] = geometric_mean(
            [v for k, v in figures.items() if k.startswith(pattern + ".")]
        )
    figures["geometric_mean"] = geometric_mean([figures[p] for p in PATTERNS])
    figures["entities_a"] = float(real_a[cols.entity].nunique())
    figures["entities_b"] = float(count_b)
    figures["entities_synthetic"] = float(cut[cols.entity].nunique())
    return figures


def history_detection(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    cols: HistoryColumns,
    seed: int = 0,
    *,
    repeats: int = 5,
    max_iter: int = 100,
) -> float:
    """ROC-AUC of gradient boosting telling synthetic histories (1) from real ones (0) by their
    :func:`history_features`: as many histories of each (the larger side sampled down), fitted on
    a random half and scored on the other, mean over ``repeats`` (0.5: cannot tell). Callers
    report the same test on two sets of real histories beside it (the control)."""
    real_features = history_features(real, cols)
    synthetic_features = history_features(synthetic, cols).reindex(columns=real_features.columns)
    n = min(len(real_features), len(synthetic_features))
    if n < 4:
        return float("nan")
    rng = np.random.default_rng(seed)
    picks = [
        features.to_numpy(np.float64)[rng.choice(len(features), size=n, replace=False)]
        for features in (real_features, synthetic_features)
    ]
    aucs = half_split_aucs(
        picks[0],
        picks[1],
        lambda repeat: boosting_model(seed + repeat, max_iter),
        repeats=repeats,
        seed=seed,
        scale_leaves=True,
    )
    return float(np.mean(aucs)) if aucs else float("nan")
