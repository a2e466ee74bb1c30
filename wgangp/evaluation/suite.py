"""Run the whole evaluation: fidelity, detection, utility against SMOTE, privacy; write the report.

Every part follows the table's schema: the frames hold its feature columns under their own names
and dtypes (categories as their levels, gaps as NaN) and its label (its own values; the rare class
is the one synthesized); classifiers, distances and baselines see them through
:mod:`wgangp.evaluation.encoding`.

Privacy counts entities (:mod:`wgangp.data.entities`), not rows: with ``entity`` the real frames
carry that column (integer codes) beside the schema's; without it, rows identical in every column
of the schema are one entity.

``run_evaluation`` is deterministic: every random choice (synthetic draws, normal subsamples, folds,
SMOTE, model seeds) derives from ``seed`` through numpy's ``SeedSequence``, so the same inputs and
seed give the same metrics.
"""

from __future__ import annotations

import functools
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from wgangp.config import EvaluateConfig
from wgangp.data.entities import row_entities
from wgangp.data.schema.table_schema import RARE, TableSchema
from wgangp.errors import DataError
from wgangp.evaluation.baselines import BASELINES, baseline_rows
from wgangp.evaluation.detection import detection_metrics
from wgangp.evaluation.encoding import TableEncoding
from wgangp.evaluation.fidelity import fidelity_metrics, numeric_names
from wgangp.evaluation.frames import RareSampler, check_frame, checked_sampler
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
    #: The table the rows follow.
    schema: TableSchema = field(repr=False)
    #: "real_train_rare", "real_test_rare", "synthetic": kept for the figures of :meth:`write`.
    samples: dict[str, pd.DataFrame] = field(default_factory=dict, repr=False)

    def write(self, out_dir: Path) -> list[Path]:
        """Write figures (PNG), CSV tables, ``metrics.csv``, ``report.md`` and ``report.html``."""
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        written: list[Path] = []
        if self.samples:
            real = self.samples["real_test_rare"]
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
                    self.samples["real_train_rare"],
                    real,
                    synthetic,
                    out_dir / "projection.png",
                    schema,
                )
            )
        figures = [p.name for p in written]
        for name, table in self.tables.items():
            path = out_dir / f"{name}.csv"
            write_with(path, functools.partial(table.to_csv, index=False))
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
    sample_rare: RareSampler,
    settings: EvaluateConfig,
    schema: TableSchema,
    *,
    seed: int = 0,
    privacy_train: pd.DataFrame | None = None,
    entity: str | None = None,
) -> EvaluationResult:
    """Evaluate the sampler's rare-class rows against real rows of the table ``schema``; see the
    package modules for each metric. Privacy's distances reach every row of ``privacy_train``
    (default ``real_train``; a run passes every training rare-class row there, while its scores
    compare against a sample of them). ``entity``: the column of the real frames holding each
    row's entity as integer codes, one coding across the frames (``data.entity``); privacy counts
    those instead of rows identical in the schema's columns."""
    settings.check()
    with threadpool_limits(limits=settings.threads):
        return _evaluate(
            real_train, real_test, sample_rare, settings, seed, schema, privacy_train, entity
        )


def _owners(frame: pd.DataFrame, name: str, schema: TableSchema, entity: str | None) -> np.ndarray:
    """Each row's entity, read before :func:`check_frame` keeps the features only."""
    if entity is not None:
        if entity not in frame.columns:
            raise DataError(
                f"{name} lacks the entity column {entity!r}: pass it beside the table's columns"
            )
        if not pd.api.types.is_integer_dtype(frame[entity].dtype):
            raise DataError(
                f"{name}'s entity column {entity!r} holds {frame[entity].dtype}, not integer "
                "codes (wgangp.data.entities.entity_codes)"
            )
    return row_entities(frame, schema.names, entity)


