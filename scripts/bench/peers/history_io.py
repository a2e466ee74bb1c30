"""What the histories benchmark hands a history peer and takes back, in the peer's own environment
(pandas and the standard library only): a job file (JSON) naming the training table (Parquet),
each column's role and the histories to draw; the peer writes its histories (Parquet, the
training table's columns) and prints one JSON line (fit and sample seconds, its settings)."""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class HistoryJob:
    """One peer's task: fit ``train``, write ``n`` histories to ``out``."""

    train: str
    out: str
    entity: str
    time: str
    label: str
    n: int
    seed: int
    amount: str | None = None
    shared: list[str] = field(default_factory=list)
    #: Every column of levels (the label and the shared ids included).
    categorical: list[str] = field(default_factory=list)
    #: Columns constant within an entity (generated once per history by peers that can).
    attributes: list[str] = field(default_factory=list)
    #: The training budget, in minutes (each peer turns it into its own knob).
    budget_minutes: float = 5.0
    #: Peer-specific settings (epochs, ...), as the benchmark passes them.
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def columns(self) -> list[str]:
        rest = [self.amount] if self.amount else []
        others = [c for c in self.categorical if c not in (self.label, *self.attributes)]
        return [self.entity, self.time, *rest, *others, *self.attributes, self.label]


def read_job(path: str) -> HistoryJob:
    return HistoryJob(**json.loads(Path(path).read_text()))


def new_ids(n: int) -> list[str]:
    """Fresh pseudonymous entity ids: never a real one."""
    return [f"S{i:07d}" for i in range(n)]


def job_main(prog: str, run) -> int:
    """A peer's entry point: ``run(job, rows)`` returns ``(histories, settings)`` having fitted
    ``rows``; the histories are written and one JSON record printed (``failed`` with the error
    instead of a traceback, exit 1)."""
    import pandas as pd

    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument("--job", required=True, help="the job file (JSON)")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    job = read_job(args.job)
    start = time.perf_counter()
    try:
        rows = pd.read_parquet(job.train)
        # Parquet written by pandas 3 holds microseconds; libraries on pandas 2 read the
        # integers of datetime64[us] as nanoseconds (PAR drew dates in 1970): nanoseconds here.
        rows[job.time] = rows[job.time].astype("datetime64[ns]")
        histories, settings = run(job, rows)
        histories = histories.reindex(columns=job.columns)
        histories.to_parquet(job.out, index=False)
    except Exception as err:  # noqa: BLE001 - the benchmark needs a record, not a traceback
        record = {"status": "failed", "error": f"{type(err).__name__}: {err}"[:500]}
        print(json.dumps(record))
        return 1
    record = {
        "status": "ok",
        "seconds": round(time.perf_counter() - start, 2),
        "histories": int(histories[job.entity].nunique()),
        "rows": len(histories),
        **settings,
    }
    sys.stdout.write(json.dumps(record) + "\n")
    return 0
