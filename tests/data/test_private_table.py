"""The draft of an undeclared table's schema under privacy (:mod:`wgangp.data.private_table`)."""

from __future__ import annotations

import pandas as pd

from wgangp.data.private_table import draft_columns
from wgangp.data.schema.cell_reading import read_cells
from wgangp.data.schema.description_votes import ColumnDescription


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
