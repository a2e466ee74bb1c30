"""Run the whole evaluation: fidelity, detection, utility against SMOTE, privacy; write the report.

Every part follows the table's schema (``schema``, Kaggle's credit-card table by default): the
frames hold its feature columns under their own names and dtypes (categories as their levels,
gaps as NaN) plus ``Class`` (1 = the rare class, the one synthesized); classifiers, distances and
baselines see them through :mod:`wgangp.evaluation.encoding`.

``run_evaluation`` is deterministic: every random choice (synthetic draws, normal subsamples, folds,
SMOTE, model seeds) derives from ``seed`` through numpy's ``SeedSequence``, so the same inputs and
seed give the same metrics.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from wgangp.config import EvaluateConfig
from wgangp.data.schema import FRAUD, LABEL
from wgangp.data.table_schema import TableSchema
from wgangp.errors import DataError
from wgangp.evaluation.baselines import BASELINES, baseline_rows
from wgangp.evaluation.detection import detection_metrics
from wgangp.evaluation.encoding import TableEncoding
from wgangp.evaluation.fidelity import fidelity_metrics, numeric_names
from wgangp.evaluation.frames import FraudSampler, check_frame, checked_sampler
from wgangp.evaluation.library_privacy import library_privacy
from wgangp.evaluation.plots import plot_correlations, plot_marginals, plot_projection
from wgangp.evaluation.privacy import near_copy_share_rows, privacy_metrics
from wgangp.evaluation.render import render_html, render_markdown
from wgangp.evaluation.utility import summarize, utility_metrics, utility_per_seed
from wgangp.files import write_text, write_with
from wgangp.tracking.names import EVAL, in_section

log = logging.getLogger(__name__)


@dataclass
class EvaluationResult:
    """Metrics (stable names in the ``eval`` section: ``eval/ks_mean``), tables, and the rows
    behind the figures."""

    metrics: dict[str, float]
    tables: dict[str, pd.DataFrame]
    #: "real_train_fraud", "real_test_fraud", "synthetic": kept for the figures of :meth:`write`.
    samples: dict[str, pd.DataFrame] = field(default_factory=dict, repr=False)
    #: The table the rows follow (Kaggle's credit-card table unless given).
    schema: TableSchema = field(default_factory=TableSchema.creditcard, repr=False)

    def write(self, out_dir: Path) -> list[Path]:
        """Write figures (PNG), CSV tables, ``metrics.csv``, ``report.md`` and ``report.html``."""
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        written: list[Path] = []
        if self.samples:
            real = self.samples["real_test_fraud"]
            synthetic = self.samples["synthetic"]
            schema = self.schema
            written.append(plot_marginals(real, synthetic, out_dir / "marginals.png", schema))
            if len(numeric_names(schema)) > 1:
                correlations = out_dir / "correlations.png"
                written.append(plot_correlations(real, synthetic, correlations, schema))
            else:
                log.info("no correlations.png: the table has fewer than two numeric columns")
            written.append(
                plot_projection(
                    self.samples["real_train_fraud"],
                    real,
                    synthetic,
                    out_dir / "projection.png",
                    schema,
                )
            )
        figures = [p.name for p in written]
        for name, table in self.tables.items():
            path = out_dir / f"{name}.csv"
            write_with(path, lambda tmp, t=table: t.to_csv(tmp, index=False))
            written.append(path)
        metrics_path = out_dir / "metrics.csv"
        metrics = pd.DataFrame({"metric": list(self.metrics), "value": list(self.metrics.values())})
        write_with(metrics_path, lambda tmp: metrics.to_csv(tmp, index=False))
        written.append(metrics_path)
        markdown = out_dir / "report.md"
        write_text(markdown, render_markdown(self.metrics, self.tables, figures))
        page = out_dir / "report.html"
        write_text(page, render_html(self.metrics, self.tables, figures))
        return [*written, markdown, page]


def derived_seeds(seed: int, count: int) -> list[int]:
    return [int(s) for s in np.random.SeedSequence(seed).generate_state(count)]


def run_evaluation(
    real_train: pd.DataFrame,
    real_test: pd.DataFrame,
    sample_fraud: FraudSampler,
    settings: EvaluateConfig,
    *,
    seed: int = 0,
    schema: TableSchema | None = None,
) -> EvaluationResult:
    """Evaluate the sampler's rare-class rows against real rows of the table ``schema`` (default:
    Kaggle's credit-card table); see the package modules for each metric."""
    settings.check()
    schema = schema or TableSchema.creditcard()
    with threadpool_limits(limits=settings.threads):
        return _evaluate(real_train, real_test, sample_fraud, settings, seed, schema)


