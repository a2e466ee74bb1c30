"""One table, one seed: train the default, draw every generator's rows, score them alike."""

from __future__ import annotations

import logging
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from scripts.tables_benchmark import baselines, scores
from scripts.tables_benchmark.codes import TableCodes
from scripts.tables_benchmark.ctgan_peer import ctgan_rows
from scripts.tables_benchmark.default_model import (
    TrainedModel,
    compose,
    overrides,
    train_default,
)
from scripts.tables_benchmark.split import TableSplit, carve_holdout, table_split
from scripts.tables_benchmark.tables import TableSpec
from wgangp.errors import WgangpError
from wgangp.evaluation.encoding import TableEncoding
from wgangp.training.interrupts import Interrupted

log = logging.getLogger("tables_benchmark")

#: Every generator, in the order of the printed table; "control" is real training rare rows.
METHODS = ("default", "smote", "copula", "marginals", "ctgan", "control")


@dataclass(frozen=True)
class Settings:
    """How much each run does (``--smoke`` shrinks all of it)."""

    steps: int | None = None
    smoke: bool = False
    ctgan_epochs: int = 300
    repeats: int = 10
    gbm_max_iter: int = 200
    methods: tuple[str, ...] = METHODS
    ctgan_timeout: float = 1800.0
    #: Overrides of the default model's config (``ship.copula_share=0``): a variant to compare.
    variant: tuple[str, ...] = ()
    #: What ships, varied on the default's trained generator (``ship.*`` overrides each): every
    #: variant is judged as a method of its own, ``default[ship.copula_share=0]``.
    ship_variants: tuple[tuple[str, ...], ...] = ()
    #: The split the rows are judged on: ``test`` reports, ``val`` is where the run chose its
    #: step, ``holdout`` a fourth split carved from the file before the run (where post-
    #: processing variants are chosen: rows the step selection never saw).
    judged_on: str = "test"


@dataclass
class Outcome:
    """One generator's figures on one table and seed (``note``: why it has none)."""

    table: str
    seed: int
    method: str
    real_rows: int
    figures: dict[str, float] = field(default_factory=dict)
    note: str = ""
    #: The whole seed on this table: split, every method, every score.
    seed_total_s: float = float("nan")

    def row(self) -> dict[str, object]:
        return {
            "table": self.table, "seed": self.seed, "method": self.method,
            "real_rows": self.real_rows, **self.figures, "note": self.note,
            "seed_total_s": self.seed_total_s,
        }  # fmt: skip


def run_seed(
    spec: TableSpec, path: Path, seed: int, out: Path, settings: Settings, launch_dir: Path
) -> list[Outcome]:
    """Every chosen method's figures for ``spec`` trained and split with ``seed``."""
    start = time.perf_counter()
    holdout = None
    if settings.judged_on == "holdout":
        path, holdout = carve_holdout(spec, path, seed, out)
    chosen = overrides(spec, path, seed, out, settings.steps, settings.smoke)
    cfg = compose([*chosen, *settings.variant])
    split = table_split(cfg, launch_dir, holdout)
    rare, test = split.rare("train"), split.rare(settings.judged_on)
    # Judged on a fourth split, the rows are scored on the run's test split too: the split that
    # confirms a choice made on the holdout.
    confirm = split.rare("test") if settings.judged_on == "holdout" else None
    n = len(test) if confirm is None else max(len(test), len(confirm))
    codes = TableCodes.fit(split.schema, split.train)
    log.info("%s seed %d: %d train rare rows, %d %s rare rows", spec.name, seed, len(rare), n,
             settings.judged_on)  # fmt: skip
    trained: dict[str, TrainedModel] = {}
    draws: dict[str, Callable[[], tuple[pd.DataFrame, dict[str, float]]]] = {
        "default": lambda: _default(spec, split, cfg, seed, n, out, launch_dir, trained),
        "smote": lambda: _timed(
            lambda: baselines.smote_rows(codes, rare, split.common("train"), n, seed)
        ),
        "copula": lambda: _timed(lambda: baselines.copula_rows(codes, rare, n, seed)),
        "marginals": lambda: _timed(lambda: baselines.marginal_rows(rare, n, seed)),
        "ctgan": lambda: _timed(
            lambda: ctgan_rows(
                codes,
                rare,
                n,
                epochs=settings.ctgan_epochs,
                seed=seed,
                timeout=settings.ctgan_timeout,
            )  # fmt: skip
        ),
        "control": lambda: _timed(lambda: rare.sample(n, random_state=seed)),
    }
    methods = [m for m in METHODS if m in settings.methods]
    after = methods.index("default") + 1 if "default" in methods else 0
    for i, ship in enumerate(settings.ship_variants):
        name = variant_name(ship)
        draws[name] = lambda ship=ship: _timed(
            lambda: _shipped_as(trained, split, [*chosen, *settings.variant, *ship], n, seed)
        )
        methods.insert(after + i, name)
    encoding = TableEncoding(split.schema, split.train)
    real = encoding.model_matrix(test)
    confirming = None if confirm is None else encoding.model_matrix(confirm)
    train_all = encoding.distance_matrix(split.train)
    outcomes = []
    for method in methods:
        outcome = Outcome(spec.name, seed, method, n)
        try:
            rows, figures = draws[method]()
        except Interrupted:
            raise  # SIGTERM or Ctrl-C stops the benchmark, not just this method
        except Exception as err:  # noqa: BLE001 - one method's failure is its row's note
            expected = isinstance(err, RuntimeError | WgangpError)  # else a bug: its traceback
            kind = "" if expected else f"{type(err).__name__}: "
            outcome.note = (kind + " ".join(str(err).split()))[:200]
            log.warning("%s seed %d: %s not scored: %s", spec.name, seed, method, outcome.note)
            if not expected:
                log.warning("%s", traceback.format_exc())
            outcomes.append(outcome)
            continue
        rows = rows.reset_index(drop=True)
        generated = encoding.model_matrix(rows)
        with threadpool_limits(limits=1):
            figures["detection"] = scores.detection(
                real, generated[: len(test)], repeats=settings.repeats,
                gbm_max_iter=settings.gbm_max_iter, seed=seed,
            )  # fmt: skip
            if confirming is not None:
                figures["detection_test"] = scores.detection(
                    confirming, generated[: len(confirm)], repeats=settings.repeats,
                    gbm_max_iter=settings.gbm_max_iter, seed=seed,
                )  # fmt: skip
            # The control's near copies: real rows nobody trained on, scored as a generator's
            # (the bound); each against the other held-out split's threshold.
            near, near_confirm = (rows, rows)
            if method == "control":
                near = split.rare("test" if settings.judged_on != "test" else "val")
                near_confirm = test
            figures["near_copies"] = scores.near_copies(split.schema, near, rare, test)
            if confirm is not None:
                figures["near_copies_test"] = scores.near_copies(
                    split.schema, near_confirm, rare, confirm
                )
            if method != "control":
                copies = scores.exact_copies(encoding.distance_matrix(rows), train_all)
                figures["exact_copies"] = float(copies)
        figures |= scores.form(split.schema, rows, rare)
        outcome.figures = figures
        outcomes.append(outcome)
        log.info("%s seed %d: %s %s", spec.name, seed, method, _brief(figures))
    total = time.perf_counter() - start
    log.info("%s seed %d took %.0f s", spec.name, seed, total)
    for outcome in outcomes:
        outcome.seed_total_s = total
    return outcomes


