"""A run's privacy budget split into its parts, before any row is read for them.

A run under ``privacy.epsilon`` releases two kinds of things, composed in one accountant:

1. **Statistics** fitted before training (the schema's description and levels, every column's
   bounds and knots, the entity counts the sampling rates come from) and the calibration's after
   it, each a Gaussian mechanism of sensitivity 1 (:mod:`wgangp.privacy.mechanisms`).
   :func:`statistics_noise` gives them one noise multiplier from their number, which the run
   counts from public inputs alone (the config and the column names, never a row): the one at
   which all of them together spend ``statistics_share`` of epsilon.
2. **DP-SGD's critic updates** (:mod:`wgangp.step.dp_sgd`): ``trainer.steps x trainer.n_critic``
   of them, each over a Poisson sample of entities. :func:`plan_training` gives them the smallest
   noise multiplier that keeps everything within the budget.

**Why Rényi accounting.** DP-SGD's sampling rates are set from the noisy entity counts, which are
outputs of step 1: its mechanism is chosen adaptively, which the composition theorem of privacy
loss distributions (PLD) does not cover. Rényi DP does, through filters (Feldman and Zrnic,
"Individual Privacy Accounting via a Rényi Filter", NeurIPS 2021): at each order alpha of
``dp_accounting``'s fixed grid, a budget fixed before any row is read (the Rényi divergence that
converts to the target epsilon at delta); a composition whose Rényi divergence at alpha never
exceeds it is (alpha, budget)-RDP however its mechanisms were chosen. The plan picks the least
DP-SGD noise that keeps at least one order within its budget, and the run reports the epsilon of
the best such order. On the credit table's plan this costs about a tenth more DP-SGD noise than
a PLD of the same events would need (docs/privacy.md).

**Delta is public.** ``privacy.delta`` defaults to :data:`DEFAULT_DELTA`, never read off the
table; a run whose noisy entity count says delta is not below 1 / (10 x entities) is refused in
one line before training (:func:`check_delta`), as the count is itself a release.

The level selections (:func:`~wgangp.privacy.mechanisms.dp_levels`) add a delta of their own: their
share of delta is fixed first, and the accountant gets what is left.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import dp_accounting
from dp_accounting import DpEvent
from scipy import special

from wgangp.errors import ConfigError
from wgangp.privacy.accountant import (
    Budget,
    dp_sgd_event,
    epsilon_by_event,
    epsilon_spent,
    noise_for_budget,
)
from wgangp.tracking.names import PRIVACY_DELTA, PRIVACY_EPSILON

#: The share of delta the level selections may add (the accountant gets the rest).
SELECTION_DELTA_SHARE = 0.1
#: A noise multiplier above this leaves the critic's updates mostly noise: the run warns.
HEAVY_NOISE = 20.0


#: ``privacy.delta`` when not given: public, never read off the table.
DEFAULT_DELTA = 1e-6
#: The accountant every private run composes in (module doc: why not PLD).
ACCOUNTANT = "rdp"


def privacy_delta(given: float | None) -> float:
    """``privacy.delta``, or the public default."""
    return DEFAULT_DELTA if given is None else given


def check_delta(delta: float, entities: float, given: bool) -> None:
    """Refuse a delta not below 1 / (10 x ``entities``), the noisy entity count (a release, so
    reading it is post-processing): such a delta allows leaking one entity outright."""
    if delta < 1.0 / (10.0 * max(entities, 1.0)):
        return
    suggested = 10.0 ** math.floor(math.log10(1.0 / (10.0 * max(entities, 1.0))))
    key = f"privacy.delta={delta:g}" if given else f"the default privacy.delta ({delta:g})"
    raise ConfigError(
        f"{key} is not below 1 / (10 x entities) for about {entities:,.0f} entities (a noisy "
        f"count): it would let one of them leak outright; set privacy.delta={suggested:g}"
    )


#: Per feature of an undeclared table, the most releases any kind of column needs: its votes,
#: its levels' selection, the transform's bounds and tree, the calibration's block and gap per
#: class (:mod:`wgangp.data.private_table`, :mod:`wgangp.training.private_fit`).
RELEASES_PER_FEATURE = 8


def undeclared_releases(features: int) -> int:
    """The releases an undeclared table of ``features`` feature columns may need at most (the
    header is public): the description's noise is set by it before any row is read."""
    return RELEASES_PER_FEATURE * features + 2  # and the label's selection, the entity counts


