"""A private run on a table with a date of birth: epsilon 1 and 270 customers used to end FAILED
(``column 'dob': bounds ['NaT', 'NaT'] are not dates``); the dates' bounds now come off a public
date grid (:data:`wgangp.data.transform.private_column.DATE_GRID`) and the run ships dates.

The noise is secret in a real run; the test replays key 0 (:data:`REPLAYABLE_ENV`), whose kind
votes keep ``dob`` (at epsilon 1 on 270 customers the threshold drops most columns, a run's own
draw decides which) and whose bounds were NaT before."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support.configs import TINY, compose

from wgangp.privacy.randomness import REPLAYABLE_ENV
from wgangp.serving.synthesizer import Synthesizer

CUSTOMERS = 270


def customers_table(seed: int = 0) -> pd.DataFrame:
    """270 customers of 3 to 12 card payments each, a third of them with frauds, a birth date
    per customer and a payment date per row."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(3, 13, CUSTOMERS)
    who = np.repeat(np.arange(CUSTOMERS), rows)
    born = pd.Timestamp("1940-01-01") + pd.to_timedelta(rng.integers(0, 60 * 365, CUSTOMERS), "D")
    fraudster = rng.random(CUSTOMERS) < 1 / 3
    fraud = fraudster[who] & (rng.random(len(who)) < 0.7)
    paid = pd.Timestamp("2024-03-01") + pd.to_timedelta(rng.integers(0, 90 * 86400, len(who)), "s")
    return pd.DataFrame(
        {
            "customer_id": [f"C{c:04d}" for c in who],
            "merchant": rng.choice(["grocery", "online", "travel"], len(who)),
            "amount": np.round(rng.lognormal(np.where(fraud, 5.0, 3.5), 0.8), 2),
            "dob": born[who].strftime("%Y-%m-%d"),
            "paid": paid.strftime("%Y-%m-%d %H:%M:%S"),
            "status": np.where(fraud, "fraud", "ok"),
        }
    )


@pytest.mark.slow
def test_epsilon_one_trains_on_a_table_with_birth_dates(tmp_path: Path, monkeypatch) -> None:
    from wgangp.train import train

    monkeypatch.setenv(REPLAYABLE_ENV, "0")
    table = tmp_path / "customers.csv"
    customers_table().to_csv(table, index=False)
    overrides = [o for o in TINY if not o.startswith("data")] + [
        f"data.path={table}", "data.label=status", "data.positive=fraud",
        "data.entity=customer_id", "privacy.epsilon=1", "seed=3",
        f"tracking.uri=sqlite:///{tmp_path / 'mlflow.db'}",
    ]  # fmt: skip
    result = train(compose(overrides), output_dir=tmp_path / "out", launch_dir=tmp_path)
    assert result.status == "FINISHED"
    rows = Synthesizer.load(Path(result.synthesizer_dir)).sample(200, seed=0)
    assert "dob" in rows.columns
    for column in rows.columns.intersection(["dob", "paid"]):
        assert pd.api.types.is_datetime64_any_dtype(rows[column])
        assert rows[column].notna().all()
        assert rows[column].between(pd.Timestamp("1700-01-01"), pd.Timestamp("2250-01-01")).all()
