"""``coarsen``: a quasi-identifier read, trained on and generated coarse. A date of birth as its
year, coordinates to 0.1 degrees: neither the validated rows, nor the transform's stored numbers,
nor the generated rows hold an exact value; an edited schema's ``coarsen`` is checked in one line.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from support.audit import found_values
from support.docs import documented

from wgangp.data.schema.inference import infer_schema
from wgangp.data.schema.table_schema import ColumnSchema, TableSchema
from wgangp.data.schema.validation import validate_table
from wgangp.data.transform.table_transform import TableTransform
from wgangp.errors import ConfigError


def _customers(rows: int = 600, seed: int = 0) -> pd.DataFrame:
    """Customers' dates of birth (never a 1 January), home coordinates, an amount, a label."""
    rng = np.random.default_rng(seed)
    born = pd.Timestamp("1950-01-02") + pd.to_timedelta(rng.integers(0, 18000, rows), unit="D")
    born = born.where(born.dayofyear != 1, born + pd.Timedelta(days=1))
    return pd.DataFrame(
        {
            "birth_date": born.strftime("%Y-%m-%d"),
            "home_lat": np.round(48.85 + rng.normal(0, 0.3, rows), 5),
            "amount": np.round(rng.lognormal(3, 1, rows), 2),
            "y": np.where(rng.random(rows) < 0.2, "bad", "good"),
        }
    )


def test_a_birth_date_and_coordinates_train_and_come_back_coarse() -> None:
    frame = _customers()
    schema = infer_schema(frame, "y", "bad")
    assert schema.column("birth_date").coarsen == "year"
    assert schema.column("home_lat").coarsen == 0.1
    assert schema.column("amount").coarsen is None
    rows = validate_table(frame, schema, source="t", min_rows_per_class=1)
    born = pd.to_datetime(rows["birth_date"])
    assert ((born.dt.month == 1) & (born.dt.day == 1)).all()
    np.testing.assert_allclose(rows["home_lat"] * 10, np.round(rows["home_lat"] * 10), atol=1e-9)
    fitted = TableTransform.fit(rows, schema, schema.classes(rows["y"]))
    stored = fitted.to_json()
    seconds = (pd.to_datetime(frame["birth_date"]) - pd.Timestamp(0)).dt.total_seconds()
    assert found_values(stored, {f"{int(s)}" for s in seconds}) == set()
    assert found_values(stored, {f"{v}" for v in frame["home_lat"] if len(f"{v}") > 6}) == set()
    rng = np.random.default_rng(1)
    # Far tails too: values clipped into the bounds stay on the grid (the bounds are on it).
    back = fitted.inverse(rng.normal(0, 5, (500, fitted.width)), np.ones(500, dtype=np.int64))
    assert [round(b * 10, 9) % 1 for b in schema.column("home_lat").bounds] == [0, 0]
    generated = pd.to_datetime(back["birth_date"])
    assert ((generated.dt.month == 1) & (generated.dt.day == 1)).all()
    lat = back["home_lat"].to_numpy(np.float64)
    np.testing.assert_allclose(lat * 10, np.round(lat * 10), atol=1e-9)


def test_a_date_decades_before_the_others_is_a_birth_date() -> None:
    """Named ``x``: the shape says so (every customer born 16 years or more before the first
    transaction); a date of the same span as the transactions is not one."""
    frame = _customers().rename(columns={"birth_date": "x"})
    frame["ts"] = (pd.Timestamp("2024-03-01") + pd.to_timedelta(np.arange(600), unit="h")).astype(
        str
    )
    assert infer_schema(frame, "y", "bad").column("x").coarsen == "year"
    frame["x"] = (
        pd.Timestamp("2010-01-01") + pd.to_timedelta(np.arange(600) * 7, unit="D")
    ).astype(str)
    assert infer_schema(frame, "y", "bad").column("x").coarsen is None


def test_the_schema_round_trips_and_an_edit_is_checked() -> None:
    schema = infer_schema(_customers(), "y", "bad")
    text = schema.to_yaml()
    assert "coarsen: year" in text and "coarsen: 0.1" in text
    assert TableSchema.from_yaml(text) == schema
    for column, message in (
        (
            {"name": "dob", "kind": "datetime", "coarsen": "month"},
            "column 'dob': coarsen of a datetime column must be year (a date of birth kept as "
            "its year), got 'month'",
        ),
        (
            {"name": "lat", "kind": "continuous", "coarsen": -1},
            "column 'lat': coarsen of a number column must be a step > 0 (0.1 keeps coordinates "
            "to about 11 km), got -1",
        ),
        (
            {"name": "memo", "kind": "categorical", "levels": ["a"], "coarsen": 0.1},
            "column 'memo' is categorical; coarsen is an option of datetime and number columns: "
            "delete it",
        ),
    ):
        with pytest.raises(ConfigError) as err:
            ColumnSchema.from_dict(column, "columns entry 1")
        assert str(err.value) == message
        documented(f"<file>: {message}")


def test_values_clipped_into_fitted_bounds_stay_coarse() -> None:
    """Bounds fitted on the rows (an edited schema without them, a private run's) lie off the
    grid; generated values clipped into them come back on it, inside them."""
    frame = _customers()
    schema = infer_schema(frame, "y", "bad")
    columns = tuple(replace(c, bounds=None) if c.coarsen is not None else c for c in schema.columns)
    schema = replace(schema, columns=columns)
    rows = validate_table(frame, schema, source="t", min_rows_per_class=1)
    fitted = TableTransform.fit(rows, schema, schema.classes(rows["y"]))
    rng = np.random.default_rng(2)
    back = fitted.inverse(rng.normal(0, 8, (400, fitted.width)), np.zeros(400, dtype=np.int64))
    born = pd.to_datetime(back["birth_date"])
    assert ((born.dt.month == 1) & (born.dt.day == 1)).all()
    lat = back["home_lat"].to_numpy(np.float64)
    np.testing.assert_allclose(lat * 10, np.round(lat * 10), atol=1e-9)
    low, high = next(c for c in fitted.columns if c.name == "home_lat").low_high()
    assert low <= lat.min() and lat.max() <= high