def _evaluate(
    real_train: pd.DataFrame,
    real_test: pd.DataFrame,
    sample_fraud: FraudSampler,
    settings: EvaluateConfig,
    seed: int,
    schema: TableSchema,
) -> EvaluationResult:
    train = check_frame(real_train, "real_train", schema)
    test = check_frame(real_test, "real_test", schema)
    train_fraud = train[train[LABEL] == FRAUD].reset_index(drop=True)
    test_fraud = test[test[LABEL] == FRAUD].reset_index(drop=True)
    n_test_normal = int((test[LABEL] != FRAUD).sum())
    if len(train_fraud) < 2 or len(test_fraud) < 2 or n_test_normal < 1:
        raise DataError(
            f"the evaluation needs >= 2 rare-class rows in real_train (has {len(train_fraud)}), "
            f">= 2 in real_test (has {len(test_fraud)}) and others in real_test (has "
            f"{n_test_normal}): use a larger or stratified split"
        )
    draw = checked_sampler(sample_fraud, schema)
    sample_seed, detection_seed, *repeat_seeds = derived_seeds(seed, 2 + settings.seeds)
    ratios = [float(r) for r in settings.augment_ratios]
    timings: dict[str, float] = {}
    cpu_start = time.process_time()
    metrics: dict[str, float] = {}
    tables: dict[str, pd.DataFrame] = {}

    start = time.perf_counter()
    synthetic = draw(settings.n_synthetic, sample_seed)
    fidelity, tables["fidelity_per_feature"] = fidelity_metrics(
        test_fraud, synthetic, train_fraud, with_sdmetrics=settings.sdmetrics, schema=schema
    )
    metrics |= fidelity
    timings["fidelity"] = time.perf_counter() - start

    start = time.perf_counter()
    encoding = TableEncoding(schema, train)
    train_normal = train[train[LABEL] != FRAUD].reset_index(drop=True)
    frames = {"": synthetic, "control": train_fraud}
    for name in BASELINES:  # as many rows as the GAN's, fitted on the same training rows
        frames[name] = baseline_rows(
            name,
            train_fraud,
            train_normal.iloc[: settings.max_normal_rows],
            len(synthetic),
            encoding,
            smote_k_neighbors=settings.smote_k_neighbors,
            seed=detection_seed,
        )
    generated = {name: encoding.model_matrix(rows) for name, rows in frames.items()}
    test_x = encoding.model_matrix(test_fraud)
    timings["baselines"] = time.perf_counter() - start

    start = time.perf_counter()
    for table, balanced in (("detection", False), ("detection_balanced", True)):
        found, tables[table] = detection_metrics(
            test_x,
            generated,
            repeats=settings.c2st_repeats,
            gbm_max_iter=settings.gbm_max_iter,
            seed=detection_seed,
            balanced=balanced,
        )
        metrics |= found
    timings["detection"] = time.perf_counter() - start

    start = time.perf_counter()
    privacy, tables["privacy"] = privacy_metrics(
        synthetic, train, test_fraud, copy_rtol=settings.copy_rtol, schema=schema
    )
    metrics |= privacy
    others = {name: rows for name, rows in frames.items() if name != "control"}
    for name, rows in others.items():
        suffix = f"_{name}" if name else ""
        metrics[f"near_copies{suffix}"] = near_copy_share_rows(
            rows, train_fraud, test_fraud, schema
        )
    if settings.sdmetrics:
        library, tables["privacy_sdmetrics"] = library_privacy(
            others, train_fraud, test_fraud, seed=detection_seed, schema=schema
        )
        metrics |= library
    timings["privacy"] = time.perf_counter() - start

    start = time.perf_counter()
    per_seed = utility_per_seed(
        train,
        test,
        draw,
        ratios=ratios,
        headline_ratio=float(settings.headline_ratio),
        repeat_seeds=repeat_seeds,
        max_normal_rows=settings.max_normal_rows,
        target_precision=settings.target_precision,
        smote_k_neighbors=settings.smote_k_neighbors,
        gbm_max_iter=settings.gbm_max_iter,
        schema=schema,
    )
    tables["utility"] = summarize(per_seed, float(settings.headline_ratio))
    tables["utility_per_seed"] = per_seed
    metrics |= utility_metrics(per_seed, float(settings.headline_ratio), settings.target_precision)
    timings["utility"] = time.perf_counter() - start

    metrics |= {
        "n_synthetic": float(len(synthetic)),
        "n_train_frauds": float(len(train_fraud)),
        "n_test_frauds": float(len(test_fraud)),
    }
    log.info(
        "evaluation took %.1f s wall, %.1f s CPU (%s)",
        sum(timings.values()),
        time.process_time() - cpu_start,
        ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()),
    )
    return EvaluationResult(
        metrics=in_section(EVAL, {k: float(v) for k, v in metrics.items()}),
        tables=tables,
        samples={
            "real_train_fraud": train_fraud,
            "real_test_fraud": test_fraud,
            "synthetic": synthetic,
        },
        schema=schema,
    )


__all__ = ["EvaluationResult", "FraudSampler", "run_evaluation"]
