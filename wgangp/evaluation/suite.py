"""Run the whole evaluation: fidelity, detection, utility against SMOTE, privacy; write the report.

``run_evaluation`` is deterministic: every random choice (synthetic draws, normal subsamples, folds,
SMOTE, model seeds) derives from ``seed`` through numpy's ``SeedSequence``, so the same inputs and
seed give the same metrics.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from wgangp.config import EvaluateConfig
from wgangp.data.schema import COLUMNS, FEATURES, FRAUD, LABEL
from wgangp.errors import DataError
from wgangp.evaluation.baselines import BASELINES, baseline_frauds
from wgangp.evaluation.detection import detection_metrics
from wgangp.evaluation.fidelity import fidelity_metrics
from wgangp.evaluation.library_privacy import library_privacy
from wgangp.evaluation.plots import plot_correlations, plot_marginals, plot_projection
from wgangp.evaluation.privacy import near_copy_share, privacy_metrics
from wgangp.evaluation.render import render_html, render_markdown
from wgangp.evaluation.utility import summarize, utility_metrics, utility_per_seed
from wgangp.files import write_text, write_with
from wgangp.tracking.names import EVAL, in_section

log = logging.getLogger(__name__)

FraudSampler = Callable[[int, int], pd.DataFrame]


@dataclass
class EvaluationResult:
    """Metrics (stable names in the ``eval`` section: ``eval/ks_mean``), tables, and the rows
    behind the figures."""

    metrics: dict[str, float]
    tables: dict[str, pd.DataFrame]
    #: "real_train_fraud", "real_test_fraud", "synthetic": kept for the figures of :meth:`write`.
    samples: dict[str, pd.DataFrame] = field(default_factory=dict, repr=False)

    def write(self, out_dir: Path) -> list[Path]:
        """Write figures (PNG), CSV tables, ``metrics.csv``, ``report.md`` and ``report.html``."""
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        written: list[Path] = []
        if self.samples:
            real = self.samples["real_test_fraud"]
            synthetic = self.samples["synthetic"]
            written.append(plot_marginals(real, synthetic, out_dir / "marginals.png"))
            written.append(plot_correlations(real, synthetic, out_dir / "correlations.png"))
            written.append(
                plot_projection(
                    self.samples["real_train_fraud"], real, synthetic, out_dir / "projection.png"
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


def check_frame(frame: pd.DataFrame, name: str) -> pd.DataFrame:
    """The frame's schema columns as float (label int); one-line DataError when unusable."""
    if not isinstance(frame, pd.DataFrame):
        raise DataError(f"{name} must be a pandas DataFrame, got {type(frame).__name__}")
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise DataError(f"{name} lacks columns {missing[:5]}: pass frames with wgangp's 31 columns")
    try:
        values = frame.loc[:, list(FEATURES)].astype(np.float64)
        labels = frame[LABEL].astype(np.int64)
    except (TypeError, ValueError) as err:
        raise DataError(f"{name} has non-numeric values ({err}): pass numeric columns") from err
    if not np.isfinite(values.to_numpy()).all():
        raise DataError(f"{name} has NaN or infinite feature values: drop or fix those rows")
    return values.assign(**{LABEL: labels.to_numpy()}).reset_index(drop=True)


def checked_sampler(sample_fraud: FraudSampler) -> FraudSampler:
    """Wrap the sampler so a wrong shape, column or value fails with one clear line."""

    def draw(n: int, seed: int) -> pd.DataFrame:
        rows = sample_fraud(int(n), int(seed))
        if not isinstance(rows, pd.DataFrame) or len(rows) != n:
            got = len(rows) if isinstance(rows, pd.DataFrame) else type(rows).__name__
            raise DataError(f"the fraud sampler returned {got} instead of a DataFrame of {n} rows")
        missing = [c for c in FEATURES if c not in rows.columns]
        if missing:
            raise DataError(f"the fraud sampler's rows lack columns {missing[:5]}")
        if LABEL in rows.columns and not (rows[LABEL].astype(np.int64) == FRAUD).all():
            raise DataError("the fraud sampler returned rows with Class != 1; it must draw frauds")
        values = rows.loc[:, list(FEATURES)].astype(np.float64)
        if not np.isfinite(values.to_numpy()).all():
            raise DataError(
                "the fraud sampler returned NaN or infinite values: the generator diverged"
            )
        return values.assign(**{LABEL: FRAUD}).reset_index(drop=True)

    return draw


