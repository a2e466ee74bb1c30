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


def loans_features(frame: pd.DataFrame, *names: str) -> pd.DataFrame:
    """The loans table's label ``Status`` and the named columns."""
    return frame[["Status", *names]]


def day_first_loans(rows: int = 1200, seed: int = 0) -> tuple[pd.DataFrame, pd.Series]:
    """The loans table's ``Status``, ``Age`` and day-first ``opened``, and those dates read."""
    frame = loans_features(loans_table(rows, seed), "Age", "opened")
    return frame, pd.to_datetime(frame["opened"], format="%d/%m/%Y")


# --- a card-transactions table: several rows per customer, their identifiers beside them -------

#: What one fraud customer's rows alone hold (a merchant and an amount), and what one fraud row
#: repeated exactly five times holds (a merchant, the largest amount, the latest time).
ONE_CUSTOMERS_MERCHANT, ONE_CUSTOMERS_AMOUNT = "Zanzibar Curios Ltd", 4321.09
REPEATED_MERCHANT, REPEATED_AMOUNT, REPEATED_TIME = "Quokka Kiosk", 98765.43, "2024-06-30 23:59:58"
REPEATS = 5
#: Fraud customers of a table a test trains on under privacy.epsilon with secret noise: the
#: training split's noisy count of them (noise about 11 at epsilon 3) must stay above 1, or the
#: run is refused; the default 32 (about 23 in training) leaves that to a few draws in a hundred.
PRIVATE_FRAUDSTERS = 96


def luhn_number(body: str) -> str:
    """``body`` with the check digit that makes it pass the Luhn test (a payment card's)."""
    digits = [int(d) for d in reversed(body)]
    total = sum(d if i % 2 else sum(divmod(2 * d, 10)) for i, d in enumerate(digits))
    return body + str((10 - total % 10) % 10)


def transactions_table(customers: int = 320, seed: int = 0, fraudsters: int = 32) -> pd.DataFrame:
    """Card transactions as a fraud team exports them: several rows per customer (``customer_id``,
    ``email``, ``card``, ``phone`` repeated on each), a ``merchant`` of 50, an ``amount``, the
    ``hour``, a timestamp ``ts`` and ``status`` (fraud/ok). ``fraudsters`` customers commit the
    frauds; one of them alone holds :data:`ONE_CUSTOMERS_MERCHANT` and
    :data:`ONE_CUSTOMERS_AMOUNT` (8 rows), and one fraud row is repeated :data:`REPEATS` times
    exactly."""
    rng = np.random.default_rng(seed)
    rows_each = 2 + rng.poisson(5, customers)
    who = np.repeat(np.arange(customers), rows_each)
    n = len(who)
    cheats = rng.choice(customers, fraudsters, replace=False)
    fraud = np.isin(who, cheats) & (rng.random(n) < 0.8)
    merchants = np.array([f"merchant_{i:02d}" for i in range(50)], dtype=object)
    merchant = merchants[rng.integers(0, 50, n)]
    amount = np.round(rng.lognormal(np.where(fraud, 5.5, 3.8), 0.7), 2)
    start = pd.Timestamp("2024-04-01")
    seconds = rng.integers(0, 80 * 86400, n)
    ts = start + pd.to_timedelta(seconds, unit="s")
    cards = [luhn_number(f"4{rng.integers(10**13, 10**14):014d}") for _ in range(customers)]
    frame = pd.DataFrame(
        {
            "customer_id": [f"C{c:05d}" for c in who],
            "email": [f"holder{c:03d}.{['kim', 'lee', 'ray'][c % 3]}@example.com" for c in who],
            "card": [" ".join(cards[c][i : i + 4] for i in range(0, 16, 4)) for c in who],
            "phone": [f"+1 555-{100 + c // 100:03d}-{1000 + c:04d}" for c in who],
            "merchant": merchant,
            "amount": amount,
            "hour": ts.hour,
            "ts": ts.strftime("%Y-%m-%d %H:%M:%S"),
            "status": np.where(fraud, "fraud", "ok"),
        }
    )
    one = int(cheats[0])
    extra = frame[frame["customer_id"] == f"C{one:05d}"].head(1)
    own = pd.concat([extra] * 8, ignore_index=True)
    own["merchant"], own["amount"], own["status"] = (
        ONE_CUSTOMERS_MERCHANT,
        ONE_CUSTOMERS_AMOUNT,
        "fraud",
    )
    own["ts"] = (start + pd.to_timedelta(rng.integers(0, 80 * 86400, 8), unit="s")).strftime(
        "%Y-%m-%d %H:%M:%S"
    )
    own["hour"] = pd.to_datetime(own["ts"]).dt.hour
    repeated = frame[frame["customer_id"] == f"C{int(cheats[1]):05d}"].head(1).copy()
    repeated["merchant"], repeated["amount"], repeated["status"] = (
        REPEATED_MERCHANT, REPEATED_AMOUNT, "fraud",
    )  # fmt: skip
    repeated["ts"], repeated["hour"] = REPEATED_TIME, 23
    frame = pd.concat([frame, own, *[repeated] * REPEATS], ignore_index=True)
    return frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)
