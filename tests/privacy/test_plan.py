"""The budget split (:mod:`wgangp.privacy.plan`): what it reports is dp-accounting's own figure."""

from __future__ import annotations

import dp_accounting
import pytest
from support.docs import documented

from wgangp.errors import ConfigError
from wgangp.privacy.accountant import RDP_ORDERS, Budget, gaussian_event
from wgangp.privacy.plan import (
    DEFAULT_DELTA,
    check_delta,
    plan_training,
    privacy_delta,
    statistics_noise,
)


def _rdp_epsilon(events: list, delta: float) -> float:
    """dp-accounting's RDP epsilon at the run's public orders, composed here by hand."""
    accountant = dp_accounting.rdp.RdpAccountant(orders=RDP_ORDERS)
    return accountant.compose(dp_accounting.ComposedDpEvent(events)).get_epsilon(delta)


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
    # Renyi filters (plan.py): the sampling rate follows released counts, which PLD's
    # composition does not cover; RDP's, at each order with a budget fixed in advance, does.
    exact = _rdp_epsilon(events, 0.9e-6)
    assert plan.epsilon <= 3.0
    assert plan.epsilon == pytest.approx(exact, rel=1e-6)
    assert plan.epsilon > 2.95  # the noise is the least that fits, not any that does
    assert _pld_epsilon(events, 0.9e-6) < plan.epsilon  # what the filters cost
    assert plan.metrics() == {"privacy/epsilon": plan.epsilon, "privacy/delta": 1e-6}
    assert plan.summary()["delta"] == 1e-6 and plan.summary()["unit"] == "entity"
    assert plan.epsilon_statistics == pytest.approx(_rdp_epsilon(statistics, 0.9e-6), rel=1e-6)


def test_a_class_larger_than_its_batch_share_is_sampled_whole() -> None:
    plan = plan_training(Budget(10.0, 1e-5), [], 1.0, 0.0, (100.0, 20.0), (32.0, 32.0), 50, 1.0)
    assert plan.rates == (0.32, 1.0)
    assert plan.expected == (32.0, 20.0)
    assert "100.00% of the rare entities (~20)" in plan.describe()


def test_a_long_run_on_few_entities_is_warned_about() -> None:
    plan = plan_training(Budget(1.0, 1e-5), [], 1.0, 0.0, (500.0, 200.0), (32.0, 32.0), 20_000, 1.0)
    assert plan.noise_multiplier > 20
    assert "mostly noise" in (plan.advice() or "")


def test_statistics_after_earlier_releases_share_what_they_left() -> None:
    """Releases already made (``spent``: their 1 / sigma^2) and the rest spend the share
    together, as one Gaussian mechanism."""
    budget = Budget(3.0, 1e-6)
    earlier = statistics_noise(budget, 0.2, 30)  # as noisy as 30 releases would need
    rest = statistics_noise(budget, 0.2, 12, spent=10 / earlier**2)  # 10 of them made
    events = [dp_accounting.GaussianDpEvent(earlier)] * 10 + [
        dp_accounting.GaussianDpEvent(rest)
    ] * 12
    assert _pld_epsilon(events, 1e-6) == pytest.approx(0.6, rel=2e-3)
    assert rest < earlier
    with pytest.raises(ValueError, match="already made"):
        statistics_noise(budget, 0.2, 1, spent=31 / earlier**2)


def test_delta_is_public_and_checked_against_the_noisy_count() -> None:
    assert privacy_delta(None) == DEFAULT_DELTA == 1e-6 and privacy_delta(1e-8) == 1e-8
    check_delta(1e-6, 99_999.0, given=False)  # below 1 / (10 x entities)
    with pytest.raises(ConfigError) as err:
        check_delta(1e-6, 1_200_000.0, given=False)
    line = str(err.value)
    assert "default privacy.delta (1e-06)" in line and "set privacy.delta=1e-08" in line
    documented(line)
    with pytest.raises(ConfigError, match="privacy.delta=1e-05 is not below"):
        check_delta(1e-5, 20_000.0, given=True)
