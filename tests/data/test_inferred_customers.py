"""Issue 67, left after cases 1-4: without ``data.entity``, the customers an inferred schema's
identifier columns name are what the split, the transform and the evaluation count, not rows.

Counting rows, two customers' 16 fraud rows of the same odd amount were 16 entities: the amount
passed the k-entity rule and shipped in ``preprocessing.json`` as a point mass, and a customer's
rows were dealt to training, validation and test, so the held-out scores compared the model with
rows of customers it trained on.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from support.configs import compose
from support.customers import customers_table

from wgangp.config import to_config
from wgangp.data.entities import INFERRED_ENTITY
from wgangp.data.prepare import PreparedData, prepare_data
from wgangp.data.transform.table_transform import TableTransform

#: An amount no other row holds, given to 8 fraud rows of each of two customers: as rows, 16
#: (a point mass of the fraud class, at 1% of its rows and 5 of them); as customers, 2 (fewer
#: than ship.min_atom_rows: never shipped).
ODD_AMOUNT = 4321.09
ROWS_OF_ONE = 8
CUSTOMERS = 2


def _table(tmp_path: Path) -> Path:
    """The customers table (e-mails, phones, names: no account column) with the odd amount."""
    frame = customers_table(customers=150, rows=(12, 40), layout="exported")
    email = next(name for name in frame.columns if name.lower().startswith("contact"))
    fraud = frame["status"] == "fraud"
    counts = frame.loc[fraud, email].value_counts()
    for chosen in counts[counts >= ROWS_OF_ONE].index[:CUSTOMERS]:
        rows = frame.index[fraud & (frame[email] == chosen)][:ROWS_OF_ONE]
        frame.loc[rows, "amount"] = ODD_AMOUNT
    path = tmp_path / "customers.csv"
    frame.to_csv(path, index=False)
    return path


def _prepared(tmp_path: Path, path: Path) -> PreparedData:
    cfg = to_config(
        compose([f"data.path={path}", "data.label=status", "data.positive=fraud", "seed=0"])
    )
    return prepare_data(cfg.data, seed=0, launch_dir=tmp_path)


def _shipped(data: PreparedData, entities: np.ndarray | None) -> str:
    fitted_on = data.fit_rows.train
    return TableTransform.fit(
        fitted_on, data.schema, data.classes(fitted_on), entities=entities
    ).to_json()


def test_one_customers_rows_are_one_entity_to_the_transform(tmp_path: Path) -> None:
    path = _table(tmp_path)
    data = _prepared(tmp_path, path)
    assert data.entity == INFERRED_ENTITY
    fitted_on = data.fit_rows.train
    odd = fitted_on["amount"] == ODD_AMOUNT
    assert odd.sum() >= ROWS_OF_ONE  # one customer's at least: counting rows would ship it
    # Counting rows, the amount is a point mass of the shipped transform; counting customers not.
    assert str(ODD_AMOUNT) in _shipped(data, None)
    assert str(ODD_AMOUNT) not in _shipped(data, data.entities(fitted_on))
    assert INFERRED_ENTITY not in data.schema.names


def test_a_customers_rows_stay_in_one_part(tmp_path: Path) -> None:
    path = _table(tmp_path)
    data = _prepared(tmp_path, path)
    parts = [set(pd.unique(part[INFERRED_ENTITY])) for part in (data.train, data.val, data.test)]
    assert parts[0] and parts[2]
    assert not (parts[0] & parts[1]) and not (parts[0] & parts[2]) and not (parts[1] & parts[2])
