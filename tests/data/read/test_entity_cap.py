"""The cap by entity (``data.entity_share``): each customer kept or left whole by its own id, at a
public rate, so one customer more evicts no other's rows, as a row cap does."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support.docs import documented, one_line

from wgangp.config import DataConfig
from wgangp.data.prepare import prepare_data
from wgangp.data.private_table import PrivateReading
from wgangp.data.read.big_tables import EntityShare, cap_rows, read_big_table, table_files
from wgangp.data.read.table_reader import TABLE
from wgangp.errors import DataError


def _customers(n: int = 600, seed: int = 0) -> pd.DataFrame:
    """Customers of 1 to 8 rows; a tenth of them hold a fraud row."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(1, 9, n)
    who = np.repeat(np.arange(n), rows)
    fraudster = rng.random(n) < 0.1
    fraud = fraudster[who] & (rng.random(len(who)) < 0.5)
    return pd.DataFrame(
        {
            "customer": [f"c{c:04d}" for c in who],
            "amount": np.round(rng.lognormal(3, 1, len(who)), 2),
            "status": np.where(fraud, "fraud", "ok"),
        }
    )


def _kept(frame: pd.DataFrame, share: float, entity: str | None = "customer") -> set:
    read = cap_rows(frame, "status", "fraud", 10**9, 3, 1, by_entity=EntityShare(entity, share))
    return set(read.frame["customer"])


def test_every_fraud_customer_stays_and_the_others_at_the_share() -> None:
    frame = _customers()
    kept = _kept(frame, 0.3)
    fraud = set(frame.loc[frame["status"] == "fraud", "customer"])
    assert fraud <= kept
    others = set(frame["customer"]) - fraud
    assert len(kept - fraud) / len(others) == pytest.approx(0.3, abs=0.07)
    rows = cap_rows(frame, "status", "fraud", 10**9, 3, 1, by_entity=EntityShare("customer", 0.3))
    whole = frame[frame["customer"].isin(kept)]
    assert len(rows.frame) == len(whole)  # every kept customer with all its rows
    assert "each other entity with probability 0.3" in rows.read.describe("t.csv", "with fraud")


def test_one_customer_more_evicts_no_other_where_a_row_cap_does() -> None:
    """A customer of 500 rows added: under the cap by entity every other customer's fate is the
    same; under a row cap of about half the rest, the newcomer's rows push others' out."""
    frame = _customers()
    big = pd.DataFrame({"customer": "c9999", "amount": 12.5 + np.arange(500), "status": "ok"})
    more = pd.concat([frame, big], ignore_index=True)
    assert _kept(more, 0.3) - {"c9999"} == _kept(frame, 0.3)

    def row_capped(table: pd.DataFrame) -> set:
        read = cap_rows(table, "status", "fraud", len(frame) // 2, 3, 1)
        return set(read.frame["customer"])

    assert row_capped(more) - {"c9999"} != row_capped(frame)


def test_a_csv_over_the_cap_keeps_the_same_customers_as_the_rows_in_memory(tmp_path: Path) -> None:
    """The files' scan (DuckDB) and the rows in memory hash the same cells the same way."""
    frame = _customers(900)
    path = tmp_path / "tx.csv"
    frame.to_csv(path, index=False)
    share = EntityShare("customer", 0.25)
    read = read_big_table(
        table_files(str(path)), TABLE, label="status", positive="fraud", max_rows=10**9, seed=3,
        by_entity=share,
    )  # fmt: skip
    from wgangp.data.read.table_reader import read_cells

    in_memory = cap_rows(frame, "status", "fraud", 10**9, 3, 1, read_cells(path), by_entity=share)
    assert set(read.frame["customer"]) == set(in_memory.frame["customer"])
    assert read.read.entity_share == 0.25


def test_under_privacy_a_table_over_the_row_cap_is_refused_without_an_entity_share(
    tmp_path: Path,
) -> None:
    from wgangp.config import PrivacyConfig

    frame = _customers(900)
    path = tmp_path / "tx.csv"
    frame.to_csv(path, index=False)
    data = DataConfig(
        name="creditcard", path=str(path), label="status", positive="fraud", entity="customer",
        max_rows=500,
    )  # fmt: skip
    private = PrivateReading(PrivacyConfig(epsilon=3.0), 5, np.random.default_rng(0))
    with pytest.raises(DataError) as err:
        prepare_data(data, seed=0, launch_dir=tmp_path, reading=private)
    documented(one_line(err), path=path)
