"""A column's fitted numbers released under differential privacy
(:mod:`wgangp.data.transform.private_column`): accurate where entities are many, never an
entity's own value, one Gaussian event per release."""

from __future__ import annotations

import dp_accounting
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from wgangp.data.schema.table_schema import ColumnSchema
from wgangp.data.transform.fitted_column import ALL_ROWS
from wgangp.data.transform.private_column import fit_private_column

ENTITIES = 20_000


def _fit(values, column, *, noise=1.0, seed=0, classes=None, entities=None):
    values = pd.Series(values)
    classes = np.zeros(len(values), int) if classes is None else classes
    entities = np.arange(len(values)) if entities is None else entities
    return fit_private_column(
        values, column, classes, entities,
        noise_multiplier=noise, rng=np.random.default_rng(seed), source="training rows",
    )  # fmt: skip


def test_a_number_many_entities_hold_is_scaled_to_a_normal() -> None:
    rng = np.random.default_rng(1)
    values = rng.lognormal(3.0, 1.0, ENTITIES)
    classes = (rng.random(ENTITIES) < 0.3).astype(int)
    fitted, events = _fit(values, ColumnSchema("amount", "continuous"), classes=classes)
    assert events == [dp_accounting.GaussianDpEvent(1.0)] * 3  # every row, then each class
    assert set(fitted.scales) == {ALL_ROWS, "0", "1"}
    z = fitted.scales[ALL_ROWS].forward(values[:, None])[:, 0]
    assert abs(z.mean()) < 0.05 and abs(z.std() - 1) < 0.05
    low, high = fitted.low_high()
    assert np.mean((values < low) | (values > high)) < 0.01
    assert fitted.fill == pytest.approx(np.median(values), rel=0.05)


def test_no_stored_number_is_a_lone_entitys_value() -> None:
    """One entity of 500 rows at 1e6 beside 2,000 entities near 100: neither its value nor any
    training value is a bound, the fill or a knot (they are grid edges and interpolations)."""
    rng = np.random.default_rng(2)
    common = np.round(rng.normal(100, 10, 2000), 2)
    values = np.concatenate([common, np.full(500, 1e6)])
    entities = np.concatenate([np.arange(2000), np.full(500, 2000)])
    fitted, _ = _fit(values, ColumnSchema("amount", "continuous"), entities=entities)
    stored = [*fitted.low_high(), float(fitted.fill)]
    stored += [k for scale in fitted.scales.values() for row in scale.quantiles for k in row]
    assert not set(stored) & set(values.tolist())
    assert fitted.low_high()[1] < 1e6  # one entity, however many rows, does not set the bound


def test_the_releases_are_noisy_and_seeded() -> None:
    values = np.random.default_rng(3).normal(50, 5, 3000)
    column = ColumnSchema("x", "continuous")
    first, _ = _fit(values, column, seed=0)
    again, _ = _fit(values, column, seed=0)
    other, _ = _fit(values, column, seed=1)
    assert first.scales[ALL_ROWS].quantiles == again.scales[ALL_ROWS].quantiles
    assert first.scales[ALL_ROWS].quantiles != other.scales[ALL_ROWS].quantiles


def test_a_datetime_is_read_on_equal_bins_between_released_bounds() -> None:
    """A year of timestamps: the knots fall within a day of the exact quantiles (the geometric
    grid alone resolves such numbers to years)."""
    rng = np.random.default_rng(4)
    seconds = 1.7e9 + rng.random(ENTITIES) * 365 * 86400
    values = pd.to_datetime(seconds, unit="s")
    fitted, events = _fit(values, ColumnSchema("day", "datetime"))
    assert len(events) == 4  # bounds, then every row and each class
    knots = np.array(fitted.scales[ALL_ROWS].quantiles)[:, 0]
    exact = np.quantile(seconds, fitted.scales[ALL_ROWS].references)
    assert np.max(np.abs(knots[1:-1] - exact[1:-1])) < 86400
    low, high = fitted.low_high()
    assert low <= seconds.min() + 30 * 86400 and high >= seconds.max() - 30 * 86400
    assert pd.Timestamp(fitted.fill)


def test_a_categoricals_fill_is_its_commonest_level() -> None:
    values = np.array(["a"] * 3000 + ["b"] * 9000 + ["c"] * 500, dtype=object)
    column = ColumnSchema("merchant", "categorical", levels=("a", "b", "c"))
    fitted, events = _fit(values, column, noise=2.0)
    assert fitted.fill == "b" and events == [dp_accounting.GaussianDpEvent(2.0)]
    assert fitted.scales == {}


def test_an_integer_columns_fill_is_whole_and_its_bounds_whole() -> None:
    values = np.random.default_rng(5).poisson(7, 5000)
    fitted, _ = _fit(values, ColumnSchema("count", "integer"))
    low, high = fitted.schema.bounds
    assert isinstance(low, int) and isinstance(high, int) and isinstance(fitted.fill, int)
    assert stats.percentileofscore(values, fitted.fill) == pytest.approx(50, abs=15)
