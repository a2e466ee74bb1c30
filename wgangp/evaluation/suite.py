"""Run the whole evaluation: fidelity, detection, utility against SMOTE, disclosure (how close
samples come to real rows); write the report.

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
from wgangp.evaluation.detection import detection_pieces, detection_results
from wgangp.evaluation.disclosure import disclosure_metrics, near_copy_share_rows
from wgangp.evaluation.encoding import TableEncoding
from wgangp.evaluation.fidelity import fidelity_metrics, numeric_names, sdmetrics_quality
from wgangp.evaluation.frames import RareSampler, check_frame, checked_sampler
from wgangp.evaluation.library_disclosure import (
    library_disclosure_pieces,
    library_disclosure_results,
)
from wgangp.evaluation.pieces import Piece, Workers, family_seconds
from wgangp.evaluation.plots import plot_correlations, plot_marginals, plot_projection
from wgangp.evaluation.render import render_html, render_markdown
from wgangp.evaluation.utility import (
    UtilitySettings,
    summarize,
    synthetic_rows_needed,
    utility_metrics,
    utility_pieces,
    utility_rows,
)
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
    #: Seconds: ``wall``, ``cpu`` (this process's and the workers'), ``cpu_<part>`` per part.
    seconds: dict[str, float] = field(default_factory=dict, repr=False)

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
    disclosure_train: pd.DataFrame | None = None,
    entity: str | None = None,
) -> EvaluationResult:
    """Evaluate the sampler's rare-class rows against real rows of the table ``schema``; see the
    package modules for each metric. Privacy's distances reach every row of ``disclosure_train``
    (default ``real_train``; a run passes every training rare-class row there, while its scores
    compare against a sample of them). ``entity``: the column of the real frames holding each
    row's entity as integer codes, one coding across the frames (``data.entity``); disclosure counts
    those instead of rows identical in the schema's columns."""
    settings.check()
    with (
        threadpool_limits(limits=settings.threads),
        Workers(settings.workers, settings.threads) as workers,
    ):
        return _evaluate(
            real_train, real_test, sample_rare, settings, seed, schema, disclosure_train, entity,
            workers,
        )  # fmt: skip


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
    disclosure_train: pd.DataFrame | None,
    entity: str | None,
    workers: Workers,
) -> EvaluationResult:
    train, train_y = check_frame(real_train, "real_train", schema)
    train_owners = _owners(real_train, "real_train", schema, entity)
    test, test_y = check_frame(real_test, "real_test", schema)
    test_owners = _owners(real_test, "real_test", schema, entity)
    every_train, every_train_y, every_owners = train, train_y, train_owners
    if disclosure_train is not None and disclosure_train is not real_train:
        every_train, every_train_y = check_frame(disclosure_train, "disclosure_train", schema)
        every_owners = _owners(disclosure_train, "disclosure_train", schema, entity)
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
    wall, cpu = time.perf_counter(), time.process_time()

    # Here, where the generator lives: every draw, the baselines' rows, the encodings.
    synthetic = draw(settings.n_synthetic, sample_seed)
    workers.start()  # once the first draw is checked; their imports overlap what follows
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
    utility_data = utility_rows(train, train_y, test, test_y, schema)
    utility_settings = UtilitySettings(
        ratios=[float(r) for r in settings.augment_ratios],
        headline_ratio=float(settings.headline_ratio),
        max_normal_rows=settings.max_normal_rows,
        target_precision=settings.target_precision,
        smote_k_neighbors=settings.smote_k_neighbors,
        gbm_max_iter=settings.gbm_max_iter,
    )
    n_needed = synthetic_rows_needed(utility_settings.ratios, len(utility_data.real_rare))
    draws = [draw(n_needed, repeat_seed) for repeat_seed in repeat_seeds]
    prepared = (time.perf_counter() - wall, time.process_time() - cpu)

    # Then every piece, on the workers.
    test_rare_owners = test_owners[test_y == RARE]
    every_train_rare = every_train[every_train_y == RARE].reset_index(drop=True)
    others = {name: rows for name, rows in frames.items() if name != "control"}
    repeats, gbm_max_iter = settings.c2st_repeats, settings.gbm_max_iter
    parts: dict[str, list[Piece]] = {
        "fidelity": [
            Piece("fidelity", fidelity_metrics, (test_rare, synthetic, train_rare, schema),
                  {"with_sdmetrics": False}),
        ],
        "quality_report": [
            Piece("fidelity", sdmetrics_quality, (test_rare, synthetic, schema), cost=50.0)
        ] if settings.sdmetrics else [],
        "detection": detection_pieces(
            test_x, generated, seed=detection_seed, repeats=repeats, gbm_max_iter=gbm_max_iter
        ),
        "detection_balanced": detection_pieces(
            test_x, generated, seed=detection_seed, balanced=True, repeats=repeats,
            gbm_max_iter=gbm_max_iter,
        ),
        "disclosure": [
            Piece("disclosure", disclosure_metrics, (synthetic, every_train, test_rare, schema),
                  {"copy_rtol": settings.copy_rtol, "test_owners": test_rare_owners,
                   "train_rare_owners": every_owners[every_train_y == RARE]}, cost=200.0),
        ],
        "near_copies": [
            Piece("disclosure", near_copy_share_rows, (rows, every_train_rare, test_rare, schema),
                  {"test_owners": test_rare_owners})
            for rows in others.values()
        ],
        "disclosure_sdmetrics": library_disclosure_pieces(
            others, train_rare, test_rare, schema, seed=detection_seed,
            repeats=settings.dcr_repeats, train_owners=train_owners[train_y == RARE],
            holdout_owners=test_rare_owners,
        ) if settings.sdmetrics else [],
        "utility": utility_pieces(utility_data, utility_settings, repeat_seeds, draws),
    }  # fmt: skip
    pieces = [piece for part in parts.values() for piece in part]
    done = workers.run(pieces)
    results: dict[str, list] = {}
    at = 0
    for part, its in parts.items():
        results[part] = [d.value for d in done[at : at + len(its)]]
        at += len(its)

    metrics: dict[str, float] = {}
    tables: dict[str, pd.DataFrame] = {}
    fidelity, tables["fidelity_per_feature"] = results["fidelity"][0]
    metrics |= fidelity
    if settings.sdmetrics:
        metrics |= results["quality_report"][0]
    for part, balanced in (("detection", False), ("detection_balanced", True)):
        found, tables[part] = detection_results(
            len(test_x), generated, results[part], balanced=balanced
        )
        metrics |= found
    disclosure, tables["disclosure"] = results["disclosure"][0]
    metrics |= disclosure
    for name, share in zip(others, results["near_copies"], strict=True):
        metrics[f"near_copies{'_' + name if name else ''}"] = share
    if settings.sdmetrics:
        library, tables["disclosure_sdmetrics"] = library_disclosure_results(
            list(others), results["disclosure_sdmetrics"]
        )
        metrics |= library
    per_seed = pd.DataFrame([row for rows in results["utility"] for row in rows])
    tables["utility"] = summarize(per_seed, utility_settings.headline_ratio)
    tables["utility_per_seed"] = per_seed
    metrics |= utility_metrics(per_seed, utility_settings.headline_ratio, settings.target_precision)
    metrics |= {
        "n_synthetic": float(len(synthetic)),
        "n_train_rare": float(len(train_rare)),
        "n_test_rare": float(len(test_rare)),
    }
    by_part = {name: cpu_s for name, (_, cpu_s) in family_seconds(pieces, done).items()}
    seconds = {
        "wall": time.perf_counter() - wall,
        # In-process pieces are already in this process's CPU time.
        "cpu": time.process_time() - cpu + (sum(by_part.values()) if workers.separate else 0.0),
        **{f"cpu_{name}": value for name, value in by_part.items()},
    }
    log.info(
        "evaluation took %.1f s wall, %.1f s CPU on %d worker(s) (%.1f s drawing and preparing "
        "rows here; by part: %s)",
        seconds["wall"],
        seconds["cpu"],
        workers.count,
        prepared[1],
        ", ".join(f"{name} {value:.1f} s" for name, value in by_part.items()),
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
        seconds=seconds,
    )


__all__ = ["EvaluationResult", "RareSampler", "run_evaluation"]
