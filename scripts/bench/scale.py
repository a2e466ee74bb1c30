"""The main command against the rows of its table: time and peak memory per phase.

Writes simulated tables (``wgangp.data.builtin.simulated``, Kaggle's 31 columns) as folders of
Parquet files, one chunk of at most ``--chunk`` rows per file, each chunk simulated with its own
seed, so no table is ever held whole; then runs ``python -m wgangp.train data.path=<folder>`` with
few steps on each, one fresh process per table, and prints each phase's wall time (the run's
``phases.json``), the process's peak RSS (``wait4``) and their ratios to the smallest table.

    python -m scripts.bench.scale                                # 284,807, 3M and 30M rows
    python -m scripts.bench.scale --rows 284807,3000000 --tables /tmp/tables --out tmp/scale

Tables are kept in ``--tables`` and reused (a ``_rows`` marker says what a folder holds). On a
shared machine compare ratios within one printout, and read the load average beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from scripts.bench.peers.record import load_average, log

REPO = Path(__file__).resolve().parents[2]
DEFAULT_ROWS = (284_807, 3_000_000, 30_000_000)
#: Phases in the order a run goes through them (``wgangp.training.phases``).
PHASES = ("read", "train", "select", "assemble", "export", "evaluate")
MARKER = "_rows"


def write_table(folder: Path, rows: int, chunk: int, seed: int) -> Path:
    """``rows`` simulated rows as ``part-NNNNN.parquet`` files of at most ``chunk`` rows, chunk i
    simulated with seed ``seed * 100_000 + i``; kept when ``folder`` already holds them."""
    from wgangp.data.builtin.simulated import simulate_creditcard

    marker = folder / MARKER
    wanted = f"{rows} {chunk} {seed}"
    if marker.exists() and marker.read_text() == wanted:
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("part-*.parquet"):
        old.unlink()
    started = time.perf_counter()
    for i, start in enumerate(range(0, rows, chunk)):
        n = min(chunk, rows - start)
        frame = simulate_creditcard(n_rows=n, seed=seed * 100_000 + i)
        frame.to_parquet(folder / f"part-{i:05d}.parquet", index=False)
        del frame
    marker.write_text(wanted)
    log(f"wrote {rows:,} rows to {folder} in {time.perf_counter() - started:.0f} s")
    return folder


def run_main_command(
    table: Path, run_dir: Path, *, steps: int, every: int, extra: list[str]
) -> dict[str, object]:
    """One ``python -m wgangp.train`` on ``table`` in a fresh process: its phases, its peak RSS
    (the process and the children it waited for, from ``wait4``) and the load around it."""
    run_dir.mkdir(parents=True, exist_ok=True)
    args = [
        sys.executable, "-m", "wgangp.train", f"data.path={table}", "data.schema=creditcard",
        f"trainer.steps={steps}", f"select.every={every}", "trainer.progress=false",
        f"hydra.run.dir={run_dir}", f"tracking.uri=sqlite:///{run_dir / 'mlflow.db'}", *extra,
    ]  # fmt: skip
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONPATH": str(REPO)}
    env.pop("MLFLOW_TRACKING_URI", None)
    load_before = load_average()
    started = time.perf_counter()
    with open(run_dir / "run.log", "w") as out:
        process = subprocess.Popen(args, cwd=run_dir, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    if process.returncode != 0:
        tail = (run_dir / "run.log").read_text().splitlines()[-5:]
        raise SystemExit(f"the run on {table} failed ({process.returncode}):\n" + "\n".join(tail))
    phases = json.loads((run_dir / "phases.json").read_text())
    read_line = next(
        (line.split(" - ", 1)[-1] for line in (run_dir / "run.log").read_text().splitlines()
         if "data: read " in line or "data: simulated" in line or "data: file" in line),
        "",
    )  # fmt: skip
    return {
        "table": str(table),
        "wall_s": round(wall, 1),
        "peak_rss_mb": round(usage.ru_maxrss / 1024.0, 1),
        "phases": phases,
        "load_avg_1m": [load_before, load_average()],
        "read": read_line,
    }


def ratio(value: float, base: float) -> str:
    return f"{value / base:.2f}x" if base > 0 else "-"


def render(records: list[dict[str, object]], rows: list[int], cpus: int) -> str:
    """The table: per phase wall seconds (CPU seconds), peak RSS, and the ratios to the first."""
    head = ["rows", *PHASES, "whole run", "peak RSS", "load (1 min, before/after)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    base = records[0]
    for n, record in zip(rows, records, strict=True):
        phases = record["phases"]
        cells = [f"{n:,}"]
        for name in PHASES:
            p = phases.get(name)
            cells.append(f"{p['wall_s']:.1f} s (CPU {p['cpu_s']:.1f})" if p else "-")
        cells += [f"{record['wall_s']:.0f} s", f"{record['peak_rss_mb']:,.0f} MiB"]
        cells.append(" / ".join(str(x) for x in record["load_avg_1m"]) + f" on {cpus} cores")
        lines.append("| " + " | ".join(cells) + " |")
    for n, record in list(zip(rows, records, strict=True))[1:]:
        cells = [f"ratio {n:,} / {rows[0]:,}"]
        for name in PHASES:
            p, q = record["phases"].get(name), base["phases"].get(name)
            cells.append(
                f"{ratio(p['wall_s'], q['wall_s'])} (CPU {ratio(p['cpu_s'], q['cpu_s'])})"
                if p and q
                else "-"
            )
        cells += [
            ratio(record["wall_s"], base["wall_s"]),
            ratio(record["peak_rss_mb"], base["peak_rss_mb"]),
            "",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m scripts.bench.scale", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--rows",
        default=",".join(str(n) for n in DEFAULT_ROWS),
        help="comma-separated table sizes; the first is the ratios' base",
    )
    parser.add_argument("--tables", default="/tmp/wgangp-scale-tables", help="where tables live")
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "out" / "scale"))
    parser.add_argument("--chunk", type=int, default=1_000_000, help="rows per Parquet file")
    parser.add_argument("--seed", type=int, default=0, help="the tables' simulation seed")
    parser.add_argument("--steps", type=int, default=100, help="trainer.steps of each run")
    parser.add_argument("--every", type=int, default=50, help="select.every of each run")
    parser.add_argument(
        "--override", action="append", default=[], help="another key=value for every run"
    )
    args = parser.parse_args(argv)
    try:
        args.row_counts = [int(n.replace("_", "")) for n in args.rows.split(",") if n]
    except ValueError:
        parser.error(f"--rows takes whole numbers, got {args.rows!r}")
    if not args.row_counts or min(args.row_counts) < 1000:
        parser.error("--rows needs sizes of at least 1000 rows")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    records = []
    for rows in args.row_counts:
        table = write_table(
            Path(args.tables) / f"sim-{rows}-seed{args.seed}", rows, args.chunk, args.seed
        )
        log(f"running the main command on {rows:,} rows (load {load_average()})")
        record = run_main_command(
            table, out / f"run-{rows}", steps=args.steps, every=args.every, extra=args.override
        )
        record["rows"] = rows
        log(f"{rows:,} rows: {record['wall_s']} s, peak RSS {record['peak_rss_mb']} MiB")
        records.append(record)
    table = render(records, args.row_counts, os.cpu_count() or 0)
    (out / "scale.json").write_text(json.dumps(records, indent=1))
    (out / "scale.md").write_text(table + "\n")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
