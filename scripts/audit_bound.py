"""The lower bound on epsilon that one training run's canaries support (Steinke, Nasr and
Jagielski, "Privacy Auditing with One (1) Training Run", NeurIPS 2023).

The audit: m canaries, each put in the training table independently with probability 1/2; after
one run an attacker who sees only the output guesses "in" or "out" for r of them (abstaining on
the rest), v guesses right. Their Corollary 5.4 (the (epsilon, delta) form of Theorem 3.1 with
abstentions): if the run is (epsilon, delta)-DP with respect to each canary, then

    P[v or more right] <= P[B >= v] + 2 m delta max_{1<=i<=v} P[v-i <= B < v] / i,
    B ~ Binomial(r, q), q = e^epsilon / (1 + e^epsilon),

so a run whose v has that probability below a level alpha is not (epsilon, delta)-DP, at
confidence 1 - alpha. The bound is the largest such epsilon, found as their Appendix D does (a
bracket stepped up by 1, then bisection, keeping the end that is still rejected): 0 when even
epsilon 0 is not rejected. The guarantee holds whatever the attack is, as long as the guesses
read only the output and what is public (never which canaries went in).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

#: Bisection steps after the bracket: 2^-40 of a unit of epsilon.
BISECTIONS = 40


def p_value(m: int, r: int, v: int, epsilon: float, delta: float) -> float:
    """The largest chance an (epsilon, delta)-DP run gives ``v`` or more right guesses out of
    ``r``, with ``m`` canaries (module doc); at most 1."""
    if not 0 <= v <= r <= m:
        raise ValueError(f"need 0 <= v <= r <= m, got v={v}, r={r}, m={m}")
    if epsilon < 0 or not 0 <= delta <= 1:
        raise ValueError(f"need epsilon >= 0 and 0 <= delta <= 1, got {epsilon}, {delta}")
    q = 1.0 / (1.0 + math.exp(-epsilon))
    tail = float(stats.binom.sf(v - 1, r, q))  # P[Binomial(r, q) >= v]
    if delta == 0 or v == 0:
        return min(tail, 1.0)
    below = stats.binom.pmf(np.arange(v - 1, -1, -1), r, q)  # P[B = v-1], P[B = v-2], ...
    steps = np.arange(1, v + 1)
    spread = float(np.max(np.cumsum(below) / steps))  # max_i P[v-i <= B < v] / i
    return min(tail + 2 * m * delta * spread, 1.0)


def epsilon_lower_bound(m: int, r: int, v: int, delta: float, alpha: float = 0.05) -> float:
    """The largest epsilon at which ``v`` right guesses of ``r`` (``m`` canaries) have a
    p-value below ``alpha``: the run is not (epsilon, delta)-DP, at confidence 1 - alpha."""
    if not 0 < alpha < 1:
        raise ValueError(f"need 0 < alpha < 1, got {alpha}")
    low, high = 0.0, 1.0
    if p_value(m, r, v, low, delta) >= alpha:
        return 0.0
    while p_value(m, r, v, high, delta) < alpha:
        low, high = high, high + 1.0
    for _ in range(BISECTIONS):
        middle = (low + high) / 2
        if p_value(m, r, v, middle, delta) < alpha:
            low = middle
        else:
            high = middle
    return low


def guesses(scores: np.ndarray, count: int) -> np.ndarray:
    """+1 ("in") for the ``count`` // 2 + ``count`` % 2 highest scores, -1 ("out") for the
    ``count`` // 2 lowest, 0 (abstain) for the rest: the most confident ``count`` guesses of an
    attack whose high score means "member"."""
    scores = np.asarray(scores, float)
    if not 0 <= count <= len(scores):
        raise ValueError(f"need 0 <= guesses <= {len(scores)}, got {count}")
    order = np.argsort(-scores, kind="stable")
    out = np.zeros(len(scores), int)
    n_in = count - count // 2
    out[order[:n_in]] = 1
    if count // 2:
        out[order[len(scores) - count // 2 :]] = -1
    return out


def right_guesses(guessed: np.ndarray, included: np.ndarray) -> tuple[int, int]:
    """(r, v): how many guesses were made, and how many of them were right."""
    guessed, included = np.asarray(guessed, int), np.asarray(included, bool)
    truth = np.where(included, 1, -1)
    made = guessed != 0
    return int(made.sum()), int((guessed[made] == truth[made]).sum())
