"""``python -m scripts.histories_benchmark``: every system on every transaction table, by customer.

    python -m scripts.histories_benchmark [--tables own,synccfd,aml] [--seeds 0,1,2]
        [--systems wgangp,rows,par,mostly,dgan,real] [--out DIR] [--data DIR] [--smoke]
        [--customers N] [--days N] [--wgangp-steps N] [--budget FIELD=VALUE ...]
        [--set KEY=VALUE ...]
    python -m scripts.histories_benchmark --report DIR/results.jsonl[,...]

Writes ``results.jsonl`` under ``--out`` (one JSON line per table, seed and system, appended as
each lands; the seed's real references as system ``control``) and ``summary.md`` (the table it
prints at the end). The tables are written once under ``--data`` (default
``$WGANGP_HISTORIES_DATA``, else ``<out>/data``); the peers run in their environments
(``bash scripts/histories_benchmark/setup_envs.sh``; ``$WGANGP_BENCH_ENVS``).
"""

from __future__ import annotations

import argparse
import logging
import sys
from dataclasses import replace
from pathlib import Path

from scripts.histories_benchmark.report import summary
from scripts.histories_benchmark.runner import read_results, run_seed
from scripts.histories_benchmark.systems import SYSTEMS, Budget
from scripts.histories_benchmark.tables import TABLES, chosen_tables, data_dir, ensure_table
from scripts.histories_benchmark.tables import read_table as read_history_table

#: --smoke: one seed, tiny tables, a few steps and epochs, light detection.
SMOKE = Budget(
    wgangp_steps=20,
    rows_steps=20,
    par_epochs=1,
    mostly_epochs=1,
    mostly_minutes=0.5,
    dgan_epochs=2,
    dgan_max_length=16,
    peer_timeout_s=600,
)


def arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m scripts.histories_benchmark",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--tables", default=",".join(TABLES))
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--out", default="histories-benchmark")
    parser.add_argument("--data", default=None, help="where the tables are written and read")
    parser.add_argument("--customers", type=int, default=None, help="resize every table")
    parser.add_argument("--days", type=int, default=None, help="resize every table")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an override of wgangp's history model (repeatable)",
    )
    parser.add_argument(
        "--wgangp-steps", type=int, default=None, help="steps of wgangp's history model (2000)"
    )
    parser.add_argument(
        "--budget",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="a field of systems.Budget, e.g. par_epochs=4 or peer_timeout_s=3600 (repeatable)",
    )
    parser.add_argument(
        "--report",
        default=None,
        metavar="JSONL[,JSONL]",
        help="print the table of earlier results instead of running",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="1 seed, 120 customers over 10 days, a few steps and epochs",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    if args.report:
        paths = [Path(p) for p in args.report.split(",")]
        missing = [p for p in paths if not p.is_file()]
        if missing:
            print(f"histories_benchmark: no results file {missing[0]}", file=sys.stderr)
            return 2
        print(summary(read_results(paths)))
        return 0
    try:
        tables = chosen_tables(args.tables)
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()][: 1 if args.smoke else None]
        systems = tuple(s.strip() for s in args.systems.split(",") if s.strip())
        unknown = sorted(set(systems) - set(SYSTEMS))
        if unknown or not seeds:
            raise ValueError(f"unknown system(s) {unknown}: choose from {', '.join(SYSTEMS)}")
    except ValueError as err:
        print(f"histories_benchmark: {err}", file=sys.stderr)
        return 2
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    folder = data_dir(args.data, out)
    customers, days = (120, 10) if args.smoke else (args.customers, args.days)
    budget = replace(SMOKE if args.smoke else Budget(), wgangp_overrides=tuple(args.set))
    if args.wgangp_steps:
        budget = replace(budget, wgangp_steps=args.wgangp_steps)
    try:
        budget = replace(budget, **dict(_budget_field(budget, item) for item in args.budget))
    except ValueError as err:
        print(f"histories_benchmark: {err}", file=sys.stderr)
        return 2
    records = []
    for table in tables:
        if customers or days:
            table = table.resized(customers or table.customers, days or table.days)
        try:
            frame = read_history_table(table, ensure_table(table, folder))
        except RuntimeError as err:
            print(f"histories_benchmark: {table.name}: {err}", file=sys.stderr)
            return 2
        for seed in seeds:
            records += run_seed(
                table,
                frame,
                seed,
                systems,
                budget,
                out,
                smoke=args.smoke,
                repeats=2 if args.smoke else 5,
            )
    text = summary(read_results([out / "results.jsonl"]))
    (out / "summary.md").write_text(text + "\n")
    print(text)
    return 0


def _budget_field(budget: Budget, item: str) -> tuple[str, object]:
    """``FIELD=VALUE`` of ``--budget`` as the field's own type."""
    name, _, value = item.partition("=")
    if name not in budget.__dataclass_fields__ or name == "wgangp_overrides" or not value:
        fields = ", ".join(f for f in budget.__dataclass_fields__ if f != "wgangp_overrides")
        raise ValueError(f"--budget takes FIELD=VALUE with a field of {fields}; got {item!r}")
    return name, type(getattr(budget, name))(value)


if __name__ == "__main__":
    raise SystemExit(main())
