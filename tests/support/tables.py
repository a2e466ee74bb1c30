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


#: A rare job title: fewer than 5 rows (ship.min_atom_rows) hold it.
RARE_JOB = "pilot"


def loans_table(rows: int = 1200, seed: int = 0) -> pd.DataFrame:
    """A loans table as people export it: ``Status`` (bad/good), an ``Age``, the day an account
    was ``opened`` written day-first (dd/mm/yyyy), an ``Amount`` written with thousands
    separators (``1,000``), a ``Fee`` in dollars (``$1,000.00``), a ``Job`` with gaps and a level
    3 rows hold, and the customer's ``Name``, ``Email`` and free-text ``Notes``."""
    rng = np.random.default_rng(seed)
    bad = rng.random(rows) < 0.3
    opened = pd.Timestamp("2022-01-01") + pd.to_timedelta(rng.integers(0, 730, rows), unit="D")
    amount = np.round(rng.lognormal(np.where(bad, 8.5, 8.0), 0.8))
    fee = np.round(rng.lognormal(np.where(bad, 6.0, 5.5), 1.0), 2)
    job = rng.choice(np.array(["fixed", "freelance", "partime"], dtype=object), rows)
    job[rng.random(rows) < 0.03] = None
    job[[5, 17, 29]] = RARE_JOB
    first = np.array([f"First{i}" for i in range(40)])
    last = np.array([f"Last{i}" for i in range(40)])
    name = np.char.add(np.char.add(rng.choice(first, rows), " "), rng.choice(last, rows))
    return pd.DataFrame(
        {
            "Status": np.where(bad, "bad", "good"),
            "Age": rng.integers(18, 75, rows),
            "opened": opened.strftime("%d/%m/%Y"),
            "Amount": [f"{x:,.0f}" for x in amount],
            "Fee": [f"${x:,.2f}" for x in fee],
            "Job": job,
            "Name": name,
            "Email": [
                f"customer{i}.{n.split()[1].lower()}@example.org" for i, n in enumerate(name)
            ],
            "Notes": [
                f"called on day {i % 97} about loan {i}, wants a callback" for i in range(rows)
            ],
        }
    )


def write_table(frame: pd.DataFrame, folder: Path, name: str = "loans.csv") -> Path:
    path = Path(folder) / name
    frame.to_csv(path, index=False)
    return path
