"""One fit of the networks on a split: the transform fitted on its training rows, the training step,
the generator weight average, the step selection on its validation rows, the host loop to
``trainer.steps``. A run fits once, and once more on training plus validation rows with
``trainer.refit`` (:mod:`wgangp.training.refit`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

import keras

from wgangp.config import Config
from wgangp.data.prepare import PreparedData
from wgangp.data.transform.table_transform import TableTransform
from wgangp.step.batch import ClassBalancedRows, rare_share
from wgangp.step.private_step import EntityPools, PrivateTrainStep
from wgangp.step.train_step import build_train_step
from wgangp.synthesis.selection import StepSelector, step_selector
from wgangp.training.averaging import GeneratorAverage
from wgangp.training.loop import HostLoop, LoopOutcome
from wgangp.training.private_fit import PrivateRelease
from wgangp.training.refit import RefitRun
from wgangp.training.session import TrackedRun

log = logging.getLogger("wgangp.train")


@dataclass
class Fit:
    """One fit of the networks: the generator a user gets, its transform, the step selection
    (None for a refit, or when off) and how the loop ended."""

    generator: keras.Model
    transformer: TableTransform
    selector: StepSelector | None
    outcome: LoopOutcome


def fit_networks(
    cfg: Config,
    data: PreparedData,
    run: TrackedRun,
    loop_run: TrackedRun | RefitRun,
    released: PrivateRelease | None = None,
) -> Fit:
    """Fit the transform on ``data.train`` (its sample, ``data.fit_rows``) and train on every
    training row to ``trainer.steps``, logging through ``loop_run``; the step selection probes
    ``data.val`` when it has rare rows enough. Under ``privacy.epsilon``, ``released`` holds the
    released transform and the critic learns by DP-SGD (:mod:`wgangp.step.private_step`)."""
    if released is not None:
        return _fit_private(cfg, data, loop_run, released)
    fitted_on = data.fit_rows.train
    transformer = TableTransform.fit(
        fitted_on,
        data.schema,
        data.classes(fitted_on),
        scaling=cfg.preprocess.scaling,
        per_class=cfg.preprocess.per_class,
        point_masses=cfg.preprocess.point_masses,
        quantile_columns=cfg.preprocess.quantile_columns,
        source=f"{data.origin} (training rows)",
        min_rows=cfg.ship.min_atom_rows,
        entities=data.entities(fitted_on),
    )
    classes = data.classes(data.train)
    rows = ClassBalancedRows(
        transformer.transform(data.train, classes),
        classes,
        rare_share(cfg.trainer.label_sampling),
        layout=transformer.layout,
    )
    train_step = build_train_step(cfg, rows)
    loop_run.tracker.set_tags(
        {"strategy": cfg.trainer.strategy, "replicas": train_step.replicas.count}
    )
    decay = cfg.trainer.ema_decay
    average = GeneratorAverage(train_step.generator, decay) if decay > 0 else None
    # The generator a user gets: the weight average when there is one.
    generator = average.model if average else train_step.generator
    # A refit's split has no validation rows left: no loop (and no warning about it).
    selector = (
        step_selector(generator, transformer, data, run.checkpoints.path, cfg)
        if len(data.val)
        else None
    )
    loop = HostLoop(train_step, loop_run, cfg.trainer, cfg.tracking.log_every, selector, average)
    return Fit(generator, transformer, selector, loop.train())


def _fit_private(
    cfg: Config, data: PreparedData, loop_run: TrackedRun | RefitRun, released: PrivateRelease
) -> Fit:
    """The fit under privacy: the released transform, entity-level DP-SGD, the last step."""
    transformer = released.transformer
    train_step = private_train_step(cfg, data, released)
    loop_run.tracker.set_tags({"strategy": "none", "replicas": 1, "privacy": "dp-sgd"})
    decay = cfg.trainer.ema_decay
    average = GeneratorAverage(train_step.generator, decay) if decay > 0 else None
    generator = average.model if average else train_step.generator
    loop = HostLoop(train_step, loop_run, cfg.trainer, cfg.tracking.log_every, None, average)
    return Fit(generator, transformer, None, loop.train())


def private_train_step(
    cfg: Config, data: PreparedData, released: PrivateRelease
) -> PrivateTrainStep:
    """The training step a private run trains with, on ``data``'s training rows in the released
    transform (also what ``python -m scripts.dp_step_speed`` times)."""
    transformer = released.transformer
    classes = data.classes(data.train)
    x = transformer.transform(data.train, classes)
    # The generator's labels by the released share: the rows' own share would read their counts.
    rows = ClassBalancedRows(x, classes, released.label_share, layout=transformer.layout)
    return PrivateTrainStep(
        cfg.model,
        cfg.gp,
        cfg.trainer,
        seed=cfg.seed,
        rows=rows,
        pools=EntityPools(x, classes, released.entities),
        plan=released.plan,
        secret_key=released.noise.tf_key(),
    )


def refit_networks(
    cfg: Config, data: PreparedData, run: TrackedRun, steps: int
) -> tuple[PreparedData, Fit]:
    """``trainer.refit``: a second fit, from scratch, on the training and validation rows for
    ``steps`` steps; its split (what calibration and evaluation use from here on) and the fit."""
    data = data.with_validation_rows()
    log.info("refit: %d steps on %s", steps, data.describe())
    refit_run = RefitRun.of(run)
    rare = int(data.classes(data.train).sum())
    refit_run.tracker.set_tags({"steps": steps, "train_rare": rare})
    refit_cfg = replace(cfg, trainer=replace(cfg.trainer, steps=steps))
    fit = fit_networks(refit_cfg, data, run, refit_run)
    log.info("refit: %s", fit.outcome.describe())
    return data, fit
