"""A history table of 10 million rows and 100,000 customers, trained in bounded memory: prints the
time and peak memory of each phase of ``python -m wgangp.train ... data.time=ts``.

The table (a folder of Parquet files, written customer block by customer block, so writing it is
bounded too) has about ``--rows`` rows of ``--customers`` customers over 90 days: a card type
(an attribute), an amount, a channel, a terminal id many customers share, and a share of
customers with a burst of 3 to 5 fraud rows within an hour. The run keeps every fraud-touched
customer and ``data.max_entities`` others, whole (``data/read/entity_sample.py``), cuts windows,
trains ``--steps`` steps and exports; the figures are the run's own ``phases.json`` (wall and CPU
seconds, peak resident memory when each phase ended) and the read's counts.

    .venv/bin/python -m scripts.histories_scale --rows 10000000 --customers 100000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

START = np.datetime64("2024-01-01T00:00:00")
BLOCK = 5000  # customers per file


def write_table(folder: Path, rows: int, customers: int, seed: int) -> tuple[int, int]:
    """The table's files in ``folder``; (rows, fraud rows) written."""
    rng = np.random.default_rng(seed)
    per_customer = rows / customers
    written = frauds = 0
    for block, first in enumerate(range(0, customers, BLOCK)):
        ids = np.arange(first, min(first + BLOCK, customers))
        counts = np.maximum(1, rng.poisson(per_customer, len(ids)))
        owner = np.repeat(ids, counts)
        n = len(owner)
        day = rng.integers(0, 90, n)
        hour = np.clip(rng.normal(14.0, 4.0, n), 0, 23.99)
        seconds = day * 86400 + (hour * 3600).astype(np.int64)
        fraud = np.zeros(n, dtype=np.int8)
        victims = ids[rng.random(len(ids)) < 0.02]
        extra = []
        for victim in victims:
            k = rng.integers(3, 6)
            start = rng.integers(0, 90 * 86400)
            extra.append((np.full(k, victim), start + np.cumsum(rng.integers(30, 900, k))))
        if extra:
            owner = np.concatenate([owner, *[e[0] for e in extra]])
            seconds = np.concatenate([seconds, *[e[1] for e in extra]])
            fraud = np.concatenate([fraud, np.ones(len(owner) - n, np.int8)])
        card = np.where(owner % 3 == 0, "credit", "debit")
        frame = pd.DataFrame(
            {
                "customer_id": owner,
                "ts": START + seconds.astype("timedelta64[s]"),
                "amount": np.round(rng.lognormal(3.2 + 1.5 * fraud, 0.8), 2),
                "channel": rng.choice(["pos", "online", "atm"], len(owner), p=[0.6, 0.3, 0.1]),
                "card_type": card,
                "terminal_id": rng.integers(0, 20000, len(owner)),
                "is_fraud": fraud,
            }
        )
        frame.to_parquet(folder / f"part-{block:04d}.parquet", index=False)
        written += len(frame)
        frauds += int(fraud.sum())
    return written, frauds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--customers", type=int, default=100_000)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--max-entities", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "tx"
        folder.mkdir()
        started = time.perf_counter()
        rows, frauds = write_table(folder, args.rows, args.customers, args.seed)
        written_s = time.perf_counter() - started
        output = Path(tmp) / "run"
        command = [
            sys.executable, "-m", "wgangp.train", f"data.path={folder}", "data.label=is_fraud",
            "data.entity=customer_id", "data.time=ts", f"data.max_entities={args.max_entities}",
            f"trainer.steps={args.steps}", "trainer.progress=false", "select.every=0",
            "evaluate.enabled=false", f"hydra.run.dir={output}",
            f"tracking.uri=sqlite:///{tmp}/mlflow.db", f"trainer.checkpoint_dir={tmp}/ckpt",
        ]  # fmt: skip
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        run_s = time.perf_counter() - started
        if done.returncode != 0:
            sys.exit(f"the run failed ({done.returncode}): {done.stderr.strip()[-800:]}")
        phases = json.loads((output / "phases.json").read_text())
        log = (output / "train.log").read_text() if (output / "train.log").exists() else done.stderr
        read = [
            line.split(" - ", 1)[-1] for line in log.splitlines() if "kept every entity" in line
        ]
        windows = [
            line.split(" - ", 1)[-1] for line in log.splitlines() if "training windows" in line
        ]
    table = {"rows": rows, "fraud_rows": frauds, "customers": args.customers}
    print(json.dumps({**table, "table_written_s": round(written_s, 1), "run_s": round(run_s, 1)}))
    for line in read + windows:
        print(line)
    for name, figures in phases.items():
        print(f"{name:9s} wall {figures['wall_s']:8.1f} s  CPU {figures['cpu_s']:8.1f} s  "
              f"peak RSS {figures['peak_rss_mb']:7.0f} MiB")  # fmt: skip


if __name__ == "__main__":
    main()
