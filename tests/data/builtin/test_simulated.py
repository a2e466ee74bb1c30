"""The built-in simulated table: schema, determinism, plausible scales, and visible frauds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import support.creditcard as schema
from support.creditcard import SCHEMA

from wgangp.data.builtin.simulated import simulate_creditcard
from wgangp.data.schema.validation import validate_table
from wgangp.errors import ConfigError


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return simulate_creditcard(n_rows=60_000, fraud_rate=0.01, seed=1)


def test_has_the_kaggle_schema_and_passes_validation(table: pd.DataFrame) -> None:
    assert tuple(table.columns) == schema.COLUMNS
    assert (table[list(schema.FEATURES)].dtypes == np.float64).all()
    assert table[schema.LABEL].dtype == np.int64
    assert set(table[schema.LABEL].unique()) == {0, 1}
    assert len(table) == 60_000
    assert int(table[schema.LABEL].sum()) == 600
    validated = validate_table(table, SCHEMA, source="simulated", min_rows_per_class=2)
    pd.testing.assert_frame_equal(validated, table)


def test_values_are_in_range(table: pd.DataFrame) -> None:
    assert np.isfinite(table.to_numpy()).all()
    assert table[schema.TIME].between(0, 172_792).all()
    assert table[schema.TIME].is_monotonic_increasing
    amount = table[schema.AMOUNT]
    assert (amount >= 0).all()
    assert np.allclose(amount * 100, np.round(amount * 100))  # whole cents
    assert amount.max() > 2_000  # a long tail
    assert amount.median() < 50


def test_is_deterministic_by_seed() -> None:
    first = simulate_creditcard(n_rows=3_000, seed=7)
    pd.testing.assert_frame_equal(first, simulate_creditcard(n_rows=3_000, seed=7))
    assert not first.equals(simulate_creditcard(n_rows=3_000, seed=8))


def test_fraud_count_is_at_least_two_and_leaves_two_normals() -> None:
    assert int(simulate_creditcard(n_rows=100, fraud_rate=0.0)[schema.LABEL].sum()) == 2
    assert int(simulate_creditcard(n_rows=10_000)[schema.LABEL].sum()) == 17  # round(17.3)
    assert int((simulate_creditcard(n_rows=4, fraud_rate=0.9)[schema.LABEL] == 0).sum()) == 2


def test_normal_rows_have_plausible_heavy_tailed_scales(table: pd.DataFrame) -> None:
    normal = table[table[schema.LABEL] == 0]
    assert 1.6 < normal["V1"].std() < 2.2
    assert 0.25 < normal["V28"].std() < 0.4
    assert normal["V2"].kurt() > 3  # heavier than Gaussian (excess kurtosis 0)
    assert normal["V12"].corr(normal["V14"]) < -0.1
    assert normal["V2"].corr(normal[schema.AMOUNT]) < -0.1


def test_night_hours_are_quieter(table: pd.DataFrame) -> None:
    hour = (table[schema.TIME] % 86_400) // 3_600
    assert (hour.between(2, 5)).sum() < 0.5 * (hour.between(12, 15)).sum()


def test_frauds_look_different_from_normals(table: pd.DataFrame) -> None:
    fraud = table[table[schema.LABEL] == 1]
    normal = table[table[schema.LABEL] == 0]
    for column in ("V14", "V12", "V10", "V17"):
        assert fraud[column].mean() < normal[column].mean() - 3, column
    for column in ("V4", "V11"):
        assert fraud[column].mean() > normal[column].mean() + 2, column
    assert fraud["V14"].std() > 2 * normal["V14"].std()
    assert fraud[schema.AMOUNT].median() != normal[schema.AMOUNT].median()


def test_full_size_has_kaggles_row_and_fraud_counts() -> None:
    """The default's size (its speed is a benchmark's business, never a timed test's)."""
    frame = simulate_creditcard()
    assert len(frame) == 284_807
    assert int(frame[schema.LABEL].sum()) == 493


@pytest.mark.parametrize(("rows", "rate"), [(3, 0.1), (100, 1.0), (100, -0.1)])
def test_rejects_impossible_sizes(rows: int, rate: float) -> None:
    with pytest.raises(ConfigError) as err:
        simulate_creditcard(n_rows=rows, fraud_rate=rate)
    assert "\n" not in str(err.value)
