"""A table built here, whose numbers have point masses as lending tables do: the benchmark's and the
tests' check that each column's repeated values come back exactly, at their share.

``lender_table`` mimics a mortgage-lending table (none of its rows is real): an unemployment rate
taken from a lookup of 10 values, a debt-to-income ratio whose favourite values 0.33 and 0.30 hold
a quarter of the rows, a housing ratio tied to it with its own favourite 0.25, a loan-to-value
ratio capped at 0.95, a cash reserve that is exactly 0 for nearly half the applicants, a credit
score of 1 to 6, and a self-employed flag; the label ``deny`` (yes: about 15%) depends on them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: The rates the unemployment column takes (a lookup by region), and how often.
RATES = (1.8, 2.2, 3.1, 3.2, 3.9, 4.3, 5.3, 6.1, 7.5, 10.6)
RATE_SHARES = (0.06, 0.1, 0.16, 0.14, 0.16, 0.12, 0.1, 0.07, 0.05, 0.04)
#: The point masses of the ratio columns and the loan-to-value cap.
FAVOURITE_DIR = {0.33: 0.18, 0.30: 0.08}
FAVOURITE_HIR = 0.25
LVR_CAP = 0.95


def lender_table(rows: int = 6000, seed: int = 0) -> pd.DataFrame:
    """``rows`` applicants; deterministic by ``seed``."""
    rng = np.random.default_rng(seed)
    rate = rng.choice(RATES, rows, p=RATE_SHARES)
    dir_ = np.round(np.clip(rng.beta(4, 9, rows), 0.02, 0.95), 4)
    pick = rng.random(rows)
    start = 0.0
    for value, share in FAVOURITE_DIR.items():
        dir_[(pick >= start) & (pick < start + share)] = value
        start += share
    hir = np.round(dir_ * rng.uniform(0.55, 0.95, rows), 4)
    hir[rng.random(rows) < 0.1] = FAVOURITE_HIR
    lvr = np.round(np.minimum(rng.beta(6, 2.5, rows) * 1.05, LVR_CAP), 3)
    cash = np.round(rng.lognormal(8.5, 1.1, rows), 2)
    cash[rng.random(rows) < 0.45] = 0.0
    score = np.clip(np.round(rng.gamma(2.0, 0.9, rows)) + 1, 1, 6).astype(np.int64)
    self_employed = np.where(rng.random(rows) < 0.12, "yes", "no")
    risk = (
        4.0 * (dir_ - 0.3)
        + 2.5 * (lvr - 0.75)
        + 0.18 * (rate - 4.0)
        + 0.35 * (score - 2.5)
        - 0.4 * (cash > 0)
        + 0.5 * (self_employed == "yes")
    )
    deny = rng.random(rows) < 1.0 / (1.0 + np.exp(-(risk - 1.9)))
    return pd.DataFrame(
        {
            "dir": dir_,
            "hir": hir,
            "lvr": lvr,
            "uria": rate,
            "cash": cash,
            "ccs": score,
            "self_employed": self_employed,
            "deny": np.where(deny, "yes", "no"),
        }
    )


#: The columns and values the checks follow: value -> the column it is a point mass of.
POINT_MASSES = {
    "uria": RATES,
    "dir": tuple(FAVOURITE_DIR),
    "hir": (FAVOURITE_HIR,),
    "lvr": (LVR_CAP,),
    "cash": (0.0,),
}
