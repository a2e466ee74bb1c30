"""Training-throughput benchmark: the naive Keras-style loop, the project's trainer, the peers.

Run from the repo root, e.g. ``python -m scripts.bench --quick --systems naive,matmul --out
tmp/x.json`` (CI). Writes FILE.json (a list of records) and FILE.md (the table, ratios to the
naive loop of the same size). What it measures and how: docs/benchmark.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from scripts.bench import report
from scripts.bench.harness import ALL_SYSTEMS, IN_PROCESS_SYSTEMS, Harness, Plan
from scripts.bench.peers.record import SIZES, load_average, log
from scripts.bench.peers.rows import REPO, load_rows, real_sample_path
from wgangp.errors import ConfigError, DataError, WgangpError

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # before anything imports TensorFlow


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The options, checked: a bad one raises a ``WgangpError`` with a one-line message;
    ``plan`` holds what they ask to run."""
    parser = argparse.ArgumentParser(
        prog="python -m scripts.bench", description=__doc__.splitlines()[0]
    )
    systems = ", ".join(ALL_SYSTEMS)
    parser.add_argument(
        "--systems", default=",".join(ALL_SYSTEMS), help=f"comma-separated, from: {systems}"
    )
    parser.add_argument("--sizes", default="default,small", help="comma-separated: default,small")
    out = str(REPO / "benchmarks" / "out" / "benchmark.json")
    parser.add_argument(
        "--out", default=out, help="records as JSON; the table goes beside it with the suffix .md"
    )
    parser.add_argument(
        "--data", help="real rows CSV (default: $WGANGP_REAL_SAMPLE, then the shared sample)"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="few steps, tiny repeats; peers only if their envs exist (CI)",
    )
    parser.add_argument(
        "--extras",
        action="store_true",
        help="also: time per step over batch 64..4096 and peak RSS on 1M rows, for the naive "
        "loop and the trainer's fastest mode asked for",
    )
    parser.add_argument(
        "--include",
        action="append",
        default=[],
        help="add records measured elsewhere (a JSON list, or JSON lines as a peer prints); "
        "with --systems '' only renders the table",
    )
    parser.add_argument("--steps", type=int, default=None, help="generator steps per repeat")
    parser.add_argument("--repeats", type=int, default=None)
    args = parser.parse_args(argv)
    args.systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    args.sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
    for kind, chosen, known in (("system", args.systems, ALL_SYSTEMS), ("size", args.sizes, SIZES)):
        unknown = [s for s in chosen if s not in known]
        if unknown:
            choices = ", ".join(known)
            raise ConfigError(f"unknown {kind}(s) {', '.join(unknown)}; choose from {choices}")
    missing = [p for p in args.include if not Path(p).is_file()]
    if missing:
        raise ConfigError(f"--include {missing[0]} does not exist; pass a benchmark JSON file")
    if args.data and not Path(args.data).is_file():
        raise DataError(f"--data {args.data} does not exist; pass the real rows CSV(.gz)")
    chosen = {"systems": tuple(args.systems), "sizes": tuple(args.sizes), "data": args.data}
    budgets = {"quick": args.quick, "steps": args.steps, "repeats": args.repeats}
    args.plan = Plan.chosen(**budgets, **chosen, extras=args.extras)
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; exit 0, 1 if any system failed, 2 on a bad option."""
    started = time.perf_counter()
    try:
        args = parse_args(argv)
    except WgangpError as err:
        print(f"benchmark: {err}", file=sys.stderr)
        return err.exit_code
    needs_rows = any(s in IN_PROCESS_SYSTEMS for s in args.systems)
    rows = load_rows(args.data) if needs_rows else None  # --data was checked: it exists
    if rows is not None and rows.simulated:
        log("!" * 78)
        log(f"!!! {rows.note}: set WGANGP_REAL_SAMPLE or --data; figures are NOT comparable")
        log("!" * 78)
    mode = "quick (harness check only)" if args.quick else "full"
    log(f"benchmark ({mode}): systems {','.join(args.systems)}; sizes {','.join(args.sizes)}")
    load_before = load_average()
    if load_before > (os.cpu_count() or 1):
        log(f"warning: load average {load_before} > {os.cpu_count()} cores: figures will be low")
    records = Harness(args.plan, rows).run()
    for path in args.include:
        records += report.read_records(Path(path))
    load_after = load_average()

    out = Path(args.out)
    data_line = rows.note if rows else f"peers read {real_sample_path(args.data)}"
    table = report.write(out, records, report.header(mode, data_line, load_before, load_after))
    print(table)
    log(f"wrote {out} and {out.with_suffix('.md')} in {time.perf_counter() - started:.0f}s")
    return 1 if any(r.status == "failed" for r in records) else 0


if __name__ == "__main__":
    sys.exit(main())
