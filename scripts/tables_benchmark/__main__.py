"""``python -m scripts.tables_benchmark``: the default model and the baselines on each table.

    python -m scripts.tables_benchmark [--tables creditcard,default_islr,credit_data,lender]
        [--seeds 0,1,2] [--steps N] [--out DIR] [--data DIR] [--smoke]
        [--judge-on test|val|holdout] [--ship KEY=VALUE[,KEY=VALUE] ...]

Writes ``results.csv`` (one row per table, seed and method) and ``summary.md`` (the table printed
at the end) under ``--out``, with the runs' MLflow store (``mlflow.db``) and outputs beside them.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from dataclasses import replace
from pathlib import Path

import pandas as pd

from scripts.tables_benchmark.report import summary
from scripts.tables_benchmark.runner import METHODS, Settings, run_seed
from scripts.tables_benchmark.tables import TABLES, chosen_tables, shared_data_dir
from wgangp.errors import WgangpError
from wgangp.overrides import check_overrides

REPO = Path(__file__).resolve().parents[2]
#: --smoke: one seed, a few steps, a few CTGAN epochs, light detection.
SMOKE = Settings(steps=20, smoke=True, ctgan_epochs=5, repeats=3, gbm_max_iter=50)


def arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m scripts.tables_benchmark", description=__doc__)
    parser.add_argument("--tables", default=",".join(TABLES), help="comma-separated table names")
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated training seeds")
    parser.add_argument("--steps", type=int, default=None, help="generator steps (default: 3000)")
    parser.add_argument("--out", default="tables-benchmark", help="folder for runs and results")
    parser.add_argument("--data", default=None, help="shared data folder ($WGANGP_SHARED_DATA)")
    parser.add_argument("--methods", default=",".join(METHODS), help="a subset of the methods")
    parser.add_argument("--ctgan-epochs", type=int, default=300)
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an override of the default model's config, e.g. ship.copula_share=0 (repeatable)",
    )
    parser.add_argument(
        "--judge-on",
        choices=("test", "val", "holdout"),
        default="test",
        help="the split the rows are judged on: test to report; holdout (a fourth split carved "
        "before the run, never seen by its step selection) to choose a variant of what ships",
    )
    parser.add_argument(
        "--ship",
        action="append",
        default=[],
        metavar="KEY=VALUE[,KEY=VALUE]",
        help="a variant of what ships, assembled from the default's trained generator and judged "
        "as a method of its own, e.g. ship.copula_share=0 (repeatable)",
    )
    parser.add_argument(
        "--from-results",
        default=None,
        metavar="CSV[,CSV]",
        help="print the summary of earlier runs' results.csv files instead of running",
    )
    parser.add_argument("--smoke", action="store_true", help="1 seed, 20 steps, 5 CTGAN epochs")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    if args.from_results:
        return summarize_files(args.from_results.split(","))
    try:
        specs = chosen_tables(args.tables)
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()][: 1 if args.smoke else None]
        methods = tuple(m.strip() for m in args.methods.split(",") if m.strip())
        unknown = sorted(set(methods) - set(METHODS))
        if unknown or not seeds:
            raise ValueError(f"unknown method(s) {unknown}: choose from {', '.join(METHODS)}")
        if any("=" not in item for item in args.set):
            raise ValueError(f"--set takes KEY=VALUE, got {args.set}")
        check_overrides(args.set)
        ships = tuple(tuple(item.split(",")) for item in args.ship)
        for ship in ships:
            if any(not key.startswith("ship.") or "=" not in key for key in ship):
                raise ValueError(f"--ship takes ship.KEY=VALUE items, got {','.join(ship)}")
            check_overrides(list(ship))
    except (ValueError, WgangpError) as err:
        print(f"tables_benchmark: {err}", file=sys.stderr)
        return 2
    shared = shared_data_dir(args.data)
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    paths = {spec.name: spec.write(out) if spec.generated else spec.path(shared) for spec in specs}
    missing = [path for path in paths.values() if not path.is_file()]
    if missing:
        print(
            f"tables_benchmark: no table at {missing[0]}: give --data DIR or set "
            "WGANGP_SHARED_DATA to the shared data folder",
            file=sys.stderr,
        )
        return 2
    base = SMOKE if args.smoke else Settings(ctgan_epochs=args.ctgan_epochs)
    settings = replace(
        base,
        methods=methods,
        steps=args.steps or base.steps,
        variant=tuple(args.set),
        ship_variants=ships,
        judged_on=args.judge_on,
    )
    rows: list[dict[str, object]] = []
    try:
        for spec in specs:
            start = time.perf_counter()
            for seed in seeds:
                outcomes = run_seed(spec, paths[spec.name], seed, out, settings, REPO)
                rows += [outcome.row() for outcome in outcomes]
                pd.DataFrame(rows).to_csv(out / "results.csv", index=False)
            minutes = (time.perf_counter() - start) / 60
            logging.getLogger("tables_benchmark").info("%s: %.1f min", spec.name, minutes)
    except WgangpError as err:  # a bad table, or a signal (Interrupted) during a run
        print(f"tables_benchmark: {err}", file=sys.stderr)
        return err.exit_code
    text = summary(pd.DataFrame(rows))
    (out / "summary.md").write_text(text + "\n")
    print(text)
    return 0


def summarize_files(paths: list[str]) -> int:
    """Print the summary of saved results (several runs' files together, in the given order)."""
    missing = [path for path in paths if not Path(path).is_file()]
    if missing:
        print(f"tables_benchmark: no results file {missing[0]}", file=sys.stderr)
        return 2
    print(summary(pd.concat([pd.read_csv(path) for path in paths], ignore_index=True)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
