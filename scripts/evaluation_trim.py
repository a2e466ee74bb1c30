"""What the default evaluation's fewer repeats cost: its figures against the full evaluation's.

The default runs utility's experiment ``evaluate.seeds=3`` times and SDMetrics' DCR comparison
``evaluate.dcr_repeats=2`` times; ``evaluate=full`` runs them 5 and 5 times. Repeat k's seeds do
not depend on how many repeats run (``numpy.random.SeedSequence`` states are prefix-stable), so
the default's repeats are the full evaluation's first ones, and the difference between the two
figures is what the dropped repeats would have moved them. Both evaluations run on the same rows
(the embedded simulated table's split, the "generator" drawing other simulated frauds, as in
``scripts.evaluation_time``) for each seed; printed per headline metric: the full figure and its
spread over repeats (``_std``), the default's, and the difference in units of that spread; and
both evaluations' wall and CPU seconds.

    python -m scripts.evaluation_trim [--rows 284807] [--seeds 0,1,2]
"""

from __future__ import annotations

import argparse
import statistics

from scripts.evaluation_time import full_settings, simulated_evaluation
from wgangp.config import EvaluateConfig
from wgangp.evaluation.suite import EvaluationResult

#: The figures the trimmed repeats feed, with the ``_std`` each is read against.
HEADLINE = (
    "pr_auc_augmented",
    "lift_vs_real",
    "lift_vs_smote",
    "lift_vs_copula",
    "lift_vs_smote_logreg",
    "dcr_overfitting_protection",
    "dcr_overfitting_protection_smote",
    "dcr_overfitting_protection_copula",
)


def both(rows: int, seed: int) -> tuple[EvaluationResult, EvaluationResult]:
    """The default and the full evaluation of one simulated split, same rows, same seed."""
    evaluate = simulated_evaluation(rows, seed)
    return evaluate(EvaluateConfig()), evaluate(full_settings())


def compare(trimmed: EvaluationResult, full: EvaluationResult) -> list[dict[str, float | str]]:
    """Per headline metric: full, its spread, default, and their difference in spreads."""
    lines = []
    for name in HEADLINE:
        key = f"eval/{name}"
        spread = full.metrics[f"{key}_std"]
        difference = trimmed.metrics[key] - full.metrics[key]
        lines.append(
            {
                "metric": name,
                "full": full.metrics[key],
                "full_std": spread,
                "default": trimmed.metrics[key],
                "default_std": trimmed.metrics[f"{key}_std"],
                "difference_in_stds": difference / spread if spread > 0 else float("nan"),
            }
        )
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=284_807)
    parser.add_argument("--seeds", default="0,1,2")
    args = parser.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",") if s]
    ratios: dict[str, list[float]] = {}
    seconds: dict[str, list[float]] = {}
    print("| seed | metric | full | full sd | default | default sd | difference / full sd |")
    print("|---|---|---|---|---|---|---|")
    for seed in seeds:
        trimmed, full = both(args.rows, seed)
        for name, result in (("default", trimmed), ("full", full)):
            for kind in ("wall", "cpu"):
                seconds.setdefault(f"{name} {kind}", []).append(result.seconds[kind])
        for line in compare(trimmed, full):
            ratios.setdefault(str(line["metric"]), []).append(float(line["difference_in_stds"]))
            print(
                f"| {seed} | {line['metric']} | {line['full']:.4f} | {line['full_std']:.4f} | "
                f"{line['default']:.4f} | {line['default_std']:.4f} | "
                f"{line['difference_in_stds']:+.2f} |"
            )
    print()
    for name, values in ratios.items():
        largest = max(abs(v) for v in values)
        print(f"{name}: largest |difference| {largest:.2f} full sd over {len(values)} seed(s)")
    for name, values in seconds.items():
        print(f"{name} s: {statistics.median(values):.1f} (median of {len(values)})")


if __name__ == "__main__":
    main()
