"""The budget split (:mod:`wgangp.privacy.plan`): what it reports is dp-accounting's own figure."""

from __future__ import annotations

import math

import dp_accounting
import pytest

from wgangp.privacy.accountant import Budget, gaussian_event
from wgangp.privacy.plan import default_delta, plan_training, statistics_noise


def _pld_epsilon(events: list, delta: float) -> float:
    """dp-accounting's PLD epsilon, composed here without this package's code."""
    accountant = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4)
    return accountant.compose(dp_accounting.ComposedDpEvent(events)).get_epsilon(delta)


@pytest.mark.parametrize("releases", [1, 12, 40])
def test_the_statistics_spend_their_share_together(releases: int) -> None:
    budget = Budget(3.0, 1e-6)
    sigma = statistics_noise(budget, 0.1, releases)
    events = [dp_accounting.GaussianDpEvent(sigma)] * releases
    assert _pld_epsilon(events, 1e-6) == pytest.approx(0.3, rel=2e-3)


def test_the_reported_epsilon_is_the_accountants_and_within_budget() -> None:
    budget = Budget(3.0, 1e-6)
    sigma = statistics_noise(Budget(3.0, 0.9e-6), 0.1, 10)
    statistics = [gaussian_event(sigma) for _ in range(10)]
    plan = plan_training(
        budget, statistics, sigma, 1e-7, (20_000.0, 700.0), (32.0, 32.0), 2000, 1.0
    )
    assert plan.rates == pytest.approx((32 / 20_000, 32 / 700))
    q, steps = 32 / 700, 2000
    step = dp_accounting.PoissonSampledDpEvent(
        q, dp_accounting.GaussianDpEvent(plan.noise_multiplier)
    )
    events = [*statistics, dp_accounting.SelfComposedDpEvent(step, steps)]
    exact = _pld_epsilon(events, 0.9e-6)
    assert plan.epsilon <= 3.0
    assert plan.epsilon == pytest.approx(exact, rel=5e-3)
    assert plan.epsilon > 2.95  # the noise is the least that fits, not any that does
    assert plan.metrics() == {"privacy/epsilon": plan.epsilon, "privacy/delta": 1e-6}
    assert plan.summary()["delta"] == 1e-6 and plan.summary()["unit"] == "entity"
    assert plan.epsilon_statistics == pytest.approx(0.3, rel=1e-2)


def test_a_class_larger_than_its_batch_share_is_sampled_whole() -> None:
    plan = plan_training(Budget(10.0, 1e-5), [], 1.0, 0.0, (100.0, 20.0), (32.0, 32.0), 50, 1.0)
    assert plan.rates == (0.32, 1.0)
    assert plan.expected == (32.0, 20.0)
    assert "100.00% of the rare entities (~20)" in plan.describe()


def test_a_long_run_on_few_entities_is_warned_about() -> None:
    plan = plan_training(Budget(1.0, 1e-5), [], 1.0, 0.0, (500.0, 200.0), (32.0, 32.0), 20_000, 1.0)
    assert plan.noise_multiplier > 20
    assert "mostly noise" in (plan.advice() or "")


@pytest.mark.parametrize(
    ("entities", "delta"), [(1, 0.1), (9, 0.01), (3_000, 1e-5), (878, 1e-4), (1_000_000, 1e-7)]
)
def test_the_default_delta_is_below_one_over_the_entities(entities: int, delta: float) -> None:
    assert default_delta(entities) == pytest.approx(delta)
    assert default_delta(entities) < 1 / entities
    assert math.log10(default_delta(entities)) == pytest.approx(round(math.log10(delta)))