def variant_name(ship: tuple[str, ...]) -> str:
    """``default[ship.copula_share=0]``: a variant of what ships, as a method's name."""
    return f"default[{','.join(ship)}]"


def _default(
    spec: TableSpec,
    split: TableSplit,
    cfg,
    seed: int,
    n: int,
    out: Path,
    launch_dir: Path,
    trained: dict[str, TrainedModel],
) -> tuple[pd.DataFrame, dict[str, float]]:
    model = train_default(cfg, out / "runs" / f"{spec.name}-seed{seed}", launch_dir)
    trained["default"] = model
    rows = model.sample(n, seed, split.features)
    run_figures = {
        f"run_{key.split('/', 1)[1]}": value
        for key, value in model.metrics.items()
        if key in RUN_METRICS
    }
    return rows, {"wall_s": model.wall_s, **run_figures}


def _shipped_as(
    trained: dict[str, TrainedModel], split: TableSplit, chosen: list[str], n: int, seed: int
) -> pd.DataFrame:
    """Rows of the default's trained generator assembled with another ``ship.*``: what the run
    would have shipped with those settings (its selected step, its transform)."""
    from wgangp.config import to_config
    from wgangp.data.entities import row_entities
    from wgangp.data.schema.table_schema import RARE
    from wgangp.serving.synthesizer import Synthesizer
    from wgangp.synthesis.assemble import assemble

    if "default" not in trained:
        raise RuntimeError("the default model did not train: no variant of what it ships")
    cfg = to_config(compose(chosen))
    shipped = Synthesizer.load(trained["default"].synthesizer_dir)
    variant = assemble(
        shipped.generator,
        shipped.transformer,
        shipped.latent_dim,
        shipped.schema,
        split.train,
        cfg.ship,
        cfg.seed,
        entities=row_entities(split.train, shipped.schema.names),
    )
    return variant.sample_class(n, RARE, seed=seed).loc[:, split.features]


#: The run's own end-of-run figures kept beside the benchmark's (results.csv only).
RUN_METRICS = (
    "eval/c2st_auc_gbm",
    "eval/c2st_auc_gbm_control",
    "eval/near_copies",
    "eval/exact_copies",
    "selection/score",
)


def _timed(
    draw: Callable[[], pd.DataFrame],
) -> tuple[pd.DataFrame, dict[str, float]]:
    start = time.perf_counter()
    rows = draw()
    return rows, {"wall_s": time.perf_counter() - start}


def _brief(figures: dict[str, float]) -> str:
    keys = ("detection", "near_copies", "exact_copies", "wall_s")
    return " ".join(
        f"{k}={figures[k]:.3f}" for k in keys if k in figures and np.isfinite(figures[k])
    )
