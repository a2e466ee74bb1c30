"""The draft of an undeclared table's schema under privacy (:mod:`wgangp.data.private_table`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from wgangp.data.private_table import DescriptionBudget, draft_columns, release_table
from wgangp.data.schema.cell_reading import read_cells
from wgangp.data.schema.description_votes import ColumnDescription
from wgangp.errors import DataError


def test_a_text_column_of_identifiers_alone_is_dropped_not_a_schema_error() -> None:
    """When the noisy identifier votes fall short of the threshold, a column whose every text
    is an identifier is released as text with no draft level: the run failed with 'column
    'card' is categorical but lists no levels' (the privacy audit, one draw in a few)."""
    readings = {
        "card": read_cells(pd.Series([f"jane{i}.doe@example.com" for i in range(40)])),
        "merchant": read_cells(pd.Series(["online", "travel"] * 20)),
    }
    kept = [
        ColumnDescription("card", "categorical"),
        ColumnDescription("merchant", "categorical"),
    ]
    columns = draft_columns(kept, readings)
    assert [c.name for c in columns] == ["merchant"]
    assert columns[0].levels == ("online", "travel")


def test_a_table_whose_every_level_is_too_rare_to_release_is_refused_in_one_line() -> None:
    """Every feature a text column whose levels each few entities hold: the selection releases
    none, so no feature is left. One line naming the fix, not the schema's 'keep at least one
    feature' (which names a file the user never wrote)."""
    rng = np.random.default_rng(0)
    customers = np.arange(400)
    frame = pd.DataFrame(
        {
            "customer_id": [f"C{c}" for c in customers],
            "shop": [f"shop {c // 2}" for c in customers],  # each level: two customers
            "status": np.where(rng.random(len(customers)) < 0.3, "fraud", "ok"),
        }
    )
    budget = DescriptionBudget(2.0, 30.0, 5, np.random.default_rng(1))
    with pytest.raises(DataError) as raised:
        release_table(
            frame, label="status", positive="fraud", entity="customer_id", val_fraction=0.15,
            test_fraction=0.15, seed=0, source="tx.csv", budget=budget,
        )  # fmt: skip
    assert str(raised.value).startswith(
        "tx.csv: under privacy.epsilon no column is released as a feature"
    )
    assert "fewer than 30 entities" in str(raised.value)
