"""The one-run audit's bound (scripts/audit_bound.py): the paper's own figures, and randomized
response of a known epsilon, the mechanism the bound is tight for, checked by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from scripts.audit_bound import epsilon_lower_bound, guesses, p_value, right_guesses


def test_the_papers_figures() -> None:
    # Appendix D's example (1,000 canaries, 100 guesses, 75 right, delta 1e-4): 0.673; Section 7's
    # DP-SGD audit (100,000 canaries, 1,510 guesses, 1,439 right, delta 1e-5): 2.675.
    assert epsilon_lower_bound(1000, 100, 75, 1e-4) == pytest.approx(0.673, abs=1e-3)
    assert epsilon_lower_bound(100_000, 1510, 1439, 1e-5) == pytest.approx(2.675, abs=1.5e-3)
    # Pure DP, all 100 guessed: 75 right is likely at epsilon log 3 (q = 3/4).
    assert p_value(100, 100, 75, math.log(3), 0.0) == pytest.approx(0.553, abs=1e-3)


def test_the_p_value_grows_with_epsilon_and_delta_and_refuses_impossible_counts() -> None:
    values = [p_value(200, 50, 40, eps, 1e-5) for eps in (0.0, 0.5, 1.0, 2.0)]
    assert values == sorted(values) and values[0] < 1e-3 < 0.5 < values[-1]
    assert p_value(200, 50, 40, 1.0, 1e-3) > p_value(200, 50, 40, 1.0, 0.0)
    assert p_value(10, 5, 0, 1.0, 1e-5) == 1.0  # nothing right: no evidence
    with pytest.raises(ValueError, match="v <= r <= m"):
        p_value(10, 5, 6, 1.0, 0.0)
    with pytest.raises(ValueError, match="alpha"):
        epsilon_lower_bound(10, 5, 5, 0.0, alpha=1.5)


def test_chance_guesses_give_no_bound_and_perfect_ones_a_bound_that_grows_with_m() -> None:
    assert epsilon_lower_bound(200, 200, 100, 1e-5) == 0.0
    ceilings = [epsilon_lower_bound(m, m, m, 1e-5) for m in (100, 200, 1000)]
    assert ceilings == sorted(ceilings) and 3.3 < ceilings[0] < 3.7 and ceilings[-1] > 5.5


def randomized_response(m: int, epsilon: float, rng: np.random.Generator) -> tuple[int, int]:
    """Canaries in with probability 1/2; each guess is right with probability e^eps/(1+e^eps):
    the eps-DP mechanism whose best attack meets the bound."""
    included = rng.random(m) < 0.5
    right = rng.random(m) < 1 / (1 + math.exp(-epsilon))
    guessed = np.where(included == right, 1, -1)
    return right_guesses(guessed, included)


@pytest.mark.parametrize("delta", [0.0, 1e-5])
def test_randomized_response_of_a_known_epsilon_is_bounded_below_it_and_close(delta) -> None:
    rng = np.random.default_rng(0)
    for epsilon in (1.0, 2.0):
        few = [epsilon_lower_bound(500, *randomized_response(500, epsilon, rng), delta)
               for _ in range(100)]  # fmt: skip
        # Never above epsilon but 1 time in 20 (here: at most 10 of 100, for the draw's luck).
        assert sum(b > epsilon for b in few) <= 10
        many = [epsilon_lower_bound(50_000, *randomized_response(50_000, epsilon, rng), delta)
                for _ in range(5)]  # fmt: skip
        assert all(0.93 * epsilon < b <= epsilon * 1.01 for b in many), many


def test_guesses_take_the_most_confident_of_each_side_and_abstain_on_the_rest() -> None:
    scores = np.array([0.1, 0.9, 0.5, 0.7, 0.2, 0.3])
    assert guesses(scores, 4).tolist() == [-1, 1, 0, 1, -1, 0]
    assert guesses(scores, 3).tolist() == [-1, 1, 0, 1, 0, 0]
    assert guesses(scores, 0).tolist() == [0] * 6
    included = np.array([False, True, True, False, False, True])
    assert right_guesses(guesses(scores, 4), included) == (4, 3)
    with pytest.raises(ValueError, match="guesses"):
        guesses(scores, 7)
