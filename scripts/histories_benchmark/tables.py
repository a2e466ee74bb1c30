"""The benchmark's transaction tables: who wrote them, their columns' roles, and where they are
written (a data folder outside git, ``--data`` or ``$WGANGP_HISTORIES_DATA``; never committed).

Two come from simulators no one here wrote, run in their own environment
(``scripts/bench/peers/history_tables.py``); one from ours (``simulator.py``). Each is written
once per size and seed of the simulator, then read by every run.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from scripts.bench.peers import envs_dir
from scripts.histories_benchmark.simulator import simulated_transactions
from wgangp.histories.behavior import HistoryColumns

DATA_VARIABLE = "WGANGP_HISTORIES_DATA"
REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class HistoryTable:
    """One table: its name, who writes it (``own`` in this process, else the external simulator
    named so), its columns' roles and the simulator's size."""

    name: str
    maker: str
    cols: HistoryColumns
    #: Every column of levels besides the shared ids (the label excluded).
    categorical: tuple[str, ...] = ()
    #: Columns constant within an entity.
    attributes: tuple[str, ...] = ()
    customers: int = 1000
    days: int = 14
    #: The simulator's own seed (the table), apart from the benchmark's seeds (the splits, fits).
    table_seed: int = 0

    @property
    def file(self) -> str:
        return f"{self.name}-c{self.customers}-d{self.days}-s{self.table_seed}.parquet"

    def levels(self) -> list[str]:
        """Every column of levels, as the peers take them (shared ids and the label included)."""
        return [*self.cols.shared, *self.categorical, *self.attributes, self.cols.label]

    def resized(self, customers: int, days: int) -> HistoryTable:
        from dataclasses import replace

        return replace(self, customers=customers, days=days)


TABLES = {
    table.name: table
    for table in (
        HistoryTable(
            "own",
            "own",
            HistoryColumns("customer_id", "ts", "is_fraud", 1, "amount", ("terminal_id",)),
            categorical=("channel",),
            attributes=("card_type",),
            customers=1000,
            days=14,
        ),
        HistoryTable(
            "synccfd",
            "synccfd",
            HistoryColumns("customer_id", "ts", "is_fraud", 1, "amount", ("terminal_id",)),
            categorical=("tx_type",),
            customers=800,
            days=14,
        ),
        HistoryTable(
            "aml",
            "aml",
            HistoryColumns("account_id", "timestamp", "is_fraud", 1, "amount", ("counterparty",)),
            customers=2000,
            days=14,
        ),
    )
}


def data_dir(option: str | None, out: Path) -> Path:
    """``--data``, else ``$WGANGP_HISTORIES_DATA``, else ``<out>/data``."""
    chosen = option or os.environ.get(DATA_VARIABLE) or str(out / "data")
    return Path(chosen).expanduser().resolve()


def fixtures_python() -> Path | None:
    """The external simulators' interpreter, None before ``setup_envs.sh fixtures``."""
    env = envs_dir() / "histfixtures"
    python = env / "bin" / "python"
    return python if (env / ".ready").is_file() and python.exists() else None


def ensure_table(table: HistoryTable, folder: Path) -> Path:
    """The table's file, written first if absent; RuntimeError when its simulator cannot run."""
    path = folder / table.file
    if path.is_file():
        return path
    folder.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial.parquet")
    if table.maker == "own":
        frame = simulated_transactions(
            table.customers, table.customers // 2, table.days, table.table_seed
        )
        frame.to_parquet(partial, index=False)
    else:
        python = fixtures_python()
        if python is None:
            raise RuntimeError(
                f"no histfixtures env under {envs_dir()}: "
                "bash scripts/histories_benchmark/setup_envs.sh fixtures"
            )
        command = [
            str(python),
            "-m",
            "scripts.bench.peers.history_tables",
            "--table",
            table.maker,
            "--customers",
            str(table.customers),
            "--days",
            str(table.days),
            "--seed",
            str(table.table_seed),
            "--out",
            str(partial),
        ]
        done = subprocess.run(command, capture_output=True, text=True, cwd=str(REPO), check=False)
        if done.returncode != 0:
            tail = " | ".join(done.stderr.strip().splitlines()[-3:])
            raise RuntimeError(f"{table.maker} exited {done.returncode}: {tail}")
        json.loads(done.stdout.strip().splitlines()[-1])
    partial.rename(path)
    return path


def read_table(table: HistoryTable, path: Path) -> pd.DataFrame:
    """The rows with their columns' types: time as datetimes, levels as text, the label 0/1."""
    frame = pd.read_parquet(path)
    cols = table.cols
    frame[cols.time] = pd.to_datetime(frame[cols.time]).astype("datetime64[ns]")
    for name in (cols.entity, *cols.shared, *table.categorical, *table.attributes):
        frame[name] = frame[name].astype(str)
    frame[cols.label] = (frame[cols.label].astype(str) == str(cols.positive)).astype(int)
    return frame


def chosen_tables(names: str) -> list[HistoryTable]:
    found = []
    for name in (part.strip() for part in names.split(",") if part.strip()):
        if name not in TABLES:
            raise ValueError(f"unknown table {name!r}: choose from {', '.join(TABLES)}")
        found.append(TABLES[name])
    if not found:
        raise ValueError(f"no table given: choose from {', '.join(TABLES)}")
    return found
