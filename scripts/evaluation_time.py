"""How long the default evaluation takes on a Kaggle-sized split, single-threaded.

The table is the embedded simulated one (284,807 rows, 492 frauds), split like the trainer's; the
"generator" draws more simulated frauds, so only the evaluation is timed. With
``evaluate.threads=1`` the CPU time is the wall time on an otherwise idle machine; the wall time
is printed too, since on a shared machine it also counts the other processes' share of the cores.

    python -m scripts.evaluation_time [--rows 284807] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

import pandas as pd

from wgangp.config import EvaluateConfig
from wgangp.data.builtin.creditcard import creditcard_schema
from wgangp.data.builtin.simulated import simulate_creditcard
from wgangp.data.split import stratified_split
from wgangp.evaluation.suite import run_evaluation


def simulated_frauds(n: int, seed: int) -> pd.DataFrame:
    """``n`` simulated fraud rows (the simulator's fraud rows of a half-fraud table)."""
    table = simulate_creditcard(n_rows=2 * n + 4, fraud_rate=0.5, seed=seed)
    schema = creditcard_schema()
    return table[schema.classes(table[schema.label]) == 1].head(n).reset_index(drop=True)


def measure(rows: int, settings: EvaluateConfig, seed: int = 0) -> dict[str, float]:
    """Wall and CPU seconds of one ``run_evaluation`` on a ``rows``-row simulated split."""
    schema = creditcard_schema()
    table = simulate_creditcard(n_rows=rows, seed=seed)
    classes = schema.classes(table[schema.label])
    split = stratified_split(table, classes, schema.class_names, seed=seed)
    wall, cpu = time.perf_counter(), time.process_time()
    result = run_evaluation(
        split.train,
        split.test,
        lambda n, s: simulated_frauds(n, int(s) + 1),
        settings,
        schema,
        seed=seed,
    )
    return {
        "wall_s": time.perf_counter() - wall,
        "cpu_s": time.process_time() - cpu,
        "metrics": len(result.metrics),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=284_807)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    runs = [measure(args.rows, EvaluateConfig(), seed=s) for s in range(args.repeats)]
    for name in ("wall_s", "cpu_s"):
        values = [r[name] for r in runs]
        spread = statistics.stdev(values) if len(values) > 1 else 0.0
        shown = ", ".join(f"{v:.1f}" for v in values)
        print(f"{name}: {statistics.mean(values):.1f} ± {spread:.1f} ({shown})")


if __name__ == "__main__":
    main()
