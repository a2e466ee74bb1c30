"""A small credit table in the shared one's shape, for the privacy audits' tests (their canaries,
their placement, their attacks)."""

from __future__ import annotations

import numpy as np
import pandas as pd

LABEL, POSITIVE = "Status", "bad"


def loans(rows: int = 3000, seed: int = 0) -> pd.DataFrame:
    """A credit table in the shared one's shape: integers, floats with gaps and many zeros,
    categoricals with a rare level and gaps, ``Status`` bad/good."""
    rng = np.random.default_rng(seed)
    bad = rng.random(rows) < 0.3
    home = rng.choice(["owner", "rent", "parents", "other"], rows, p=[0.5, 0.3, 0.17, 0.03])
    home = home.astype(object)
    home[rng.random(rows) < 0.01] = np.nan
    income = np.round(rng.lognormal(np.where(bad, 4.7, 5.0), 0.5) / 5) * 5  # whole, as written
    income[rng.random(rows) < 0.05] = np.nan
    debt = np.where(rng.random(rows) < 0.8, 0.0, np.round(rng.lognormal(7, 1, rows) / 100) * 100)
    amount = (np.round(rng.lognormal(6.8, 0.4, rows) / 25) * 25).astype(np.int64)
    return pd.DataFrame(
        {
            LABEL: np.where(bad, POSITIVE, "good"),
            "Age": rng.integers(18, 70, rows),
            "Home": home,
            "Income": income,
            "Debt": debt,
            "Amount": amount,
            "Price": amount + np.round(rng.lognormal(5, 1, rows)).astype(np.int64),
            "Assets": np.where(rng.random(rows) < 0.5, 0.0, np.round(rng.lognormal(8, 1, rows))),
            "Records": rng.choice(["no", "yes"], rows, p=[0.8, 0.2]),
        }
    )


def features(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if c != LABEL]
