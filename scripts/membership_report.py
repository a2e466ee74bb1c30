"""The membership audit's results: one seed's canaries' distances (:class:`SeedResult`), the
figures they give per seed and pooled (JSON lines that read back), the printed table, and the
paired difference of two audits of the same canaries."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from scripts import membership_statistics as statistics
from scripts.membership_statistics import Statistic, advantage, auc, compare

GROUPS = ("in", "out", "fresh")


@dataclass
class SeedResult:
    """One seed's candidates' distances to the nearest generated row, by generator (the
    default's shipped synthesizer; SMOTE on the same training split, a generator known to put
    rows next to its training rows) and group."""

    seed: int
    distances: dict[str, dict[str, np.ndarray]]
    #: Each group's distances to the nearest real training rare row (not a canary).
    isolation: dict[str, np.ndarray] = field(default_factory=dict)
    train_rare: int = 0
    generated: int = 0
    wall_s: float = float("nan")
    run_id: str | None = None
    #: Identical rows of each IN canary in the table (one entity).
    copies: int = 1

    def scores(self, group: str, generator: str = "default") -> np.ndarray:
        return -self.distances[generator][group]


Picks = Sequence[tuple[np.ndarray, np.ndarray]]


def _difference(
    first: Sequence[SeedResult], second: Sequence[SeedResult], picks: Picks, statistic: Statistic
) -> float:
    """``statistic`` of the picked IN against the picked OUT scores (per seed, the indices in
    ``picks``), in ``first`` minus in ``second``."""
    values = []
    for results in (first, second):
        a = np.concatenate([r.scores("in")[i] for r, (i, _) in zip(results, picks, strict=True)])
        b = np.concatenate([r.scores("out")[j] for r, (_, j) in zip(results, picks, strict=True)])
        values.append(statistic(a, b))
    return values[0] - values[1]


def paired_difference(
    first: Sequence[SeedResult], second: Sequence[SeedResult], seed: int = 0
) -> dict[str, float]:
    """The shipped synthesizer's AUC and advantage (IN against OUT) in ``first`` minus those in
    ``second``: two audits of the same seeds, hence of the same canaries, trained two ways (say
    without and with privacy). The 95% interval resamples each seed's IN and OUT canaries with
    replacement, the same canaries in both audits; ``*_p`` is the share of resamples where the
    difference is at most 0 (one-sided: ``first`` gives more away). ValueError when the audits
    differ in seeds, canaries or copies."""

    def shape(results: Sequence[SeedResult]) -> list[tuple[int, ...]]:
        return [
            (r.seed, r.copies, *(len(r.distances["default"][g]) for g in GROUPS)) for r in results
        ]

    if shape(first) != shape(second):
        raise ValueError("the two audits differ in seeds, canaries or copies: nothing to pair")
    rng = np.random.default_rng([seed, 6])
    whole = [(np.arange(len(r.scores("in"))), np.arange(len(r.scores("out")))) for r in first]
    resamples = [
        [(rng.integers(len(i), size=len(i)), rng.integers(len(j), size=len(j))) for i, j in whole]
        for _ in range(statistics.BOOTSTRAP)
    ]
    figures: dict[str, float] = {}
    for name, statistic in (("auc", auc), ("advantage", advantage)):
        draws = np.array([_difference(first, second, p, statistic) for p in resamples])
        figures[name] = _difference(first, second, whole, statistic)
        low, high = np.percentile(draws, [2.5, 97.5])
        figures[f"{name}_low"], figures[f"{name}_high"] = float(low), float(high)
        figures[f"{name}_p"] = float(np.mean(draws <= 0))
    return figures


def paired_text(figures: dict[str, float], results: Sequence[SeedResult]) -> str:
    """One line: the paired difference of two audits (:func:`paired_difference`)."""
    members = sum(len(r.scores("in")) for r in results)
    others = sum(len(r.scores("out")) for r in results)
    seeds = ",".join(str(r.seed) for r in results)
    return (
        f"paired over {members} IN and {others} OUT canaries (seeds {seeds}), first minus "
        f"second: AUC {figures['auc']:+.3f} [{figures['auc_low']:+.3f}, "
        f"{figures['auc_high']:+.3f}] (resamples at or below 0: {figures['auc_p']:.3f}), "
        f"advantage {figures['advantage']:+.3f} [{figures['advantage_low']:+.3f}, "
        f"{figures['advantage_high']:+.3f}] (resamples at or below 0: "
        f"{figures['advantage_p']:.3f})"
    )


# ---------------------------------------------------------------- report

COMPARISONS = {"in_vs_out": ("in", "out"), "out_vs_fresh": ("out", "fresh")}


def records(results: Sequence[SeedResult], extra: Sequence[str]) -> list[dict[str, object]]:
    """One record per seed, generator and comparison, then the pooled ones (with 2+ seeds). A
    seed's records hold its candidates' distances (:func:`results_of` reads them back)."""
    rows: list[dict[str, object]] = []
    sets: list[tuple[str, Sequence[SeedResult]]] = [(str(r.seed), [r]) for r in results]
    if len(results) > 1:
        sets.append(("pooled", results))
    for label, chosen in sets:
        for generator in chosen[0].distances:
            for comparison, (a, b) in COMPARISONS.items():
                figures = compare(
                    [r.scores(a, generator) for r in chosen],
                    [r.scores(b, generator) for r in chosen],
                    seed=sum(r.seed for r in chosen),
                )
                row: dict[str, object] = {
                    "seed": label, "generator": generator, "comparison": comparison, **figures
                }  # fmt: skip
                for group in (a, b):
                    distances = np.concatenate([r.distances[generator][group] for r in chosen])
                    isolation = np.concatenate([r.isolation[group] for r in chosen])
                    row[f"median_distance_{group}"] = float(np.median(distances))
                    row[f"median_isolation_{group}"] = float(np.median(isolation))
                row["train_rare"] = [r.train_rare for r in chosen]
                row["generated"] = [r.generated for r in chosen]
                row["wall_s"] = [round(r.wall_s, 1) for r in chosen]
                row["run_id"] = [r.run_id for r in chosen]
                row["copies"] = chosen[0].copies
                row["overrides"] = list(extra)
                if len(chosen) == 1:
                    row["distances"] = {
                        name: {g: values[g].tolist() for g in GROUPS}
                        for name, values in chosen[0].distances.items()
                    }
                    row["isolation"] = {g: chosen[0].isolation[g].tolist() for g in GROUPS}
                rows.append(row)
    return rows


def results_of(rows: Sequence[dict[str, object]]) -> tuple[list[SeedResult], list[str]]:
    """The seeds' results (and overrides) back from :func:`records`' rows."""
    results = {}
    extra: list[str] = []
    for row in rows:
        if row["seed"] == "pooled" or row["seed"] in results:
            continue
        results[row["seed"]] = SeedResult(
            int(row["seed"]),
            {
                name: {g: np.array(v) for g, v in values.items()}
                for name, values in row["distances"].items()
            },
            {g: np.array(v) for g, v in row["isolation"].items()},
            train_rare=row["train_rare"][0],
            generated=row["generated"][0],
            wall_s=row["wall_s"][0],
            run_id=row["run_id"][0],
            copies=int(row.get("copies", 1)),
        )
        extra = list(row["overrides"])
    return list(results.values()), extra


def p_text(p: float) -> str:
    """A permutation p-value to 3 decimals; below 0.001 as such (2,000 shuffles)."""
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def interval(row: dict[str, object], name: str) -> str:
    return f"{row[name]:.3f} [{row[f'{name}_low']:.3f}, {row[f'{name}_high']:.3f}]"


def table_text(rows: Sequence[dict[str, object]]) -> str:
    """The printed markdown table: one line per seed (and pooled) and comparison."""
    lines = [
        "| seed | generator | comparison | n | AUC [95% CI] | p | advantage [95% CI] | p | "
        "null 95% | median distance | median isolation | wall s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        a, b = COMPARISONS[str(row["comparison"])]
        lines.append(
            f"| {row['seed']} | {row['generator']} | {a.upper()} vs {b.upper()} | "
            f"{row['n_members']}+{row['n_others']} | {interval(row, 'auc')} | "
            f"{p_text(row['auc_p'])} | {interval(row, 'advantage')} | "
            f"{p_text(row['advantage_p'])} | "
            f"{row['advantage_null95']:.3f} | "
            f"{row[f'median_distance_{a}']:.2f} / {row[f'median_distance_{b}']:.2f} | "
            f"{row[f'median_isolation_{a}']:.2f} / {row[f'median_isolation_{b}']:.2f} | "
            f"{', '.join(f'{w:.0f}' for w in row['wall_s'])} |"
        )
    lines += [
        "",
        "Scores: minus the distance to the nearest generated rare row (default: the shipped"
        " synthesizer; smote: SMOTE on the same training rows, the positive control). Wall s:"
        " planting and training. p: one-sided permutation"
        " p-value; null 95%: the advantage 1 audit in 20 of this size reads with nothing to find."
        " The bootstrap interval of the advantage (a maximum over thresholds) sits above 0 even"
        " then: read the advantage against null 95% and OUT vs FRESH. Median isolation: distance"
        " to the nearest real training rare row.",
    ]
    return "\n".join(lines)


def report(rows: Sequence[dict[str, object]], out: str | None) -> int:
    """Print the table; write the rows as JSON lines to ``out`` (when given)."""
    print(table_text(rows))
    if out:
        with Path(out).open("w") as handle:
            for row in rows:
                handle.write(json.dumps(row) + "\n")
    return 0
