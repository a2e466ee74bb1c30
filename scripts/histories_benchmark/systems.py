"""The systems that draw histories from the training customers, each returning ``n`` histories in
the table's own columns:

- ``wgangp``: wgangp's history model through its public API, ``wgangp.fit(frame, label=...,
  entity=..., time=...)`` then ``sample_histories(n, seed=...)``; skipped, saying so, where this
  checkout has no such API;
- ``rows``: wgangp's row model (``wgangp.fit`` on the rows, the entity keeping a customer's rows
  in one split), its rows dealt to ``n`` new customers at random and sorted by time within each:
  what a row-independent generator gives a team;
- ``par``, ``mostly``, ``dgan``: the peers, each in its own environment (``peers.py``);
- ``real``: ``n`` real training customers, the reference every generator aims at.
"""

from __future__ import annotations

import inspect
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from scripts.histories_benchmark.peers import Skipped, peer_histories
from scripts.histories_benchmark.split import HistorySplit, entity_subset
from scripts.histories_benchmark.tables import HistoryTable
from wgangp.histories.behavior import entity_sample

SYSTEMS = ("wgangp", "rows", "par", "mostly", "dgan", "real")


@dataclass(frozen=True)
class Budget:
    """How much each system trains (``--smoke`` shrinks it all)."""

    wgangp_steps: int = 2000
    rows_steps: int = 500
    par_epochs: int = 16
    mostly_epochs: int = 20
    mostly_minutes: float = 20.0
    dgan_epochs: int = 20
    dgan_max_length: int = 64
    peer_timeout_s: float = 2400.0
    #: Training customers each peer fits (0: all of them), a stratified subset of them; the peer
    #: still draws as many histories as the training customers.
    peer_customers: int = 0
    #: Extra overrides of wgangp's history model (``--set``).
    wgangp_overrides: tuple[str, ...] = ()


def _run_overrides(workdir: Path, steps: int, smoke: bool) -> list[str]:
    chosen = [
        f"trainer.steps={steps}",
        "trainer.progress=false",
        f"tracking.uri=sqlite:///{workdir / 'mlflow.db'}",
        "tracking.experiment=histories-benchmark",
        f"trainer.checkpoint_dir={workdir / 'checkpoints'}",
        "evaluate=off",
    ]
    if smoke:
        chosen += ["select.every=10", "select.repeats=2"]
    return chosen


def wgangp_histories(
    table: HistoryTable,
    split: HistorySplit,
    n: int,
    seed: int,
    budget: Budget,
    workdir: Path,
    smoke: bool,
) -> tuple[pd.DataFrame, dict]:
    import wgangp

    if "time" not in inspect.signature(wgangp.fit).parameters:
        raise Skipped(
            "wgangp's history model is not in this checkout (wgangp.fit takes no time=): merge "
            "the histories branch to measure it"
        )
    cols = table.cols
    start = time.perf_counter()
    overrides = [
        *_run_overrides(workdir, budget.wgangp_steps, smoke),
        f"seed={seed}",
        *budget.wgangp_overrides,
    ]
    model = wgangp.fit(
        split.train,
        label=cols.label,
        positive=cols.positive,
        entity=cols.entity,
        time=cols.time,
        overrides=overrides,
        output_dir=workdir / "run",
    )
    fit_s = time.perf_counter() - start
    if not hasattr(model, "sample_histories"):
        raise Skipped(
            f"wgangp.fit(..., time=...) returned a {type(model).__name__}, which has no "
            "sample_histories"
        )
    start = time.perf_counter()
    histories = model.sample_histories(n, seed=seed)
    return histories, {
        "fit_s": fit_s,
        "sample_s": time.perf_counter() - start,
        "steps": budget.wgangp_steps,
    }


