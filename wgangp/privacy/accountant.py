"""What a run's releases spend of an (epsilon, delta) budget, and the noise a budget allows.

Every release is described as a ``dp_accounting`` event: DP-SGD's noisy steps
(:func:`dp_sgd_event`), statistics released with the Gaussian mechanism (:func:`gaussian_event`,
and the events of :mod:`wgangp.privacy.mechanisms`). All of a run's events are composed in one
accountant, never summed: composition is sub-additive, and one accountant over everything is the
run's guarantee. Neighbouring datasets differ by adding or removing one entity with all its rows
(``dp_accounting``'s ``ADD_OR_REMOVE_ONE``, applied to entities): the mechanisms must sample,
clip and count per entity for the guarantee to be the entity's.

PLD accounting (privacy loss distributions) is the default: the tightest of the library's
accountants for these events. RDP is kept for comparison with published figures.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import dp_accounting
from dp_accounting import DpEvent

ACCOUNTANTS = ("pld", "rdp")

# The PLD's privacy-loss grid step: finer is slower (time ~ 1 / step), coarser overstates epsilon
# (by ~ step squared, growing with the steps composed), badly so for a small epsilon. So a first
# pass at _COARSE gives the scale, and an epsilon below 1 is computed again on a grid of
# _RELATIVE x epsilon (its loss distribution is narrow, so the finer grid costs little).
# docs/privacy.md gives how far each overstates.
_COARSE = 1e-3
_RELATIVE = 1e-3
_FINEST = 1e-5

# noise_for_budget searches noise multipliers within these limits. Below 1/8 DP-SGD protects
# nothing (epsilon in the hundreds or thousands) and its loss distribution is the widest, so the
# costliest to compute; a budget still exceeded at 2**20 is one no training fits in.
_SIGMA_LOW = 2.0**-3
_SIGMA_HIGH = 2.0**20
# Relative tolerance on the noise multiplier: epsilon moves ~1 to 2x as much (relative), about
# the PLD grid's own error.
_SIGMA_TOL = 1e-3


#: The Rényi orders RDP accounting reads: fixed and public, as a Rényi filter's must be
#: (:mod:`wgangp.privacy.plan`). Whole orders and a few fractional ones: within 0.2% of
#: dp-accounting's default grid's epsilon near the budgets a run uses, at a fifth of its time
#: (the fractional orders' series are the slow part).
RDP_ORDERS = (1.25, 1.5, 1.75, 2.25, 2.5, 3.5, 4.5, *range(2, 65), 80, 96, 128, 192, 256)


@dataclass(frozen=True)
class Budget:
    """An (epsilon, delta) guarantee per entity: everything a run releases stays within it."""

    epsilon: float
    delta: float

    def __post_init__(self) -> None:
        _check_positive("epsilon", self.epsilon)
        _check_delta(self.delta)


def dp_sgd_event(noise_multiplier: float, sample_rate: float, steps: int) -> DpEvent:
    """``steps`` noisy gradient releases, each over a Poisson sample of entities.

    ``noise_multiplier`` is the noise's standard deviation over the clipping norm (the L2
    sensitivity of the clipped sum); ``sample_rate`` the probability that a given entity is in a
    step's sample. Where rates differ (per class), pass the largest: the guarantee is the
    worst-off entity's. At rate 1 (every entity, every step) it is the plain Gaussian mechanism,
    which PLD composes exactly, not on a grid.
    """
    _check_positive("noise_multiplier", noise_multiplier)
    if not _is_real(sample_rate) or not 0 < sample_rate <= 1:
        raise ValueError(f"sample_rate must be in (0, 1] (got {sample_rate!r})")
    _check_count("steps", steps)
    step = dp_accounting.GaussianDpEvent(float(noise_multiplier))
    if sample_rate < 1:
        step = dp_accounting.PoissonSampledDpEvent(float(sample_rate), step)
    return dp_accounting.SelfComposedDpEvent(step, int(steps))


def gaussian_event(noise_multiplier: float, count: int = 1) -> DpEvent:
    """``count`` releases with the Gaussian mechanism, each of L2 sensitivity 1 under adding or
    removing an entity, with noise of standard deviation ``noise_multiplier``.

    A vector whose L2 sensitivity is 1 as a whole (an entity's normalised histogram) is one
    release, not one per bin; ``count`` statistics of sensitivity 1 each are ``count`` releases.
    """
    _check_positive("noise_multiplier", noise_multiplier)
    _check_count("count", count)
    return dp_accounting.SelfComposedDpEvent(
        dp_accounting.GaussianDpEvent(float(noise_multiplier)), int(count)
    )


def epsilon_spent(events: Sequence[DpEvent], delta: float, accountant: str = "pld") -> float:
    """The epsilon at ``delta`` of all ``events`` composed in one accountant ("pld" or "rdp").

    An upper bound on the true epsilon with either accountant (PLD's grid rounds pessimistically),
    so a run reported within budget is within it.
    """
    _check_delta(delta)
    _check_accountant(accountant)
    composed = _composed(events)
    step = _COARSE
    epsilon = _epsilon(_accountant(accountant, step), composed, delta)
    # Then on the grid this epsilon's size calls for (see _COARSE), again while that grid is a
    # fifth finer or more: a coarse grid can overstate a small epsilon several times over.
    while accountant == "pld" and _grid_step(epsilon) <= 0.8 * step:
        step = _grid_step(epsilon)
        epsilon = _epsilon(_accountant(accountant, step), composed, delta)
    return epsilon


def epsilon_by_event(
    events: Sequence[DpEvent], delta: float, accountant: str = "pld"
) -> tuple[float, ...]:
    """Each event's epsilon at ``delta`` as if it were the only release, for reports.

    They do not add up to :func:`epsilon_spent`, which is smaller than their sum: they say which
    release costs most, not how the total splits.
    """
    _composed(events)
    return tuple(epsilon_spent([event], delta, accountant) for event in events)


def noise_for_budget(
    budget: Budget,
    sample_rate: float,
    steps: int,
    fixed: Sequence[DpEvent] = (),
    *,
    accountant: str = "pld",
) -> float:
    """The smallest DP-SGD noise multiplier whose ``steps`` steps at ``sample_rate``, composed
    with the ``fixed`` releases, spend at most ``budget.epsilon`` at ``budget.delta``.

    "Spend" is :func:`epsilon_spent`'s, with the same accountant: the returned multiplier, and
    any larger one, is reported within budget. Found by ``dp_accounting.calibrate_dp_mechanism``
    in a bracket around a first guess, to 0.1% of the multiplier.
    """
    if not isinstance(budget, Budget):
        raise ValueError(f"budget must be a Budget (got {type(budget).__name__})")
    dp_sgd_event(1.0, sample_rate, steps)  # checks sample_rate and steps
    _check_accountant(accountant)
    fixed_events = list(_composed(fixed).events)
    target, delta = budget.epsilon, budget.delta

    already = epsilon_spent(fixed_events, delta, accountant) if fixed_events else 0.0
    if already >= target:
        raise ValueError(
            f"the fixed releases alone spend epsilon {already:.4g} of the budget's {target:g} "
            f"(delta {delta:g}), leaving nothing for training: raise the budget's epsilon, or "
            "release fewer statistics, or with more noise"
        )

    def event(sigma: float) -> DpEvent:
        dp_sgd = dp_sgd_event(sigma, sample_rate, steps)
        return dp_accounting.ComposedDpEvent([*fixed_events, dp_sgd])

    def spent(sigma: float) -> float:
        return epsilon_spent([event(sigma)], delta, accountant)

    # Calibrated on the PLD grid epsilon_spent uses at the target; epsilon_spent may settle on a
    # slightly coarser one (its passes overstate), hence the check after the search.
    step = _grid_step(target)

    def make() -> dp_accounting.PrivacyAccountant:
        return _accountant(accountant, step)

    def over(sigma: float) -> bool:
        return _epsilon(make(), event(sigma), delta) > target

    # Epsilon falls roughly as 1 / sigma: DP-SGD's RDP epsilon at sigma 1 (quick in any setting,
    # where a PLD of a barely private run is not) over what the fixed releases leave places it.
    at_one = _epsilon(_accountant("rdp", step), dp_sgd_event(1.0, sample_rate, steps), delta)
    guess = min(max(at_one / (target - already), 2 * _SIGMA_LOW), _SIGMA_HIGH / 2)
    low, high = _bracket(over, guess, target)
    sigma = float(
        dp_accounting.calibrate_dp_mechanism(
            make,
            event,
            target,
            delta,
            bracket_interval=dp_accounting.ExplicitBracketInterval(low, high),
            tol=_SIGMA_TOL * low,
        )
    )
    for _ in range(20):
        excess = spent(sigma) / target
        if excess <= 1:
            return sigma
        sigma *= min(excess, 1.01) + _SIGMA_TOL
    raise RuntimeError(f"no noise multiplier near {sigma:.6g} keeps epsilon within {target:g}")


def _bracket(over: Callable[[float], bool], guess: float, target: float) -> tuple[float, float]:
    """Noise multipliers (low, high) around the answer: ``low`` overspends, ``high`` does not.

    Starts 10% either side of ``guess`` and widens (squaring the ratio) on the side that fails,
    so a good guess costs two evaluations, and those near the answer (small multipliers, the
    costly ones, are reached only when the answer is there).
    """
    factor = 1.1
    low, high = guess / factor, guess * factor
    low_over = False
    while over(high):
        if high >= _SIGMA_HIGH:
            raise ValueError(
                f"even noise multiplier {_SIGMA_HIGH:g} spends more than epsilon {target:g}: "
                "raise the budget's epsilon, or train fewer steps or at a lower sample rate, or "
                "release fewer statistics, or with more noise"
            )
        factor *= factor
        low, high, low_over = high, min(high * factor, _SIGMA_HIGH), True
    while not low_over and not over(low):
        if low <= _SIGMA_LOW:
            raise ValueError(
                f"epsilon {target:g} is met even at noise multiplier {_SIGMA_LOW:g}, where DP-SGD "
                "protects next to nothing: lower the budget's epsilon"
            )
        factor *= factor
        low, high = max(low / factor, _SIGMA_LOW), low
    return low, high


@contextlib.contextmanager
def _quiet_absl() -> Iterator[None]:
    """absl's warnings off for the block (dp-accounting logs through absl)."""
    absl = logging.getLogger("absl")
    level = absl.level
    absl.setLevel(logging.ERROR)
    try:
        yield
    finally:
        absl.setLevel(level)


def _grid_step(epsilon: float) -> float:
    """The PLD grid step for an epsilon of this size (see _COARSE)."""
    if not math.isfinite(epsilon):
        return _COARSE
    return min(_COARSE, max(_FINEST, _RELATIVE * epsilon))


def _accountant(name: str, step: float) -> dp_accounting.PrivacyAccountant:
    """A fresh accountant; ``step`` is the PLD's grid step (RDP has none)."""
    if name == "rdp":
        return dp_accounting.rdp.RdpAccountant(orders=RDP_ORDERS)
    return dp_accounting.pld.PLDAccountant(value_discretization_interval=step)


def _epsilon(accountant: dp_accounting.PrivacyAccountant, event: DpEvent, delta: float) -> float:
    with _quiet_absl():  # RDP leaves out orders whose series do not converge, warning each time
        return float(accountant.compose(event).get_epsilon(delta))


def _check_accountant(name: object) -> None:
    if name not in ACCOUNTANTS:
        raise ValueError(f"accountant must be one of {', '.join(ACCOUNTANTS)} (got {name!r})")


def _composed(events: Sequence[DpEvent]) -> dp_accounting.ComposedDpEvent:
    if isinstance(events, DpEvent) or not isinstance(events, Sequence):
        raise ValueError(f"events must be a sequence of DpEvent (got {type(events).__name__})")
    wrong = [type(event).__name__ for event in events if not isinstance(event, DpEvent)]
    if wrong:
        raise ValueError(f"events must be DpEvent instances (got {', '.join(wrong)})")
    return dp_accounting.ComposedDpEvent(list(events))


def _is_real(value: object) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def _check_positive(name: str, value: Any) -> None:
    if not _is_real(value) or not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number above 0 (got {value!r})")


def _check_delta(delta: Any) -> None:
    if not _is_real(delta) or not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1) (got {delta!r})")


def _check_count(name: str, value: object) -> None:
    if not isinstance(value, Integral) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a whole number of at least 1 (got {value!r})")
