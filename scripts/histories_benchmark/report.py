"""The figures table of docs/histories.md from ``results.jsonl``: per table, a row per system, mean
± standard deviation (n-1) over seeds; ``inf`` where a system generated nothing a measure reads
(it counts in the mean as inf); the seed's real references beside them; each row's budget."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

TITLES = {
    "wgangp": "wgangp history model",
    "rows": "wgangp row model, rows dealt at random",
    "par": "SDV PARSynthesizer",
    "mostly": "MOSTLY AI engine (sequential)",
    "dgan": "gretel DGAN",
    "real": "real training customers",
}
COLUMNS = (
    ("geo. mean", "fid.geometric_mean"),
    ("geo. mean of P1, P2, P4", "fid.geo_without_P3"),
    ("P1 timing", "fid.P1"),
    ("P2 bursts", "fid.P2"),
    ("P3 shared ids", "fid.P3"),
    ("P4 velocity", "fid.P4"),
    ("detection AUC", "detection"),
    ("AP synthetic", "utility.synthetic_ap"),
    ("AP real + synthetic fraud", "utility.augmented_ap"),
)


def summary(results: pd.DataFrame) -> str:
    """One markdown section per table."""
    # Runs of one table in several processes (a system each) repeat the seed's control: once.
    results = results.drop_duplicates(["table", "seed", "system"], keep="last").copy()
    # Without P3 (a system that makes no shared id reads inf there): the other three patterns.
    patterns = [results.get(f"fid.{p}") for p in ("P1", "P2", "P4")]
    if all(p is not None for p in patterns):
        logs = np.log(pd.concat(patterns, axis=1).apply(pd.to_numeric, errors="coerce"))
        results["fid.geo_without_P3"] = np.exp(logs.mean(axis=1, skipna=False))
    order = {system: i for i, system in enumerate(TITLES)}
    results = results.sort_values(
        "system", key=lambda s: s.map(order).fillna(len(order)), kind="stable"
    )
    sections = []
    for table, rows in results.groupby("table", sort=False):
        control = rows[rows["system"] == "control"]
        seeds = sorted(rows["seed"].unique())
        entities = rows.iloc[0]["entities"]
        lines = [
            f"### {table}",
            "",
            f"Seeds {', '.join(map(str, seeds))}; customers per seed (train, floor, test): "
            f"{entities['train']}, {entities['floor']}, {entities['test']}. Ratios: 1.0 = as far "
            "from the test customers as the floor customers are. Real-vs-real detection "
            f"(control): {_cell(control.get('detection'))}; a detector trained on the real "
            f"training customers: AP {_cell(control.get('utility.real_ap'))}.",
            "",
            "| system | " + " | ".join(title for title, _ in COLUMNS) + " | fit min | budget |",
            "|---|" + "---|" * (len(COLUMNS) + 2),
        ]
        for system, of_system in rows[rows["system"] != "control"].groupby("system", sort=False):
            lines.append(_line(system, of_system, seeds))
        sections.append("\n".join([*lines, ""]))
    return "\n".join(sections)


def _line(system: str, rows: pd.DataFrame, seeds: list) -> str:
    """A system's row; its seeds named where they are not all of the table's (a mean over seeds
    0-2 beside one of seed 0 is not a comparison of like with like)."""
    title = TITLES.get(system, system)
    own = sorted(rows["seed"].unique())
    if own != seeds:
        title += f" (seed{'s' if len(own) > 1 else ''} {', '.join(map(str, own))})"
    scored = rows[rows["status"] == "ok"]
    budget = _budget(system, rows)
    if scored.empty:
        notes = "; ".join(sorted({_short(n) for n in rows["note"].fillna("").astype(str)} - {""}))
        status = f"| {title} | {rows['status'].iloc[0]}: {notes} |"
        return status + " |" * len(COLUMNS) + f" {budget} |"
    runs = f" ({len(scored)} of {len(rows)} seeds)" if len(scored) < len(rows) else ""
    cells = [_cell(scored.get(key)) for _, key in COLUMNS]
    fit = [info.get("fit_s") for info in scored["info"] if isinstance(info, dict)]
    fit = [f for f in fit if f is not None]
    minutes = f"{np.mean(fit) / 60:.1f}" if fit else "—"
    return f"| {title}{runs} | " + " | ".join(cells) + f" | {minutes} | {budget} |"


def _budget(system: str, rows: pd.DataFrame) -> str:
    """What the system trained, from each record's budget (a cell, so that no figure is read
    without it): steps or epochs, MOSTLY's wall-clock cap, and the customers a peer fitted when
    fewer than all."""
    found: list[str] = []
    for budget in rows.get("budget", pd.Series(dtype=object)):
        if not isinstance(budget, dict) or system not in _BUDGETS:
            continue
        said = ", ".join(
            template.format(budget[key])
            for key, template in _BUDGETS[system]
            if budget.get(key)  # None in older records, 0 customers: all of them
        )
        if said and said not in found:
            found.append(said)
    return " / ".join(found) or "—"


#: Each system's budget fields, as the budget cell says them (``peer_customers`` 0: all).
_PEER_CUSTOMERS = ("peer_customers", "{:,} customers")
_BUDGETS = {
    "wgangp": (("wgangp_steps", "{:,} steps"),),
    "rows": (("rows_steps", "{:,} steps"),),
    "par": (("par_epochs", "{} epochs"), _PEER_CUSTOMERS),
    "mostly": (("mostly_epochs", "{} epochs"), ("mostly_minutes", "cap {:g} min"), _PEER_CUSTOMERS),
    "dgan": (("dgan_epochs", "{} epochs"), _PEER_CUSTOMERS),
}


def _cell(values: pd.Series | None) -> str:
    """mean ± std over seeds; ``inf`` if any seed is; ``—`` without a value."""
    if values is None:
        return "—"
    values = pd.to_numeric(values, errors="coerce").dropna()
    if values.empty:
        return "—"
    if np.isinf(values).any():
        return f"inf ({int(np.isinf(values).sum())} of {len(values)})"
    digits = 3 if values.abs().max() < 10 else 1
    spread = f" ± {np.std(values, ddof=1):.{digits}f}" if len(values) > 1 else ""
    return f"{values.mean():.{digits}f}{spread}"


def _short(note: str) -> str:
    """A subprocess timeout's note without its command line."""
    found = re.search(r"timed out after ([0-9.]+) seconds", note)
    return f"did not finish within {float(found.group(1)) / 60:.0f} min" if found else note
