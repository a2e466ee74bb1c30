"""Canary rows for the privacy audits (``scripts.membership_audit``, ``scripts.one_run_audit``):
rows of the rare class no real row resembles, that a generator which learned them would
reproduce, built from the shared credit table (``Status``, rare class ``bad``).

Each canary starts from a different real complete ``bad`` row (every number inside its column's
0.5th to 99.5th percentile among the ``bad`` rows); three of its number columns are moved into a
rare end of that column among the ``bad`` rows (a value from the 0.5th to the 2nd percentile, or
from the 98th to the 99.5th, an end kept when at most 3% of the rows lie that far out: a debt of
0 is no rare end), and one categorical column is set to a level at most 5% of the ``bad`` rows
hold (and at least 10 rows of the table, so the inferred schema keeps it). A moved value is an
observed one (every value exists in the table), or, with ``tail_grid``, any whole number between
the end's least and largest observed values (a column whose rare rows are all whole; else its
observed ones): more canaries fit (the rule below caps each value at 4). Integers stay whole, no
canary equals a real row or another, and the canaries together lift no tail value to an atom (a
value 5 rare rows share ships as itself; so one canary's value never makes another's more
likely). That last rule bounds their number: on the credit table 139 on seed 0 with observed
values. A canary is about 2.5 times as far from its nearest real ``bad`` row as a real ``bad``
row is from its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from scripts.tables_benchmark.tables import TABLES

REPO = Path(__file__).resolve().parents[1]
TABLE = TABLES["credit_data"]
#: Percentiles of a number column's rare rows between which a canary's moved values are drawn:
#: the 0.5th to the 2nd, and the 98th to the 99.5th.
TAIL_QUANTILES = (0.005, 0.02, 0.98, 0.995)
#: A tail is rare when at most this share of the rare rows lie at or beyond its inner end.
MAX_TAIL_SHARE = 0.03
#: ship.min_atom_rows: a value this many rare rows share ships as itself (an atom).
ATOM_ROWS = 5
#: Number columns moved per canary, and the share of rare rows a canary's level may hold.
MOVED_NUMBERS = 3
MAX_LEVEL_SHARE = 0.05
#: A canary's level must be held by this many rows of the table (kept by the schema: >= k).
MIN_LEVEL_ROWS = 10


def tail_values(
    rare: pd.DataFrame, numbers: Sequence[str], grid: bool = False
) -> dict[str, list[np.ndarray]]:
    """Each number column's rare ends among ``rare`` rows: the distinct values observed from
    its 0.5th to its 2nd percentile, and from its 98th to its 99.5th (the outer ends: observed
    values at or beyond those points), each end kept when at most :data:`MAX_TAIL_SHARE` of the
    rows lie at or beyond its inner end (a column whose low end is a common value, such as a
    debt of 0, keeps only its high end). With ``grid``, an end of a column whose values are all
    whole is every whole number between its least and largest observed value."""
    tails: dict[str, list[np.ndarray]] = {}
    for name in numbers:
        values = rare[name].dropna().to_numpy(np.float64)
        q = [
            np.quantile(values, p, method="lower" if p < 0.5 else "higher") for p in TAIL_QUANTILES
        ]
        ends = (
            (values[(values >= q[0]) & (values <= q[1])], np.mean(values <= q[1])),
            (values[(values >= q[2]) & (values <= q[3])], np.mean(values >= q[2])),
        )
        kept = [np.unique(end) for end, share in ends if share <= MAX_TAIL_SHARE]
        if grid and np.all(values == np.round(values)):
            kept = [np.arange(end.min(), end.max() + 1) for end in kept]
        if kept:
            tails[name] = kept
    return tails


def rare_levels(
    table: pd.DataFrame, rare: pd.DataFrame, categoricals: Sequence[str]
) -> list[tuple[str, str]]:
    """(column, level) pairs a canary may take: levels at most :data:`MAX_LEVEL_SHARE` of the
    rare rows hold, held by at least :data:`MIN_LEVEL_ROWS` rows of the table."""
    chosen = []
    for name in categoricals:
        shares = rare[name].value_counts(normalize=True, dropna=True)
        counts = table[name].value_counts(dropna=True)
        for level, share in shares.items():
            if share <= MAX_LEVEL_SHARE and counts.get(level, 0) >= MIN_LEVEL_ROWS:
                chosen.append((name, str(level)))
    return chosen


def row_keys(frame: pd.DataFrame, columns: Sequence[str]) -> list[tuple]:
    """Each row as a hashable tuple (numbers rounded to 6 decimals, gaps as None)."""
    cells = []
    for name in columns:
        values = frame[name]
        if pd.api.types.is_numeric_dtype(values):
            rounded = np.round(values.to_numpy(np.float64), 6)
            cells.append([None if np.isnan(v) else float(v) for v in rounded])
        else:
            cells.append([None if pd.isna(v) else str(v) for v in values])
    return list(zip(*cells, strict=True))


def make_canaries(
    table: pd.DataFrame, label: str, positive: str, n: int, seed: int, tail_grid: bool = False
) -> pd.DataFrame:
    """``n`` canaries of the rare class (module doc), in the table's columns and dtypes.

    Each starts from a different real rare row. Together their tail values lift none to an
    atom: a value fewer than :data:`ATOM_ROWS` rare rows hold stays held by fewer than that
    many rare rows and canaries (else the canaries would ship it as a point mass, and one
    canary's value would raise another's chance of being matched)."""
    rng = np.random.default_rng([seed, 1])
    rare = table[table[label].astype(str) == positive]
    features = [c for c in table.columns if c != label]
    numbers = [c for c in features if pd.api.types.is_numeric_dtype(table[c])]
    categoricals = [c for c in features if c not in numbers]
    tails = tail_values(rare, numbers, tail_grid)
    levels = rare_levels(table, rare, categoricals)
    if len(tails) < MOVED_NUMBERS or not levels:
        raise ValueError(
            f"the table has {len(tails)} number columns with rare tails and {len(levels)} rare "
            f"levels; canaries need {MOVED_NUMBERS} and 1"
        )
    # Base rows: complete, every number inside its column's outer tail points among the rare
    # rows (so a canary holds no value beyond them, well inside the bounds the schema fits).
    inside = np.ones(len(rare), dtype=bool)
    for name in numbers:
        values = rare[name].dropna().to_numpy()
        low = np.quantile(values, TAIL_QUANTILES[0], method="lower")
        high = np.quantile(values, TAIL_QUANTILES[-1], method="higher")
        inside &= rare[name].between(low, high).to_numpy()
    bases = rare[inside].dropna().reset_index(drop=True)
    held = {name: rare[name].value_counts().to_dict() for name in numbers}
    planted: dict[tuple[str, float], int] = {}
    seen = set(row_keys(table, features))
    rows: list[pd.Series] = []
    columns = sorted(tails)
    for base in rng.permutation(len(bases)):
        if len(rows) == n:
            break
        row = bases.iloc[int(base)].copy()
        moved = [str(name) for name in rng.choice(columns, MOVED_NUMBERS, replace=False)]
        for name in moved:
            ends = tails[name]
            row[name] = rng.choice(ends[int(rng.integers(len(ends)))]).item()
        column, level = levels[int(rng.integers(len(levels)))]
        row[column] = level
        row = pd.DataFrame([row]).astype(table.dtypes.to_dict()).iloc[0]
        cells = [  # every value in a tail, moved or the base row's own
            (name, float(row[name]))
            for name, ends in tails.items()
            if any(float(row[name]) in end for end in ends)
        ]
        if any(
            held[name].get(value, 0) < ATOM_ROWS
            and held[name].get(value, 0) + planted.get((name, value), 0) + 1 >= ATOM_ROWS
            for name, value in cells
        ):
            continue
        key = row_keys(pd.DataFrame([row]), features)[0]
        if key not in seen:  # never a real row, nor another canary
            seen.add(key)
            rows.append(row)
            for cell in cells:
                planted[cell] = planted.get(cell, 0) + 1
    if len(rows) < n:
        raise ValueError(f"only {len(rows)} canaries from {len(bases)} base rows, {n} wanted")
    return pd.DataFrame(rows).astype(table.dtypes.to_dict()).reset_index(drop=True)
