"""The DP figures' results (``scripts.dp_figures``): one figure per table, method, epsilon and
seed, their tables (detection with the run's privacy figures; utility) and their JSON lines."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from scripts.dp_peers import CAPTIONS, _escape

REFERENCES = ("marginals", "real")
REFERENCE_NAMES = {"marginals": "marginals (floor)", "real": "real rows (ceiling)"}


@dataclass
class Result:
    """One figure: wgangp (``epsilon`` None: without privacy) or a reference, a table and seed."""

    table: str
    method: str
    epsilon: float | None
    seed: int
    judge_on: str = "holdout"
    detection: float = float("nan")
    wall_s: float = float("nan")
    fit_s: float = float("nan")
    spent_epsilon: float = float("nan")
    delta: float = float("nan")
    train_rare: int = 0
    scored_rows: int = 0
    #: The share of drawn rows with a categorical level no training rare row holds (``other``).
    unseen_levels: float = float("nan")
    #: Distinct rows among those drawn (1: the generator collapsed onto one row).
    distinct_rows: int = 0
    #: Detection against the judged rows read in the model's released levels (a value its
    #: schema does not list is its ``other`` level, as the run read its own training rows):
    #: a private model cannot name a level its selection dropped. NaN: no released schema.
    detection_released: float = float("nan")
    note: str = ""
    overrides: list[str] = field(default_factory=list)
    privacy: dict[str, object] = field(default_factory=dict)
    run_id: str | None = None
    #: A private run's released levels per categorical: (levels, the other level).
    released: dict[str, object] = field(default_factory=dict)
    #: PR-AUC of a detector trained on the real other-class rows and these rare rows.
    utility: float = float("nan")


def _eps(value: float | None) -> str:
    return "none" if value is None else f"{value:g}"


def summarize(results: Iterable[Result], epsilons: list[float | None]) -> str:
    """The markdown table: a row per table, a column per epsilon and reference."""
    results = list(results)
    head = ["table", *(f"epsilon {_eps(e)}" for e in epsilons)]
    head += [REFERENCE_NAMES[name] for name in REFERENCES]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    tables = list(dict.fromkeys(r.table for r in results))
    for name in tables:
        mine = [r for r in results if r.table == name]
        cells = [
            _cell([r for r in mine if r.method == "wgangp" and r.epsilon == e], private=True)
            for e in epsilons
        ]
        cells += [_cell([r for r in mine if r.method == ref], private=False) for ref in REFERENCES]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    judged = sorted({r.judge_on for r in results})
    against = "the held-out rare rows" if judged == ["holdout"] else f"{'/'.join(judged)} rows"
    lines.append("")
    lines.append(
        f"Cells: balanced detection (boosting C2ST ROC-AUC against {against}; 0.5: can't tell) "
        "mean +- sd over seeds (n), the mean wall seconds of one fit and draw, and the epsilon "
        "spent (mean) at delta, from the run's privacy/* metrics; unseen levels: the share of "
        "drawn rows with a categorical level no training rare row holds (a released `other`)."
    )
    return "\n".join(lines)


def utility_table(results: Iterable[Result], epsilons: list[float | None]) -> str:
    """The utility table: a row per table, a column per epsilon and reference (mean +- sd)."""
    results = list(results)
    head = ["table", *(f"epsilon {_eps(e)}" for e in epsilons)]
    head += [REFERENCE_NAMES[name] for name in REFERENCES]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name in dict.fromkeys(r.table for r in results):
        mine = [r for r in results if r.table == name]
        groups = [[r for r in mine if r.method == "wgangp" and r.epsilon == e] for e in epsilons]
        groups += [[r for r in mine if r.method == ref] for ref in REFERENCES]
        cells = []
        for group in groups:
            values = np.array([r.utility for r in group if math.isfinite(r.utility)])
            if not len(values):
                cells.append("not run" if not group else "failed")
                continue
            sd = f" ± {values.std(ddof=1):.3f}" if len(values) > 1 else ""
            cells.append(f"{values.mean():.3f}{sd} (n={len(values)})")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join([*lines, "", CAPTIONS["utility"]])


def _cell(results: list[Result], *, private: bool) -> str:
    if not results:
        return "not run"
    scored = [r for r in results if math.isfinite(r.detection)]
    failed = [r for r in results if not math.isfinite(r.detection)]
    if not scored:
        return "failed: " + _escape(failed[-1].note)
    values = np.array([r.detection for r in scored])
    sd = float(values.std(ddof=1)) if len(values) > 1 else float("nan")
    text = f"{values.mean():.3f} ± {sd:.3f}" if math.isfinite(sd) else f"{values.mean():.3f}"
    text += f" (n={len(values)}"
    if private:
        wall = float(np.mean([r.wall_s for r in scored]))
        text += f"; {wall:.0f} s"
        spent = [r.spent_epsilon for r in scored if math.isfinite(r.spent_epsilon)]
        if spent:
            deltas = sorted({r.delta for r in scored if math.isfinite(r.delta)})
            text += f"; ε {np.mean(spent):.2f} at δ " + "/".join(f"{d:.0e}" for d in deltas)
    unseen = [r.unseen_levels for r in scored if math.isfinite(r.unseen_levels)]
    if unseen and np.mean(unseen) > 0:
        text += f"; {np.mean(unseen):.0%} unseen levels"
    in_levels = [r.detection_released for r in scored if math.isfinite(r.detection_released)]
    if in_levels:
        sd = float(np.std(in_levels, ddof=1)) if len(in_levels) > 1 else float("nan")
        spread = f" ± {sd:.3f}" if math.isfinite(sd) else ""
        text += f"; in its released levels {np.mean(in_levels):.3f}{spread}"
    collapsed = sum(r.note.startswith("collapsed") for r in scored)
    if collapsed:
        text += f"; {collapsed} collapsed onto one row"
    text += ")"
    if failed:
        text += f"; {len(failed)} of {len(results)} failed: " + _escape(failed[-1].note)
    return text


def read_results(paths: list[str]) -> list[Result]:
    """The results of earlier runs' ``--out`` files (null figures back to NaN)."""
    results = []
    for path in paths:
        for line in Path(path).read_text().splitlines():
            if line.strip():
                raw = json.loads(line)
                for key in (
                    "detection",
                    "wall_s",
                    "fit_s",
                    "spent_epsilon",
                    "delta",
                    "unseen_levels",
                    "detection_released",
                    "utility",
                ):
                    raw[key] = float("nan") if raw.get(key) is None else raw[key]
                results.append(Result(**raw))
    return results