def _evaluate(
    real_train: pd.DataFrame,
    real_test: pd.DataFrame,
    sample_rare: RareSampler,
    settings: EvaluateConfig,
    seed: int,
    schema: TableSchema,
    privacy_train: pd.DataFrame | None,
    entity: str | None,
) -> EvaluationResult:
    train, train_y = check_frame(real_train, "real_train", schema)
    train_owners = _owners(real_train, "real_train", schema, entity)
    test, test_y = check_frame(real_test, "real_test", schema)
    test_owners = _owners(real_test, "real_test", schema, entity)
    every_train, every_train_y, every_owners = train, train_y, train_owners
    if privacy_train is not None and privacy_train is not real_train:
        every_train, every_train_y = check_frame(privacy_train, "privacy_train", schema)
        every_owners = _owners(privacy_train, "privacy_train", schema, entity)
    train_rare = train[train_y == RARE].reset_index(drop=True)
    test_rare = test[test_y == RARE].reset_index(drop=True)
    n_test_rest = int((test_y != RARE).sum())
    if len(train_rare) < 2 or len(test_rare) < 2 or n_test_rest < 1:
        raise DataError(
            f"the evaluation needs >= 2 rare-class rows in real_train (has {len(train_rare)}), "
            f">= 2 in real_test (has {len(test_rare)}) and others in real_test (has "
            f"{n_test_rest}): use a larger or stratified split"
        )
    draw = checked_sampler(sample_rare, schema)
    sample_seed, detection_seed, *repeat_seeds = derived_seeds(seed, 2 + settings.seeds)
    ratios = [float(r) for r in settings.augment_ratios]
    timings: dict[str, float] = {}
    cpu_start = time.process_time()
    metrics: dict[str, float] = {}
    tables: dict[str, pd.DataFrame] = {}

    start = time.perf_counter()
    synthetic = draw(settings.n_synthetic, sample_seed)
    fidelity, tables["fidelity_per_feature"] = fidelity_metrics(
        test_rare, synthetic, train_rare, schema, with_sdmetrics=settings.sdmetrics
    )
    metrics |= fidelity
    timings["fidelity"] = time.perf_counter() - start

    start = time.perf_counter()
    encoding = TableEncoding(schema, train)
    train_rest = train[train_y != RARE].reset_index(drop=True)
    frames = {"": synthetic, "control": train_rare}
    for name in BASELINES:  # as many rows as the GAN's, fitted on the same training rows
        frames[name] = baseline_rows(
            name,
            train_rare,
            train_rest.iloc[: settings.max_normal_rows],
            len(synthetic),
            encoding,
            smote_k_neighbors=settings.smote_k_neighbors,
            seed=detection_seed,
        )
    generated = {name: encoding.model_matrix(rows) for name, rows in frames.items()}
    test_x = encoding.model_matrix(test_rare)
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
    test_rare_owners = test_owners[test_y == RARE]
    every_train_rare_owners = every_owners[every_train_y == RARE]
    privacy, tables["privacy"] = privacy_metrics(
        synthetic,
        every_train,
        test_rare,
        schema,
        copy_rtol=settings.copy_rtol,
        test_owners=test_rare_owners,
        train_rare_owners=every_train_rare_owners,
    )
    metrics |= privacy
    others = {name: rows for name, rows in frames.items() if name != "control"}
    every_train_rare = every_train[every_train_y == RARE].reset_index(drop=True)
    for name, rows in others.items():
        suffix = f"_{name}" if name else ""
        metrics[f"near_copies{suffix}"] = near_copy_share_rows(
            rows, every_train_rare, test_rare, schema, test_owners=test_rare_owners
        )
    if settings.sdmetrics:
        library, tables["privacy_sdmetrics"] = library_privacy(
            others,
            train_rare,
            test_rare,
            schema,
            seed=detection_seed,
            train_owners=train_owners[train_y == RARE],
            holdout_owners=test_rare_owners,
        )
        metrics |= library
    timings["privacy"] = time.perf_counter() - start

    start = time.perf_counter()
    per_seed = utility_per_seed(
        train,
        train_y,
        test,
        test_y,
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
        "n_train_rare": float(len(train_rare)),
        "n_test_rare": float(len(test_rare)),
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
        schema=schema,
        samples={
            "real_train_rare": train_rare,
            "real_test_rare": test_rare,
            "synthetic": synthetic,
        },
    )


__all__ = ["EvaluationResult", "RareSampler", "run_evaluation"]
