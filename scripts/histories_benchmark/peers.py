"""The peers of the histories benchmark, each run in its own environment as the CTGAN peer is: the
training customers go over as Parquet with a job file naming each column's role
(``scripts/bench/peers/history_io.py``), the histories come back the same way."""

from __future__ import annotations

import json
import subprocess
from dataclasses import asdict
from pathlib import Path

import pandas as pd

from scripts.bench.peers import envs_dir
from scripts.bench.peers.history_io import HistoryJob
from scripts.histories_benchmark.tables import REPO, HistoryTable

#: Each peer's environment (``setup_envs.sh NAME``) and module.
PEERS = {
    "par": ("par", "scripts.bench.peers.par_histories"),
    "mostly": ("mostly", "scripts.bench.peers.mostly_histories"),
    "dgan": ("dgan", "scripts.bench.peers.dgan_histories"),
}


class Skipped(Exception):  # noqa: N818 - a system that cannot run here, and why
    """A system that does not run in this checkout or on this machine; its message says why."""


def peer_python(peer: str) -> Path | None:
    """The peer env's interpreter, None when ``setup_envs.sh`` has not made it."""
    env = envs_dir() / PEERS[peer][0]
    python = env / "bin" / "python"
    return python if (env / ".ready").is_file() and python.exists() else None


def peer_histories(
    peer: str,
    table: HistoryTable,
    train: pd.DataFrame,
    n: int,
    seed: int,
    workdir: Path,
    *,
    options: dict,
    budget_minutes: float,
    timeout: float,
) -> tuple[pd.DataFrame, dict]:
    """``n`` histories of ``peer`` fitted on ``train``; RuntimeError with its reason if it fails,
    :class:`~scripts.histories_benchmark.systems.Skipped` without its environment."""
    python = peer_python(peer)
    if python is None:
        raise Skipped(
            f"no {PEERS[peer][0]} env under {envs_dir()}: "
            f"bash scripts/histories_benchmark/setup_envs.sh {PEERS[peer][0]}"
        )
    cols = table.cols
    job = HistoryJob(
        train=str(workdir / "train.parquet"),
        out=str(workdir / f"{peer}.parquet"),
        entity=cols.entity,
        time=cols.time,
        label=cols.label,
        n=n,
        seed=seed,
        amount=cols.amount,
        shared=list(cols.shared),
        categorical=table.levels(),
        attributes=list(table.attributes),
        budget_minutes=budget_minutes,
        options=options,
    )
    levels = {name: train[name].astype(str) for name in table.levels()}
    train.assign(**levels).loc[:, job.columns].to_parquet(job.train, index=False)
    (workdir / "job.json").write_text(json.dumps(asdict(job)))
    command = [str(python), "-m", PEERS[peer][1], "--job", str(workdir / "job.json")]
    with open(workdir / "stderr.log", "w") as stderr:
        done = _run(peer, command, stderr, timeout)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    record = json.loads(lines[-1]) if lines else {"status": "failed", "error": "no record"}
    if done.returncode != 0 or record.get("status") != "ok":
        raise RuntimeError(f"{peer} exited {done.returncode}: {record.get('error', '')}")
    histories = pd.read_parquet(job.out)
    for name in (cols.entity, *cols.shared, *table.categorical, *table.attributes):
        histories[name] = histories[name].astype(object).where(histories[name].notna(), None)
    return histories, {k: v for k, v in record.items() if k != "status"}


def _run(peer: str, command: list[str], stderr, timeout: float) -> subprocess.CompletedProcess:
    """The peer's process; a timeout is one line that says how long it had."""
    try:
        return subprocess.run(
            command,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            timeout=timeout,
            cwd=str(REPO),
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{peer} did not finish within {timeout / 60:.0f} min") from None