def derived_seeds(seed: int, count: int) -> list[int]:
    return [int(s) for s in np.random.SeedSequence(seed).generate_state(count)]


def run_evaluation(
    real_train: pd.DataFrame,
    real_test: pd.DataFrame,
    sample_fraud: FraudSampler,
    settings: EvaluateConfig,
    *,
    seed: int = 0,
) -> EvaluationResult:
    """Evaluate the sampler's frauds against real rows; see the package modules for each metric."""
    settings.check()
    with threadpool_limits(limits=settings.threads):
        return _evaluate(real_train, real_test, sample_fraud, settings, seed)


def _evaluate(
    real_train: pd.DataFrame,
    real_test: pd.DataFrame,
    sample_fraud: FraudSampler,
    settings: EvaluateConfig,
    seed: int,
) -> EvaluationResult:
    train = check_frame(real_train, "real_train")
    test = check_frame(real_test, "real_test")
    train_fraud = train[train[LABEL] == FRAUD].reset_index(drop=True)
    test_fraud = test[test[LABEL] == FRAUD].reset_index(drop=True)
    n_test_normal = int((test[LABEL] != FRAUD).sum())
    if len(train_fraud) < 2 or len(test_fraud) < 2 or n_test_normal < 1:
        raise DataError(
            f"the evaluation needs >= 2 frauds in real_train (has {len(train_fraud)}), >= 2 in "
            f"real_test (has {len(test_fraud)}) and normals in real_test (has {n_test_normal}): "
            "use a larger or stratified split"
        )
    draw = checked_sampler(sample_fraud)
    sample_seed, detection_seed, *repeat_seeds = derived_seeds(seed, 2 + settings.seeds)
    ratios = [float(r) for r in settings.augment_ratios]
    timings: dict[str, float] = {}
    cpu_start = time.process_time()
    metrics: dict[str, float] = {}
    tables: dict[str, pd.DataFrame] = {}

    start = time.perf_counter()
    synthetic = draw(settings.n_synthetic, sample_seed)
    fidelity, tables["fidelity_per_feature"] = fidelity_metrics(
        test_fraud, synthetic, train_fraud, with_sdmetrics=settings.sdmetrics
    )
    metrics |= fidelity
    timings["fidelity"] = time.perf_counter() - start

    start = time.perf_counter()
    features = list(FEATURES)
    train_x, test_x = (f.loc[:, features].to_numpy(np.float64) for f in (train_fraud, test_fraud))
    normals = train.loc[train[LABEL] != FRAUD, features].to_numpy(np.float64)
    generated = {"": synthetic.loc[:, features].to_numpy(np.float64), "control": train_x}
    for name in BASELINES:  # as many rows as the GAN's, fitted on the same training rows
        generated[name] = baseline_frauds(
            name,
            train_x,
            normals[: settings.max_normal_rows],
            len(synthetic),
            smote_k_neighbors=settings.smote_k_neighbors,
            seed=detection_seed,
        )
    timings["baselines"] = time.perf_counter() - start

    start = time.perf_counter()
    detection, tables["detection"] = detection_metrics(
        test_x,
        generated,
        repeats=settings.c2st_repeats,
        gbm_max_iter=settings.gbm_max_iter,
        seed=detection_seed,
    )
    metrics |= detection
    timings["detection"] = time.perf_counter() - start

    start = time.perf_counter()
    privacy, tables["privacy"] = privacy_metrics(
        synthetic, train, test_fraud, copy_rtol=settings.copy_rtol
    )
    metrics |= privacy
    for name, rows in generated.items():
        if name != "control":
            suffix = f"_{name}" if name else ""
            metrics[f"near_copies{suffix}"] = near_copy_share(rows, train_x, test_x)
    if settings.sdmetrics:
        others = {name: rows for name, rows in generated.items() if name != "control"}
        library, tables["privacy_sdmetrics"] = library_privacy(
            others, train_x, test_x, seed=detection_seed
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
    )


__all__ = ["EvaluationResult", "FraudSampler", "run_evaluation"]
