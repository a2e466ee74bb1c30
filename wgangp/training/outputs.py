"""What a run leaves behind: the quality loop's selected step, the calibration of its marginals,
the Gaussian copula drawn for a share of its rows, the synthesizer bundle and its pyfunc model,
sampled fraud rows in original units, and the evaluation on the test split."""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from pathlib import Path

import keras
import numpy as np
import pandas as pd

from wgangp.config import Config
from wgangp.data.prepare import PreparedData
from wgangp.data.schema import CLASSES, FRAUD, LABEL
from wgangp.data.transform import TabularTransformer
from wgangp.evaluation.suite import run_evaluation
from wgangp.model.calibration import MarginalCalibration
from wgangp.model.copula import GaussianCopula
from wgangp.serving.bundle import BUNDLE
from wgangp.serving.pyfunc import model_spec
from wgangp.serving.synthesizer import Synthesizer
from wgangp.training.quality import (
    MIN_VAL_FRAUDS,
    BestGenerator,
    QualityLoop,
    Selection,
    ValidationProbe,
)
from wgangp.training.session import TrackedRun

log = logging.getLogger("wgangp.train")


#: Rows of each class drawn before anything is saved, to refuse a generator that puts out NaN.
PROBE_ROWS = 64
#: Generated rows per class the calibration's quantiles are fitted on (1,000 quantiles each).
CALIBRATION_ROWS = 20_000
#: Added to the run's seed for the calibration's draw: never the noise a user samples with.
CALIBRATION_SEED_OFFSET = 2**32


def quality_loop(
    generator: keras.Model,
    transformer: TabularTransformer,
    data: PreparedData,
    run: TrackedRun,
    cfg: Config,
) -> QualityLoop | None:
    """The run's quality loop; None when ``evaluate.every=0`` or validation has too few frauds."""
    ec = cfg.evaluate
    val_frauds = data.val[data.val[LABEL] == FRAUD]
    if ec.every == 0:
        return None
    if len(val_frauds) < MIN_VAL_FRAUDS:
        log.warning(
            "quality loop off: the validation split has %d fraud(s), fewer than %d; the last "
            "step is kept (raise data.val_fraction or use a larger table)",
            len(val_frauds),
            MIN_VAL_FRAUDS,
        )
        return None
    synthesizer = Synthesizer(generator, transformer, cfg.model.latent_dim)
    # The probe scores the rows a user would get from this step: calibrated when the run is,
    # mixed with the copula's rows when the run draws some.
    frauds = _training_rows(synthesizer, data, [FRAUD])
    if cfg.model.copula_share:
        synthesizer = replace(
            synthesizer, copula=GaussianCopula.fit(frauds, cfg.model.copula_share)
        )
    real = frauds if cfg.model.calibrate_marginals else {}
    seed = cfg.seed + CALIBRATION_SEED_OFFSET

    def probe_rows(n: int, sample_seed: int) -> pd.DataFrame:
        probed = _calibrated(synthesizer, real, seed) if real else synthesizer
        return probed.sample(n, label=FRAUD, seed=sample_seed)

    return QualityLoop(
        ValidationProbe(val_frauds, ec, cfg.seed),
        BestGenerator(generator, run.checkpoints.path),
        probe_rows,
        ec,
        cfg.trainer.steps,
    )


def select(quality: QualityLoop | None, run: TrackedRun, last_step: int) -> Selection | None:
    """Load the selected step's weights into the generator and tag the run; the selection
    (None without a quality loop: the last step is kept, unscored)."""
    selection = quality.best.load_into_generator() if quality else None
    if selection is None:
        run.tracker.set_tags({"selection.step": last_step, "selection.score": "none"})
        return None
    run.tracker.set_tags({"selection.step": selection.step, "selection.score": selection.score})
    run.tracker.log_metrics({"selection.score": selection.score}, last_step)
    log.info("selected step %d of %d (val.score %.4f)", selection.step, last_step, selection.score)
    return selection