def statistics_noise(budget: Budget, share: float, releases: int, spent: float = 0.0) -> float:
    """The noise multiplier at which ``releases`` Gaussian releases of sensitivity 1 spend
    ``share`` of ``budget.epsilon`` at ``budget.delta`` together, after releases already made
    that add up to ``spent`` (the sum of 1 / noise multiplier squared over them).

    k such releases at noise s compose exactly to one at s / sqrt(k), and Gaussian releases
    compose by adding their 1 / s^2: one release's noise for the share is found by bisection on
    the Gaussian mechanism's exact privacy profile (Balle and Wang 2018: the delta of noise s at
    epsilon e is Phi(1/(2s) - e s) - exp(e) Phi(-1/(2s) - e s)), and what ``spent`` leaves of
    its 1 / s^2 is shared by the ``releases``. The tests check it against dp-accounting's PLD."""
    if not 0 < share < 1:
        raise ValueError(f"share must be in (0, 1) (got {share})")
    if releases < 1:
        raise ValueError(f"releases must be >= 1 (got {releases})")
    target = share * budget.epsilon
    low, high = 1e-4, 1e6
    for _ in range(100):
        middle = math.sqrt(low * high)
        if _gaussian_delta(middle, target) > budget.delta:
            low = middle
        else:
            high = middle
    left = 1.0 / high**2 - spent
    if left <= 0:
        raise ValueError(
            f"the releases already made spend the statistics' share ({share:g} of epsilon "
            f"{budget.epsilon:g}) before the last {releases}"
        )
    return math.sqrt(releases / left)


def _gaussian_delta(sigma: float, epsilon: float) -> float:
    """The Gaussian mechanism's (sensitivity 1, noise ``sigma``) delta at ``epsilon``."""
    a, b = 0.5 / sigma - epsilon * sigma, -0.5 / sigma - epsilon * sigma
    # exp(e) Phi(b) as exp(e + log Phi(b)): finite where exp(e) alone overflows.
    return _phi(a) - math.exp(epsilon + _log_phi(b))


def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2))


def _log_phi(x: float) -> float:
    """log Phi(x), accurate far into the lower tail (scipy's log_ndtr)."""
    return float(special.log_ndtr(x))


