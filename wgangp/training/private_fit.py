"""What a run under ``privacy.epsilon`` releases before training, and the plan for the rest.

In order, each release counted by one accountant (:mod:`wgangp.privacy.plan`):

0. a table with no declared schema released its description and its levels as it was read
   (:mod:`wgangp.data.private_table`), at a noise the config and its header fix;
1. the statistics' noise multiplier, from their number (known from the released or declared
   schema) and what step 0 left of ``privacy.statistics_share``;
2. a declared schema is public: only the counts the run added to it go
   (:mod:`wgangp.data.schema.released`);
3. the transform (:class:`~wgangp.data.transform.private_column.PrivateFit`): one quantile tree a
   number (every row's scale: at the same noise, a class of a few hundred entities would read as
   noise), one histogram a categorical; a column released as never empty gets its few gaps
   filled with the released fill; and, with ``ship.calibrate_marginals``, the releases the
   calibration makes after training (one per block of the networks and class), counted here;
4. the entities of each class (noisy counts), which set each class's sampling rate and check
   that delta is small enough;
5. DP-SGD's noise multiplier, for what is left of the budget.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import dp_accounting
import numpy as np

from wgangp.config import Config
from wgangp.data.prepare import PreparedData
from wgangp.data.private_table import PrivateReading
from wgangp.data.schema.description_votes import ReleasedDescription
from wgangp.data.schema.released import released_schema
from wgangp.data.schema.table_schema import RARE, TableSchema
from wgangp.data.transform.layout import table_layout
from wgangp.data.transform.private_column import PrivateFit
from wgangp.data.transform.table_transform import TableTransform
from wgangp.errors import ConfigError, DataError
from wgangp.privacy.accountant import Budget, gaussian_event
from wgangp.privacy.mechanisms import noisy_group_counts
from wgangp.privacy.plan import (
    SELECTION_DELTA_SHARE,
    TrainingPlan,
    check_delta,
    plan_training,
    privacy_delta,
    statistics_noise,
)
from wgangp.privacy.randomness import (
    CALIBRATION_STREAM,
    DESCRIPTION_STREAM,
    STATISTICS_STREAM,
    NoiseSource,
)
from wgangp.serving.calibration import MarginalCalibration
from wgangp.step.private_step import entity_classes

log = logging.getLogger("wgangp.train")


@dataclass
class PrivateRelease:
    """The split with the released schema, the released transform, DP-SGD's plan, and each
    training row's entity as the table had it (read again off the released schema's rows,
    rows that differ only in a level it no longer lists would merge)."""

    data: PreparedData
    transformer: TableTransform
    plan: TrainingPlan
    entities: np.ndarray
    #: The statistics' noise and generator, for the calibration's releases after training
    #: (reserved in the plan: the accountant counts them before DP-SGD's noise is set).
    statistics: PrivateFit
    #: The rare class's share of the generator's labels: 0.5 (``balanced``), or off the noisy
    #: entity counts (``empirical``), never the rows' own share.
    label_share: float
    #: The run's secret key: every DP draw's (:mod:`wgangp.privacy.randomness`).
    noise: NoiseSource

    def summary(self) -> dict[str, float | int | str]:
        """The guarantee the bundle records: the plan's, and where its noise came from."""
        return {**self.plan.summary(), "noise": self.noise.kind}


def private_reading(cfg: Config, noise: NoiseSource | None) -> PrivateReading | None:
    """How a run under ``privacy.epsilon`` reads its table (None without it)."""
    if noise is None:
        return None
    return PrivateReading(cfg.privacy, cfg.ship.min_atom_rows, noise.numpy(DESCRIPTION_STREAM))


