"""One table, one seed: split the customers, let every chosen system draw histories from the
training customers, score each alike, and append one JSON line per system (and one for the
seed's real-data references, system ``control``) to ``results.jsonl``."""

from __future__ import annotations

import json
import logging
import math
import os
import subprocess
import time
import traceback
from dataclasses import asdict
from pathlib import Path

import pandas as pd

from scripts.histories_benchmark.peers import Skipped
from scripts.histories_benchmark.scoring import cleaned, control_figures, system_figures
from scripts.histories_benchmark.split import entity_split
from scripts.histories_benchmark.systems import Budget, draw
from scripts.histories_benchmark.tables import REPO, HistoryTable
from wgangp.training.interrupts import Interrupted

log = logging.getLogger("histories_benchmark")


def commit() -> str:
    """The checkout's commit (what was measured), ``+dirty`` with uncommitted code changes."""
    head = ["git", "rev-parse", "--short", "HEAD"]
    status = ["git", "status", "--porcelain", "--", "wgangp", "scripts"]
    found = [
        subprocess.run(c, capture_output=True, text=True, cwd=REPO, check=False).stdout.strip()
        for c in (head, status)
    ]
    return found[0] + ("+dirty" if found[1] else "")


def _finite(value: object) -> object:
    """JSON has no inf or NaN: written as the strings ``"inf"`` and ``null``."""
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def run_seed(
    table: HistoryTable,
    frame: pd.DataFrame,
    seed: int,
    systems: tuple[str, ...],
    budget: Budget,
    out: Path,
    *,
    smoke: bool = False,
    repeats: int = 5,
) -> list[dict]:
    """Every chosen system's record for ``table`` with ``seed``; each appended to
    ``out/results.jsonl`` as it lands."""
    cols = table.cols
    split = entity_split(frame, cols, seed)
    n = split.entities("train", cols)
    base = {
        "table": table.name,
        "seed": seed,
        "commit": commit(),
        "entities": {p: split.entities(p, cols) for p in ("train", "floor", "test")},
        "budget": asdict(budget),
    }
    log.info(
        "%s seed %d: %s customers (train, floor, test); %d histories drawn per system",
        table.name,
        seed,
        base["entities"],
        n,
    )
    records = [_record(base, "control", control_figures(split, cols, seed, repeats), {})]
    _append(out, records[0])
    for system in systems:
        workdir = out / "work" / f"{table.name}-seed{seed}-{system}"
        start = time.perf_counter()
        load = os.getloadavg()[0]
        try:
            histories, info = draw(system, table, split, n, seed, budget, workdir, smoke)
            histories, dropped = cleaned(histories, cols)
            figures = system_figures(split, histories, cols, seed, repeats)
            figures["dropped_rows"] = float(dropped)
            record = _record(base, system, figures, info)
        except Interrupted:
            raise
        except Skipped as why:
            record = _record(base, system, {}, {}, status="skipped", note=str(why))
        except Exception as err:  # noqa: BLE001 - one system's failure is its record's note
            note = f"{type(err).__name__}: {' '.join(str(err).split())}"[:400]
            log.warning(
                "%s seed %d: %s failed: %s\n%s",
                table.name,
                seed,
                system,
                note,
                traceback.format_exc(),
            )
            record = _record(base, system, {}, {}, status="failed", note=note)
        record["wall_s"] = round(time.perf_counter() - start, 1)
        record["load_avg_1m_start"] = round(load, 2)
        record["load_avg_1m_end"] = round(os.getloadavg()[0], 2)
        _append(out, record)
        records.append(record)
        brief = {k: record[k] for k in ("fid.geometric_mean", "detection") if k in record}
        log.info(
            "%s seed %d: %s %s %s (%.0f s)",
            table.name,
            seed,
            system,
            record["status"],
            brief or record.get("note", ""),
            record["wall_s"],
        )
    return records


def _record(
    base: dict, system: str, figures: dict, info: dict, status: str = "ok", note: str = ""
) -> dict:
    return {**base, "system": system, "status": status, "note": note, **figures, "info": info}


def _append(out: Path, record: dict) -> None:
    line = json.dumps({k: _finite(v) for k, v in record.items()}, default=str)
    with open(out / "results.jsonl", "a") as handle:
        handle.write(line + "\n")


def read_results(paths: list[Path]) -> pd.DataFrame:
    """Records of earlier runs, ``"inf"`` back to infinity."""
    rows = []
    for path in paths:
        for line in path.read_text().splitlines():
            if line.strip():
                rows.append(json.loads(line))
    frame = pd.DataFrame(rows)
    return frame.replace({"inf": math.inf, "-inf": -math.inf})