def row_histories(
    table: HistoryTable,
    split: HistorySplit,
    n: int,
    seed: int,
    budget: Budget,
    workdir: Path,
    smoke: bool,
) -> tuple[pd.DataFrame, dict]:
    """The row model's rows, as many per history as the training customers have on average and
    fraud rows at their training share, dealt to ``n`` new customers at random."""
    import wgangp

    cols = table.cols
    train = split.train
    rows = int(round(n * len(train) / train[cols.entity].nunique()))
    fraud = int(round(rows * train[cols.label].mean()))
    start = time.perf_counter()
    overrides = [
        *_run_overrides(workdir, budget.rows_steps, smoke),
        f"seed={seed}",
        f"data.entity={cols.entity}",
        f"data.schema={_kept_schema(table, train, workdir)}",
    ]
    model = wgangp.fit(
        train,
        label=cols.label,
        positive=cols.positive,
        overrides=overrides,
        output_dir=workdir / "run",
    )
    fit_s = time.perf_counter() - start
    start = time.perf_counter()
    drawn = pd.concat(
        [
            model.sample(fraud, label=cols.positive, seed=seed),
            model.sample(rows - fraud, label=0, seed=seed + 1),
        ],
        ignore_index=True,
    )
    rng = np.random.default_rng([seed, 7])
    drawn[cols.entity] = np.array([f"S{i:07d}" for i in range(n)])[rng.integers(0, n, len(drawn))]
    drawn = drawn.sort_values([cols.entity, cols.time], kind="stable").reset_index(drop=True)
    return drawn, {
        "fit_s": fit_s,
        "sample_s": time.perf_counter() - start,
        "steps": budget.rows_steps,
    }


def _kept_schema(table: HistoryTable, train: pd.DataFrame, workdir: Path) -> Path:
    """The training rows' inferred schema, written as ``python -m wgangp.schema`` writes it and
    used unedited: what its review line offers for a shared id of over 1,000 levels ("keep it in
    an edited schema"), so the row model keeps the terminal (its levels held by fewer than 5
    rows become ``other``) rather than dropping it."""
    rows = workdir / "train.parquet"
    train.to_parquet(rows, index=False)
    cols = table.cols
    command = [
        sys.executable,
        "-m",
        "wgangp.schema",
        f"data.path={rows}",
        f"data.label={cols.label}",
        f"data.positive={cols.positive}",
        f"data.entity={cols.entity}",
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"wgangp.schema exited {done.returncode}: {done.stderr.strip()[-300:]}")
    schema = workdir / "schema.yaml"
    schema.write_text(done.stdout)
    return schema


def real_histories(
    table: HistoryTable,
    split: HistorySplit,
    n: int,
    seed: int,
    budget: Budget,
    workdir: Path,
    smoke: bool,
) -> tuple[pd.DataFrame, dict]:
    return entity_sample(split.train, table.cols.entity, n, seed), {}


def draw(
    system: str,
    table: HistoryTable,
    split: HistorySplit,
    n: int,
    seed: int,
    budget: Budget,
    workdir: Path,
    smoke: bool,
) -> tuple[pd.DataFrame, dict]:
    """``n`` histories of ``system`` fitted on ``split.train``, and its settings and timings."""
    workdir.mkdir(parents=True, exist_ok=True)
    if system == "wgangp":
        return wgangp_histories(table, split, n, seed, budget, workdir, smoke)
    if system == "rows":
        return row_histories(table, split, n, seed, budget, workdir, smoke)
    if system == "real":
        return real_histories(table, split, n, seed, budget, workdir, smoke)
    options = {
        "par": {"epochs": budget.par_epochs},
        "mostly": {
            "max_epochs": budget.mostly_epochs,
            "max_training_minutes": budget.mostly_minutes,
        },
        "dgan": {"epochs": budget.dgan_epochs, "max_length": budget.dgan_max_length},
    }[system]
    fitted = entity_subset(split.train, table.cols, budget.peer_customers, seed)
    histories, info = peer_histories(
        system,
        table,
        fitted,
        n,
        seed,
        workdir,
        options=options,
        budget_minutes=budget.mostly_minutes,
        timeout=budget.peer_timeout_s,
    )
    return histories, {**info, "customers_fitted": int(fitted[table.cols.entity].nunique())}
