"""A DataFrame given in Python read as a table: by a Parquet file's column rules, under the same
cap, each refusal one line; the caller's frame is never changed."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest
from support.docs import documented

from wgangp.data.read.data_frame import read_data_frame
from wgangp.errors import DataError


def _frame(rows: int = 200) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "merchant": pd.Categorical(rng.choice(["a", "b", "c"], rows)),
            "amount": rng.gamma(2.0, 50.0, rows),
            "when": pd.date_range("2024-03-01", periods=rows, freq="h", tz="Europe/Paris"),
            "tags": [["x", "y"]] * rows,
            "status": np.where(np.arange(rows) % 10 == 0, "bad", "good"),
        },
        index=np.arange(rows) * 7,  # an index of its own: never a column
    )


def test_columns_read_as_a_parquet_files_are(caplog) -> None:
    caplog.set_level(logging.INFO, "wgangp")
    frame = _frame()
    before = frame.copy()
    read = read_data_frame(frame, label="status", positive="bad", max_rows=10_000, seed=0)
    table = read.frame
    assert list(table.columns) == ["merchant", "amount", "when", "status"]  # the list column left
    assert "tags hold lists, structs or maps" in caplog.text
    assert not isinstance(table["merchant"].dtype, pd.CategoricalDtype)
    assert set(table["merchant"]) == {"a", "b", "c"}
    assert str(table["when"].dt.tz) == "Europe/Paris"  # in its zone, not moved to UTC
    assert list(table.index) == list(range(200))
    pd.testing.assert_frame_equal(frame, before)  # the caller's frame is untouched
    assert (read.read.rows, read.read.rare, read.read.capped) == (200, 20, False)


def test_the_cap_keeps_every_rare_row_and_a_subset_of_the_rest() -> None:
    read = read_data_frame(_frame(), label="status", positive="bad", max_rows=50, seed=0)
    assert read.read.capped and len(read.frame) == 70
    assert (read.frame["status"] == "bad").sum() == 20


@pytest.mark.parametrize(
    ("frame", "line"),
    [
        ([[1, 2]], "data must be a pandas DataFrame or a path, got list; e.g. "
         "wgangp.fit(pd.read_csv('transactions.csv'), label='is_fraud')"),
        (pd.DataFrame({0: [1], "status": ["bad"]}), "DataFrame: column names must be text, got "
         "0; name them (frame.columns = [...]) or flatten a MultiIndex"),
        (pd.DataFrame([[1, 2, "bad"]], columns=["a", "a", "status"]), "DataFrame: column(s) a "
         "appear more than once in the header; rename or drop the copies, every column needs "
         "its own name"),
    ],
)  # fmt: skip
def test_a_frame_that_is_no_table_is_one_line(frame, line) -> None:
    with pytest.raises(DataError) as err:
        read_data_frame(frame, label="status", positive=None, max_rows=100, seed=0)
    assert str(err.value) == line
    documented(line)


def test_dates_and_times_of_day_as_objects_read_as_a_parquet_files_do() -> None:
    """``datetime.date`` cells (Arrow's date32) as datetimes, ``datetime.time`` as their text."""
    import datetime as dt

    frame = pd.DataFrame(
        {
            "day": [dt.date(2024, 3, d) for d in range(1, 21)],
            "at": [dt.time(d % 24, 30) for d in range(20)],
            "status": ["bad"] * 5 + ["good"] * 15,
        }
    )
    table = read_data_frame(frame, label="status", positive="bad", max_rows=100, seed=0).frame
    assert pd.api.types.is_datetime64_any_dtype(table["day"])
    assert table["at"].iloc[3] == "03:30:00"


def test_a_column_of_mixed_types_reads_as_text_and_fits_the_schema_inferred_from_it(caplog) -> None:
    """1, 'a', 2.5, None and True in one object column: read as the text a CSV of the frame
    holds, so the schema inferred from the frame accepts the frame's own rows (it refused 80
    values: True and 1 are one value to pandas, two to the schema's levels)."""
    from support.tables import fraud_team_table

    from wgangp.data.schema.inference import infer_schema
    from wgangp.data.schema.validation import validate_table

    caplog.set_level(logging.INFO, "wgangp")
    frame = fraud_team_table(400, 60)
    cells = [1, "a", 2.5, None, True]
    frame["mixed"] = pd.Series([cells[i % 5] for i in range(400)], dtype=object)
    table = read_data_frame(frame, label="is_fraud", positive=None, max_rows=10_000, seed=0).frame
    assert table["mixed"].value_counts().to_dict() == {"1": 80, "a": 80, "2.5": 80, "True": 80}
    assert table["mixed"].isna().sum() == 80
    assert "column(s) mixed mix value types (numbers, text, booleans), read as their" in caplog.text
    schema = infer_schema(table, "is_fraud")
    assert set(schema.column("mixed").levels) == {"1", "a", "2.5", "True"}
    valid = validate_table(table, schema, source="DataFrame", min_rows_per_class=1)
    assert valid["mixed"].notna().sum() == 320
    assert frame["mixed"].tolist()[:5] == cells  # the caller's frame is untouched