def calibrate(
    synthesizer: Synthesizer, data: PreparedData, run: TrackedRun, cfg: Config
) -> Synthesizer:
    """With ``model.calibrate_marginals``: the synthesizer whose columns follow the training
    rows' marginals, class by class (:mod:`wgangp.model.calibration`); else unchanged.

    A generator that puts out NaN fails here, in ``Synthesizer.generate``'s one line.
    """
    if not cfg.model.calibrate_marginals:
        return synthesizer
    real = _training_rows(synthesizer, data, list(CLASSES))
    calibrated = _calibrated(synthesizer, real, cfg.seed + CALIBRATION_SEED_OFFSET)
    run.tracker.set_tags({"calibration": "marginals"})
    log.info("calibrated each generated column onto the training rows' quantiles")
    return calibrated


def add_copula(
    synthesizer: Synthesizer, data: PreparedData, run: TrackedRun, cfg: Config
) -> Synthesizer:
    """With ``model.copula_share``: the synthesizer that draws that share of its rows from a
    Gaussian copula of each class's training rows (:mod:`wgangp.model.copula`); else unchanged."""
    share = cfg.model.copula_share
    if not share:
        return synthesizer
    copula = GaussianCopula.fit(_training_rows(synthesizer, data, list(CLASSES)), share)
    run.tracker.set_tags({"copula.share": share})
    log.info(
        "%.0f%% of the sampled rows come from a Gaussian copula of the training rows", 100 * share
    )
    return replace(synthesizer, copula=copula)


def _training_rows(
    synthesizer: Synthesizer, data: PreparedData, classes: list[int]
) -> dict[int, np.ndarray]:
    """The training rows of each class in ``classes``, in the networks' space."""
    train = data.train
    return {c: synthesizer.transformer.transform(train[train[LABEL] == c]) for c in classes}


def _calibrated(synthesizer: Synthesizer, real: dict[int, np.ndarray], seed: int) -> Synthesizer:
    """``synthesizer`` with a calibration fitted on its current generator, for ``real``'s
    classes."""
    generated = {c: synthesizer.generate(CALIBRATION_ROWS, label=c, seed=seed) for c in real}
    return replace(synthesizer, calibration=MarginalCalibration.fit(generated, real))


def export(
    synthesizer: Synthesizer, run: TrackedRun, cfg: Config, selection: Selection | None
) -> Path:
    """Save the bundle; log it and its pyfunc model (registered with ``tracking.register_as``,
    scored by ``selection``); write ``trainer.sample_rows`` frauds.

    Both classes are sampled first: a generator whose rows are not finite fails the run here
    (``Synthesizer.sample`` refuses them) before a broken model is saved, logged or served.
    """
    output_dir, tracker = run.dirs.output, run.tracker
    synthesizer.sample(PROBE_ROWS, label=1 - FRAUD, seed=cfg.seed)
    frauds = synthesizer.sample(
        max(cfg.trainer.sample_rows, PROBE_ROWS), label=FRAUD, seed=cfg.seed
    )
    bundle = synthesizer.save(output_dir / BUNDLE)
    if cfg.tracking.log_model and tracker.run_id:
        tracker.log_artifact(bundle, BUNDLE)
        tracker.log_model(model_spec(bundle))  # queued after the bundle; tags model.uri
        if cfg.tracking.register_as:
            tracker.register_model(
                cfg.tracking.register_as,
                score=selection.score if selection else None,
                step=selection.step if selection else None,
                metric=cfg.evaluate.select_by if selection else None,
            )
    if cfg.trainer.sample_rows:
        # The first rows of a larger draw are the rows of the smaller one (same noise stream).
        frauds.head(cfg.trainer.sample_rows).to_csv(output_dir / "fraud_samples.csv", index=False)
        tracker.log_artifact(output_dir / "fraud_samples.csv")
    return bundle


def evaluate_on_test(
    synthesizer: Synthesizer, data: PreparedData, run: TrackedRun, cfg: Config, step: int
) -> dict[str, float]:
    """Score the synthesizer's frauds against the test split; metrics and report to the run."""
    started = time.perf_counter()
    result = run_evaluation(
        data.train,
        data.test,
        lambda n, seed: synthesizer.sample(n, label=FRAUD, seed=seed),
        cfg.evaluate,
        seed=cfg.seed,
    )
    eval_dir = run.dirs.output / "evaluation"
    result.write(eval_dir)
    run.tracker.log_metrics(result.metrics, step)
    run.tracker.log_artifact(eval_dir, "evaluation")
    log.info("evaluation took %.1f s", time.perf_counter() - started)
    return dict(result.metrics)
