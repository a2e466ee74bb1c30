"""Mean and spread over seeds, per table and method, as the markdown table the doc holds."""

from __future__ import annotations

import numpy as np
import pandas as pd

TITLES = {
    "default": "default model",
    "smote": "SMOTE(-NC)",
    "copula": "Gaussian copula",
    "marginals": "independent marginals",
    "ctgan": "CTGAN 0.12.1",
    "control": "real rows (control)",
}
FORM = ("invalid_category", "fractional_integer", "out_of_bounds")


def summary(results: pd.DataFrame) -> str:
    """One markdown section per table: a row per method, mean ± std (n-1) over seeds."""
    sections = []
    for table, rows in results.groupby("table", sort=False):
        seeds = sorted(rows["seed"].unique())
        held_out = rows.drop_duplicates("seed")["real_rows"].astype(int).tolist()
        lines = [
            f"### {table}",
            "",
            f"Seeds {', '.join(map(str, seeds))}; real held-out rare rows per seed (each "
            "detection compares them with as many generated rows): "
            f"{', '.join(map(str, held_out))}.",
            "",
            "| method | detection (C2ST AUC) | near copies | exact copies | wall s | "
            "form: bad rows / gap points |",
            "|---|---|---|---|---|---|",
        ]
        for method, of_method in rows.groupby("method", sort=False):
            lines.append(_line(method, of_method))
        lines += ["", *_lifts(rows), *_confirmed(rows), *_total(rows), ""]
        sections.append("\n".join(lines))
    return "\n".join(sections)


def _line(method: str, rows: pd.DataFrame) -> str:
    title = TITLES.get(method, method)
    scored = rows[rows["detection"].notna()] if "detection" in rows else rows.iloc[:0]
    if scored.empty:
        notes = "; ".join(sorted(set(rows["note"].fillna("").astype(str)) - {""}))
        return f"| {title} | not run: {notes or 'no figures'} | | | | |"
    runs = f" ({len(scored)} of {len(rows)} seeds)" if len(scored) < len(rows) else ""
    bad = scored[[c for c in FORM if c in scored]].sum(axis=1) if method != "control" else None
    form = "" if bad is None else f"{bad.max():.3f} / {scored['gap_share_points'].max():.1f}"
    return (
        f"| {title}{runs} | {_mean_std(scored['detection'])} | "
        f"{_mean_std(scored.get('near_copies'))} | {_mean(scored.get('exact_copies'), 1)} | "
        f"{_mean(scored.get('wall_s'), 0)} | {form} |"
    )


def _lifts(rows: pd.DataFrame) -> list[str]:
    """The default's detection minus each baseline's, paired by seed (negative: harder to tell
    from real than the baseline)."""
    wide = rows.pivot_table(index="seed", columns="method", values="detection")
    if "default" not in wide:
        return []
    out = []
    for method in ("smote", "copula", "marginals", "ctgan"):
        if method in wide:
            lift = (wide["default"] - wide[method]).dropna()
            if len(lift):
                out.append(f"{TITLES[method]} {_mean_std(lift)}")
    return ["Detection of the default minus each baseline's, paired by seed: " + "; ".join(out)]


def _confirmed(rows: pd.DataFrame) -> list[str]:
    """Judged on a held-out fourth split, the same rows on the run's test split (its own held-out
    rare rows): the split that confirms a choice made on the holdout."""
    if "detection_test" not in rows or rows["detection_test"].dropna().empty:
        return []
    found = []
    for method, of_method in rows.groupby("method", sort=False):
        detection = _mean_std(of_method["detection_test"])
        near = _mean_std(of_method.get("near_copies_test"))
        found.append(f"{TITLES.get(method, method)} {detection} (near copies {near})")
    return ["", "On the run's test split (detection): " + "; ".join(found)]


def _total(rows: pd.DataFrame) -> list[str]:
    if "seed_total_s" not in rows:
        return []
    per_seed = rows.drop_duplicates("seed")["seed_total_s"].dropna() / 60
    if per_seed.empty:
        return []
    return [
        "",
        f"Whole command on this table: {per_seed.mean():.1f} min per seed "
        f"(max {per_seed.max():.1f}), {per_seed.sum():.1f} min in all.",
    ]


def _mean_std(values: pd.Series | None) -> str:
    if values is None or values.dropna().empty:
        return "—"
    values = values.dropna()
    spread = f" ± {np.std(values, ddof=1):.3f}" if len(values) > 1 else ""
    return f"{values.mean():.3f}{spread}"


def _mean(values: pd.Series | None, digits: int) -> str:
    if values is None or values.dropna().empty:
        return "—"
    return f"{values.dropna().mean():.{digits}f}"
