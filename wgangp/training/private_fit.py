"""What a run under ``privacy.epsilon`` releases before training, and the plan for the rest.

In order, each release counted by one accountant (:mod:`wgangp.privacy.plan`):

1. the statistics' noise multiplier, from their number (known from the schema before any row is
   read) and ``privacy.statistics_share``; the level selections' threshold from their share of
   delta;
2. the schema that ships (:mod:`wgangp.data.schema.released`);
3. the transform (:class:`~wgangp.data.transform.private_column.PrivateFit`): one quantile tree a
   number (every row's scale: at the same noise, a class of a few hundred entities would read as
   noise), one histogram a categorical; and, with ``ship.calibrate_marginals``, the releases the
   calibration makes after training (one per block of the networks and class), counted here;
4. the entities of each class (noisy counts), which set each class's sampling rate;
5. DP-SGD's noise multiplier, for what is left of the budget.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from wgangp.config import Config
from wgangp.data.prepare import PreparedData
from wgangp.data.schema.released import released_schema
from wgangp.data.schema.table_schema import CLASSES, RARE, TableSchema
from wgangp.data.transform.private_column import PrivateFit
from wgangp.data.transform.table_transform import TableTransform
from wgangp.errors import ConfigError, DataError
from wgangp.privacy.accountant import Budget, gaussian_event
from wgangp.privacy.mechanisms import noisy_group_counts, threshold_for
from wgangp.privacy.plan import (
    SELECTION_DELTA_SHARE,
    TrainingPlan,
    default_delta,
    plan_training,
    statistics_noise,
)
from wgangp.privacy.randomness import (
    CALIBRATION_STREAM,
    STATISTICS_STREAM,
    NoiseSource,
    noise_source,
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


def release(cfg: Config, data: PreparedData) -> PrivateRelease:
    """Steps 1-5 of the module doc on ``data``'s training rows; one line for a budget that
    leaves nothing to train with."""
    privacy = cfg.privacy
    if data.inferred and cfg.data.positive is None:
        raise ConfigError(
            "privacy.epsilon needs data.positive (the class to synthesize): choosing the rarer "
            f"value of {data.schema.label} would read its counts; set data.positive=<value>"
        )
    # Fits read every training row under privacy (prepare_data(private=True): no sample).
    fitted_on = data.train
    entities = data.entities(fitted_on)
    assert privacy.epsilon is not None
    delta = privacy.delta or default_delta(len(np.unique(entities)))
    budget = Budget(privacy.epsilon, delta)
    selections = _selections(data.schema, data.inferred)
    selection_delta = SELECTION_DELTA_SHARE * delta if selections else 0.0
    accounted = Budget(privacy.epsilon, delta - selection_delta)
    calibrated = cfg.ship.calibrate_marginals
    calibration = _calibration_releases(data.schema) if calibrated else 0
    releases = selections + _transform_releases(data.schema, data.inferred) + 1 + calibration
    sigma = statistics_noise(accounted, privacy.statistics_share, releases)
    k = cfg.ship.min_atom_rows
    threshold = (
        threshold_for(sigma, selection_delta / selections, min_entities=k) if selections else k
    )
    noise = noise_source()
    rng = noise.numpy(STATISTICS_STREAM)

    schema, events, _ = released_schema(
        data.schema,
        fitted_on,
        entities,
        inferred=data.inferred,
        noise_multiplier=sigma,
        threshold=float(threshold),
        min_entities=k,
        rng=rng,
    )
    data = data.with_released_schema(schema)
    fit = PrivateFit(sigma, rng, per_class=False)
    transformer = TableTransform.fit(
        fitted_on,
        schema,
        data.classes(fitted_on),
        source=f"{data.origin} (training rows)",
        entities=entities,
        private=fit,
    )
    events.extend(fit.events)
    if calibrated:  # released after training, at this noise: counted now
        events.append(gaussian_event(sigma, MarginalCalibration.releases(transformer.layout)))
    _, of_class = entity_classes(data.classes(data.train), entities)
    counts, event = noisy_group_counts(of_class, 2, sigma, rng)
    events.append(event)
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
            budget, events, sigma, selection_delta, tuple(counts), expected, steps, privacy.clip
        )
    except ValueError as err:
        raise ConfigError(f"privacy.epsilon={privacy.epsilon:g} cannot be met: {err}") from None
    log.info("%s", plan.describe())
    advice = plan.advice()
    if advice:
        log.warning("%s", advice)
    calibration_fit = PrivateFit(sigma, noise.numpy(CALIBRATION_STREAM))
    return PrivateRelease(data, transformer, plan, entities, calibration_fit, share, noise)


def _selections(schema: TableSchema, inferred: bool) -> int:
    """The level selections :func:`released_schema` runs (known before any row is read)."""
    if not inferred:
        return 0
    return sum(
        1
        for column in schema.columns
        if column.kind == "categorical"
        and not all(isinstance(v, bool | np.bool_) for v in column.levels or ())
    )


def _transform_releases(schema: TableSchema, inferred: bool) -> int:
    """The transform's releases: a tree a number or datetime, its bounds first when the schema
    gives none (an inferred one's are not kept); a histogram a categorical."""
    releases = 0
    for column in schema.features:
        releases += 1
        if column.kind != "categorical" and (inferred or column.bounds is None):
            releases += 1
    return releases


def _calibration_releases(schema: TableSchema) -> int:
    """The calibration's releases: a block of the networks per feature, and per feature that
    may be empty its gap indicator, each per class."""
    features = schema.features
    return len(CLASSES) * (len(features) + sum(column.nullable for column in features))


def _share(counts: np.ndarray) -> float:
    """The rare class's share of entities, off the noisy counts (``empirical`` sampling)."""
    rest, rare = np.maximum(counts, 1.0)
    return float(rare / (rest + rare))
