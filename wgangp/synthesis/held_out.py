"""What ships, evaluated on the held-out test split: metrics and report to the run."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from wgangp.config import EvaluateConfig
from wgangp.data.prepare import PreparedData
from wgangp.data.schema.table_schema import RARE
from wgangp.evaluation.frames import RareSampler
from wgangp.evaluation.suite import EvaluationResult, run_evaluation
from wgangp.serving.synthesizer import Synthesizer
from wgangp.tracking.tracker import Tracker

log = logging.getLogger("wgangp.train")


def evaluate_on_test(
    synthesizer: Synthesizer,
    data: PreparedData,
    output_dir: Path,
    tracker: Tracker,
    ec: EvaluateConfig,
    *,
    seed: int,
    step: int,
) -> dict[str, float]:
    """Score the synthesizer's rare-class rows against the test split in the table's schema
    (``data.schema``); logged at ``step``."""
    started = time.perf_counter()
    result = held_out_evaluation(
        data,
        lambda n, sample_seed: synthesizer.sample_class(n, RARE, seed=sample_seed),
        ec,
        seed=seed,
    )
    eval_dir = output_dir / "evaluation"
    result.write(eval_dir)
    tracker.log_metrics(result.metrics, step)
    tracker.log_artifact(eval_dir, "evaluation")
    log.info("evaluation took %.1f s", time.perf_counter() - started)
    return dict(result.metrics)


def held_out_evaluation(
    data: PreparedData, sample_rare: RareSampler, ec: EvaluateConfig, *, seed: int
) -> EvaluationResult:
    """The evaluation of ``sample_rare``'s rows on the rows scores use (``data.score_rows``: the
    samples of both classes), privacy's distances to every training row fits use
    (``data.fit_rows``), privacy counting ``data.entity``'s entities; a run's and
    ``python -m wgangp.evaluate``'s."""
    scored = data.score_rows
    return run_evaluation(
        scored.train,
        scored.test,
        sample_rare,
        ec,
        data.schema,
        seed=seed,
        disclosure_train=data.fit_rows.train,
        entity=data.entity,
    )