@dataclass(frozen=True)
class TrainingPlan:
    """DP-SGD's settings and what the whole run spends.

    ``expected``: per class (rest, rare) the expected entities of a critic update's sample;
    ``rates``: per class the chance that an entity is in it (the accountant takes the larger);
    ``entities``: the noisy entity counts the rates come from."""

    budget: Budget
    noise_multiplier: float
    clip: float
    critic_iterations: int
    entities: tuple[float, float]
    expected: tuple[float, float]
    rates: tuple[float, float]
    statistics_noise: float
    statistics: tuple[DpEvent, ...]
    selection_delta: float
    epsilon: float  # spent by everything, at budget.delta - selection_delta
    epsilon_statistics: float  # the statistics alone
    epsilon_training: float  # DP-SGD alone

    @property
    def sample_rate(self) -> float:
        return max(self.rates)

    def training_event(self) -> DpEvent:
        return dp_sgd_event(self.noise_multiplier, self.sample_rate, self.critic_iterations)

    def describe(self) -> str:
        """The limits line, logged before training."""
        rest, rare = self.entities
        return (
            f"privacy: epsilon {self.budget.epsilon:g} at delta {self.budget.delta:.0e} per "
            f"entity, ~{rare:.0f} rare and ~{rest:.0f} other entities (noisy counts): "
            f"{self.critic_iterations} critic updates, each sampling {self.rates[1]:.2%} of the "
            f"rare entities (~{self.expected[1]:.0f}), leave noise multiplier "
            f"{self.noise_multiplier:.3g} at clip {self.clip:g}; the statistics spend epsilon "
            f"{self.epsilon_statistics:.3g} alone, everything {self.epsilon:.4g}; the last step "
            "ships"
        )

    def advice(self) -> str | None:
        """A warning when the budget leaves more noise than the critic can learn through."""
        if self.noise_multiplier <= HEAVY_NOISE:
            return None
        return (
            f"privacy: noise multiplier {self.noise_multiplier:.3g} leaves the critic's updates "
            "mostly noise: fewer trainer.steps or trainer.n_critic, a larger trainer.batch_size, "
            "or a larger privacy.epsilon"
        )

    def metrics(self) -> dict[str, float]:
        return {PRIVACY_EPSILON: self.epsilon, PRIVACY_DELTA: self.budget.delta}

    def params(self) -> dict[str, float | int]:
        """Each part's epsilon alone (they do not add up: composition is sub-additive) and the
        settings that spent them."""
        return {
            "privacy.epsilon.statistics": round(self.epsilon_statistics, 6),
            "privacy.epsilon.training": round(self.epsilon_training, 6),
            "privacy.delta.selection": self.selection_delta,
            "privacy.noise_multiplier": round(self.noise_multiplier, 6),
            "privacy.statistics_noise": round(self.statistics_noise, 6),
            "privacy.sample_rate": round(self.sample_rate, 8),
            "privacy.critic_iterations": self.critic_iterations,
        }

    def summary(self) -> dict[str, float | int | str]:
        """What ships in the bundle's manifest (``synthesizer.json``)."""
        return {
            "epsilon": self.epsilon,
            "delta": self.budget.delta,
            "epsilon_target": self.budget.epsilon,
            "unit": "entity",
            "epsilon_statistics": self.epsilon_statistics,
            "epsilon_training": self.epsilon_training,
            "noise_multiplier": self.noise_multiplier,
            "clip": self.clip,
            "sample_rate": self.sample_rate,
            "critic_iterations": self.critic_iterations,
            "accountant": "dp_accounting RDP (Renyi filters: adaptive sampling rates)",
        }


def plan_training(
    budget: Budget,
    statistics: list[DpEvent],
    statistics_noise_multiplier: float,
    selection_delta: float,
    entities: tuple[float, float],
    expected: tuple[float, float],
    critic_iterations: int,
    clip: float,
) -> TrainingPlan:
    """DP-SGD's noise multiplier for ``critic_iterations`` updates sampling ``expected`` entities
    of each class out of the noisy ``entities`` counts (rates capped at 1), after the released
    ``statistics``; ValueError when the budget leaves nothing for training."""
    rest, rare = (min(1.0, e / max(n, 1.0)) for e, n in zip(expected, entities, strict=True))
    rates = (rest, rare)
    sampled = (rest * max(entities[0], 1.0), rare * max(entities[1], 1.0))
    delta = budget.delta - selection_delta
    accounted = Budget(budget.epsilon, delta)
    sigma = noise_for_budget(
        accounted, max(rates), critic_iterations, statistics, accountant=ACCOUNTANT
    )
    training = dp_sgd_event(sigma, max(rates), critic_iterations)
    together = epsilon_spent([*statistics, training], delta, ACCOUNTANT)
    alone = epsilon_by_event(
        [dp_accounting.ComposedDpEvent(list(statistics)), training], delta, ACCOUNTANT
    )
    return TrainingPlan(
        budget=budget,
        noise_multiplier=sigma,
        clip=clip,
        critic_iterations=critic_iterations,
        entities=entities,
        expected=sampled,
        rates=rates,
        statistics_noise=statistics_noise_multiplier,
        statistics=tuple(statistics),
        selection_delta=selection_delta,
        epsilon=together,
        epsilon_statistics=alone[0],
        epsilon_training=alone[1],
    )
