"""How long the default evaluation takes on a Kaggle-sized split, part by part.

The table is the embedded simulated one (284,807 rows, 492 frauds), split like the trainer's; the
"generator" draws more simulated frauds, so only the evaluation is timed. Printed: the wall
seconds, the CPU seconds of this process and the evaluation's workers, and each part's CPU
seconds (fidelity, detection, privacy, SDMetrics' privacy, utility), which a loaded machine
distorts far less than the wall time.

    python -m scripts.evaluation_time [--rows 284807] [--repeats 3] [--workers 0] [--full]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from collections.abc import Callable

import pandas as pd

from wgangp.config import EvaluateConfig
from wgangp.data.builtin.creditcard import creditcard_schema
from wgangp.data.builtin.simulated import simulate_creditcard
from wgangp.data.split import stratified_split
from wgangp.evaluation.suite import EvaluationResult, run_evaluation


def full_settings() -> EvaluateConfig:
    """``evaluate=full`` (``conf/evaluate/full.yaml``): every repeat the default trims."""
    from hydra import compose, initialize_config_dir

    from wgangp.config import CONF_DIR, register_configs, to_config

    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return to_config(compose(config_name="config", overrides=["evaluate=full"])).evaluate


def simulated_frauds(n: int, seed: int) -> pd.DataFrame:
    """``n`` simulated fraud rows (the simulator's fraud rows of a half-fraud table)."""
    table = simulate_creditcard(n_rows=2 * n + 4, fraud_rate=0.5, seed=seed)
    schema = creditcard_schema()
    return table[schema.classes(table[schema.label]) == 1].head(n).reset_index(drop=True)


def simulated_evaluation(rows: int, seed: int) -> Callable[[EvaluateConfig], EvaluationResult]:
    """``run_evaluation`` of a ``rows``-row simulated split (split like the trainer's), the
    "generator" drawing other simulated frauds, under the settings it is called with."""
    schema = creditcard_schema()
    table = simulate_creditcard(n_rows=rows, seed=seed)
    classes = schema.classes(table[schema.label])
    split = stratified_split(table, classes, schema.class_names, seed=seed)

    def evaluate(settings: EvaluateConfig) -> EvaluationResult:
        return run_evaluation(
            split.train,
            split.test,
            lambda n, s: simulated_frauds(n, int(s) + 1),
            settings,
            schema,
            seed=seed,
        )

    return evaluate


def measure(rows: int, settings: EvaluateConfig, seed: int = 0) -> dict[str, float]:
    """Seconds of one ``run_evaluation`` on a ``rows``-row simulated split: ``wall_s``,
    ``cpu_s`` (this process and the workers) and ``cpu_<part>_s``."""
    evaluate = simulated_evaluation(rows, seed)
    wall = time.perf_counter()
    result = evaluate(settings)
    found = {"wall_s": time.perf_counter() - wall, "cpu_s": result.seconds["cpu"]}
    parts = {k: v for k, v in result.seconds.items() if k.startswith("cpu_")}
    found |= {f"{name}_s": value for name, value in parts.items()}
    return found | {"metrics": len(result.metrics)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=284_807)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=0, help="evaluate.workers (0: a core each)")
    parser.add_argument("--full", action="store_true", help="evaluate=full: every repeat")
    args = parser.parse_args(argv)
    settings = dataclasses.replace(
        full_settings() if args.full else EvaluateConfig(), workers=args.workers
    )
    runs = [measure(args.rows, settings, seed=s) for s in range(args.repeats)]
    for name in [k for k in runs[0] if k.endswith("_s")]:
        values = [r[name] for r in runs]
        spread = statistics.stdev(values) if len(values) > 1 else 0.0
        shown = ", ".join(f"{v:.1f}" for v in values)
        print(f"{name}: {statistics.mean(values):.1f} ± {spread:.1f} ({shown})")


if __name__ == "__main__":
    main()
