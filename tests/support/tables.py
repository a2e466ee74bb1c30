"""A small table of a fraud team's shape, written by the tests that need one: a categorical with
gaps, an integer count, an amount with gaps, a date, a text label ``is_fraud`` (yes/no)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

MERCHANTS = ("grocery", "travel", "online")


def fraud_team_table(rows: int = 400, frauds: int = 60, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    fraud = np.zeros(rows, dtype=bool)
    fraud[rng.choice(rows, frauds, replace=False)] = True
    merchant = rng.choice(MERCHANTS, rows, p=[0.6, 0.1, 0.3]).astype(object)
    merchant[fraud] = rng.choice(MERCHANTS, frauds, p=[0.1, 0.5, 0.4])
    merchant[rng.random(rows) < 0.05] = None
    count = rng.poisson(np.where(fraud, 6, 2)).astype(np.int64)
    amount = np.round(rng.lognormal(np.where(fraud, 5.0, 3.5), 1.0), 2)
    amount[rng.random(rows) < 0.1] = np.nan
    day = pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 90, rows), unit="D")
    return pd.DataFrame(
        {
            "merchant": merchant,
            "count": count,
            "amount": amount,
            "day": day.strftime("%Y-%m-%d"),
            "is_fraud": np.where(fraud, "yes", "no"),
        }
    )


def write_fraud_team_table(folder: Path, **kwargs) -> Path:
    path = Path(folder) / "transactions.csv"
    fraud_team_table(**kwargs).to_csv(path, index=False)
    return path
