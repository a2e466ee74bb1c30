"""The benchmark's own transaction simulator: customers with daily rhythms and favourite
terminals, card-testing bursts, and compromised terminals whose victims are cashed out later.
None of its rows is real; every figure it feeds is the behavior written here, on purpose:

- normal rows: each customer a Poisson process (its own rate per day), hours around midday and the
  evening, a few favourite terminals near home (80% of rows) and any terminal otherwise, amounts
  lognormal around the customer's own median;
- card testing (fraud): a stolen card number used in a burst of 3 to 8 card-not-present rows within
  10 to 50 minutes, a few small amounts then large ones, at one of a few online merchants;
- compromised terminals (fraud): a terminal skims every card used on it for a week (those rows are
  fraud), and each victim's card is cashed out 1 to 5 days later in a burst of 2 to 4 rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

START = pd.Timestamp("2025-03-01")
ONLINE_MERCHANTS = 12


def simulated_transactions(
    customers: int = 3000,
    terminals: int = 1500,
    days: int = 30,
    seed: int = 0,
    *,
    testing_share: float = 0.06,
    compromised_per_week: int = 6,
) -> pd.DataFrame:
    """Columns ``customer_id, ts, amount, terminal_id, channel, card_type, is_fraud`` sorted by
    time; deterministic by ``seed``."""
    rng = np.random.default_rng(seed)
    rate = rng.lognormal(np.log(0.8), 0.6, customers)  # rows per day
    median = rng.lognormal(np.log(35.0), 0.7, customers)
    card = rng.choice(np.array(["debit", "credit", "prepaid"]), customers, p=[0.6, 0.33, 0.07])
    home = rng.integers(0, terminals, customers)
    favourites = (home[:, None] + rng.integers(-15, 16, (customers, 4))) % terminals
    counts = rng.poisson(rate * days)
    who = np.repeat(np.arange(customers), counts)
    n = len(who)
    day = rng.integers(0, days, n)
    evening = rng.random(n) < 0.4
    hour = np.where(evening, rng.normal(19.5, 1.8, n), rng.normal(12.5, 2.8, n)) % 24
    seconds = day * 86400.0 + hour * 3600.0
    local = rng.random(n) < 0.8
    terminal = np.where(
        local, favourites[who, rng.integers(0, 4, n)], rng.integers(0, terminals, n)
    )
    amount = median[who] * rng.lognormal(0.0, 0.5, n)
    rows = {
        "customer": who,
        "seconds": seconds,
        "amount": amount,
        "terminal": terminal.astype(np.int64),
        "online": rng.random(n) < 0.25,
        "fraud": np.zeros(n, dtype=bool),
    }
    frame = pd.DataFrame(rows)
    frame = _skimmed(frame, rng, terminals, days, compromised_per_week)
    frame = pd.concat([frame, _card_testing(rng, customers, days, median, testing_share)])
    frame = pd.concat([frame, _cash_outs(frame, rng, median, terminals)])
    frame = frame.sort_values(["seconds", "customer"], kind="stable").reset_index(drop=True)
    terminal_ids = np.where(
        frame["terminal"] >= terminals,
        "M" + (frame["terminal"] - terminals).astype(str).str.zfill(3),
        "T" + frame["terminal"].astype(str).str.zfill(5),
    )
    return pd.DataFrame(
        {
            "customer_id": "C" + frame["customer"].astype(str).str.zfill(6),
            "ts": START + pd.to_timedelta(frame["seconds"].round(), unit="s"),
            "amount": frame["amount"].round(2),
            "terminal_id": terminal_ids,
            "channel": np.where(frame["online"], "CNP", "CP"),
            "card_type": card[frame["customer"].to_numpy()],
            "is_fraud": frame["fraud"].astype(int),
        }
    )


def _skimmed(
    frame: pd.DataFrame, rng: np.random.Generator, terminals: int, days: int, per_week: int
) -> pd.DataFrame:
    """Mark card-present rows at compromised terminals during their week as fraud."""
    weeks = max(1, days // 7)
    for week in range(weeks):
        start = (week * 7 + rng.uniform(0, 3)) * 86400.0
        for terminal in rng.choice(terminals, per_week, replace=False):
            hit = (
                (frame["terminal"] == terminal)
                & ~frame["online"]
                & frame["seconds"].between(start, start + 7 * 86400.0)
            )
            frame.loc[hit, "fraud"] = True
    return frame


def _card_testing(
    rng: np.random.Generator, customers: int, days: int, median: np.ndarray, share: float
) -> pd.DataFrame:
    """Bursts of card-not-present rows: small test amounts, then large ones."""
    victims = rng.choice(customers, max(1, int(share * customers)), replace=False)
    parts = []
    for victim in victims:
        size = int(rng.integers(3, 9))
        start = rng.uniform(0, days - 1) * 86400.0
        offsets = np.sort(rng.uniform(0, rng.uniform(600, 3000), size))
        tests = int(rng.integers(1, 3))
        amount = np.where(
            np.arange(size) < tests,
            rng.uniform(0.5, 3.0, size),
            median[victim] * rng.uniform(3.0, 8.0, size),
        )
        parts.append(
            pd.DataFrame(
                {
                    "customer": victim,
                    "seconds": start + offsets,
                    "amount": amount,
                    "terminal": 10**6 + int(rng.integers(0, ONLINE_MERCHANTS)),
                    "online": True,
                    "fraud": True,
                }
            )
        )
    frame = pd.concat(parts, ignore_index=True)
    return frame


def _cash_outs(
    frame: pd.DataFrame, rng: np.random.Generator, median: np.ndarray, terminals: int
) -> pd.DataFrame:
    """Each skimmed card cashed out 1 to 5 days after its first skimmed row, 2 to 4 rows within
    an hour or two, at terminals anywhere."""
    skimmed = frame[frame["fraud"] & (frame["terminal"] < terminals)]
    firsts = skimmed.groupby("customer")["seconds"].min()
    parts = []
    for victim, first in firsts.items():
        size = int(rng.integers(2, 5))
        start = first + rng.uniform(1, 5) * 86400.0
        parts.append(
            pd.DataFrame(
                {
                    "customer": victim,
                    "seconds": start + np.sort(rng.uniform(0, 5400, size)),
                    "amount": median[victim] * rng.uniform(2.0, 6.0, size),
                    "terminal": rng.integers(0, terminals, size),
                    "online": False,
                    "fraud": True,
                }
            )
        )
    return pd.concat(parts, ignore_index=True) if parts else frame.iloc[:0]
