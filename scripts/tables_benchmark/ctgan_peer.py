"""CTGAN on a table's rare training rows, in its own environment (the speed benchmark's peer
env): the rows go over as coded numbers in a CSV and come back the same way."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from scripts.bench.peers import envs_dir
from scripts.bench.peers.rows import REPO
from scripts.tables_benchmark.codes import TableCodes

MODULE = "scripts.bench.peers.ctgan_table"


def ctgan_python() -> Path | None:
    """The ctgan env's interpreter, None when ``setup_envs.sh ctgan`` has not made it."""
    env = envs_dir() / "ctgan"
    python = env / "bin" / "python"
    return python if (env / ".ready").is_file() and python.exists() else None


def ctgan_rows(
    codes: TableCodes, rare: pd.DataFrame, n: int, *, epochs: int, seed: int, timeout: float
) -> pd.DataFrame:
    """``n`` rows of CTGAN fitted on ``rare``; RuntimeError with its last lines if it fails."""
    python = ctgan_python()
    if python is None:
        raise RuntimeError(
            f"no ctgan env under {envs_dir()}: bash scripts/bench/peers/setup_envs.sh ctgan"
        )
    with tempfile.TemporaryDirectory(prefix="tables-ctgan-") as folder:
        rows_csv, out_csv = Path(folder) / "rows.csv", Path(folder) / "out.csv"
        pd.DataFrame(codes.encode(rare), columns=codes.names).to_csv(rows_csv, index=False)
        command = [
            str(python), "-m", MODULE, "--rows", str(rows_csv),
            "--discrete", ",".join(codes.discrete), "--epochs", str(epochs),
            "--n", str(n), "--seed", str(seed), "--out", str(out_csv),
        ]  # fmt: skip
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, cwd=str(REPO)
        )
        if done.returncode != 0 or not out_csv.is_file():
            tail = " | ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
            raise RuntimeError(f"ctgan exited {done.returncode}: {tail}")
        json.loads(done.stdout.strip().splitlines()[-1])  # its record line: it finished
        sampled = pd.read_csv(out_csv).loc[:, codes.names]
        return codes.decode(sampled.to_numpy(np.float64))