def release(cfg: Config, data: PreparedData, noise: NoiseSource) -> PrivateRelease:
    """Steps 1-5 of the module doc on ``data``'s training rows, with ``noise``'s secret
    generators; one line for a budget that leaves nothing to train with."""
    privacy = cfg.privacy
    assert privacy.epsilon is not None
    # Fits read every training row under privacy (prepare_data(reading=...): no sample).
    fitted_on = data.train
    entities = data.entities(fitted_on)
    delta = privacy_delta(privacy.delta)
    described = data.description is not None
    # An undeclared table's selections ran as it was read, with this fixed share of delta.
    selection_delta = SELECTION_DELTA_SHARE * delta if described else 0.0
    accounted = Budget(privacy.epsilon, delta - selection_delta)
    releases = _transform_releases(data.schema, described) + 1
    if cfg.ship.calibrate_marginals:  # released after training, at this noise: counted now
        calibration = MarginalCalibration.releases(table_layout(data.schema.features))
        releases += calibration
    try:
        sigma = statistics_noise(
            accounted, privacy.statistics_share, releases, _spent(data.releases)
        )
    except ValueError as err:
        raise ConfigError(f"privacy.epsilon={privacy.epsilon:g} cannot be met: {err}") from None
    rng = noise.numpy(STATISTICS_STREAM)
    events = list(data.releases)
    if not described:  # a declared schema is public: only the counts the run added go
        schema, _, _ = released_schema(
            data.schema,
            fitted_on,
            entities,
            inferred=False,
            noise_multiplier=sigma,
            threshold=float(cfg.ship.min_atom_rows),
            min_entities=cfg.ship.min_atom_rows,
            rng=rng,
        )
        data = data.with_released_schema(schema)
    schema = data.schema
    fit = PrivateFit(sigma, rng, per_class=False)
    transformer = TableTransform.fit(
        fitted_on,
        schema,
        data.classes(fitted_on),
        source=f"{data.origin} (training rows)",
        entities=entities,
        dp=fit,
    )
    events.extend(fit.events)
    # A column released as never empty keeps the few gaps of its cells: the released fill.
    data = data.with_gaps_filled(
        {c.name: c.fill for c in transformer.columns if not c.schema.nullable}
    )
    if cfg.ship.calibrate_marginals:
        events.append(gaussian_event(sigma, calibration))
    _, of_class = entity_classes(data.classes(data.train), entities)
    counts, event = noisy_group_counts(of_class, 2, sigma, rng)
    events.append(event)
    check_delta(delta, float(np.maximum(counts, 0).sum()), given=privacy.delta is not None)
    batch = cfg.trainer.batch_size
    share = 0.5 if cfg.trainer.label_sampling == "balanced" else _share(counts)
    expected = (batch * (1 - share), batch * share)
    if counts[RARE] < 1:
        raise DataError(
            f"{data.origin}: the noisy count of entities with {schema.class_names[RARE]} is "
            f"{counts[RARE]:.0f} at noise {sigma:.3g}: too few to train on under "
            f"privacy.epsilon={privacy.epsilon:g}; raise it or privacy.statistics_share"
        )
    steps = cfg.trainer.steps * cfg.trainer.n_critic
    try:
        plan = plan_training(
            Budget(privacy.epsilon, delta),
            events,
            sigma,
            selection_delta,
            tuple(counts),
            expected,
            steps,
            privacy.clip,
        )
    except ValueError as err:
        raise ConfigError(f"privacy.epsilon={privacy.epsilon:g} cannot be met: {err}") from None
    if data.description is not None:
        log.info("%s", describe_release(data.description))
    log.info("%s", plan.describe())
    advice = plan.advice()
    if advice:
        log.warning("%s", advice)
    calibration_fit = PrivateFit(sigma, noise.numpy(CALIBRATION_STREAM))
    return PrivateRelease(data, transformer, plan, entities, calibration_fit, share, noise)


def describe_release(description: ReleasedDescription) -> str:
    """The line a run logs before training: how the description was released, and what the
    votes dropped (names only: the header is public)."""
    dropped = "; ".join(f"{c.name} ({c.dropped})" for c in description.dropped())
    return (
        "privacy: no data.schema, so the schema's description (each column's kind, gaps, "
        "identifiers) is released by noisy entity votes, facts fewer than about "
        f"{description.threshold:.0f} entities show unseen (docs/privacy.md); declare it with "
        "data.schema to spend nothing on it" + (f"; dropped: {dropped}" if dropped else "")
    )


def _spent(events: tuple) -> float:
    """What Gaussian releases already made use of the statistics' share: the sum of their
    1 / noise multiplier squared (:func:`~wgangp.privacy.plan.statistics_noise`)."""
    total = 0.0
    for event in events:
        count = 1
        if isinstance(event, dp_accounting.SelfComposedDpEvent):
            event, count = event.event, event.count
        if not isinstance(event, dp_accounting.GaussianDpEvent):
            raise TypeError(f"not a Gaussian release: {event!r}")
        total += count / event.noise_multiplier**2
    return total


def _transform_releases(schema: TableSchema, described: bool) -> int:
    """The transform's releases: a tree a number or datetime, its bounds first when the schema
    gives none (a released description gives none); a histogram a categorical."""
    releases = 0
    for column in schema.features:
        releases += 1
        if column.kind != "categorical" and (described or column.bounds is None):
            releases += 1
    return releases


def _share(counts: np.ndarray) -> float:
    """The rare class's share of entities, off the noisy counts (``empirical`` sampling)."""
    rest, rare = np.maximum(counts, 1.0)
    return float(rare / (rest + rare))
