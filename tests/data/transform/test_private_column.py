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
    # the bounds, then the knots of every row and of each class
    assert events == [dp_accounting.GaussianDpEvent(1.0)] * 4
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


def _numbers(payload) -> list[float]:
    """Every number in a JSON payload."""
    if isinstance(payload, dict):
        return [n for value in payload.values() for n in _numbers(value)]
    if isinstance(payload, list):
        return [n for value in payload for n in _numbers(value)]
    return [float(payload)] if isinstance(payload, int | float) else []


def test_a_private_transform_stores_no_training_value_and_round_trips() -> None:
    """The fraud team's table fitted under DP: every number of its stored JSON is a release
    (none equals a training amount, count or day held by fewer than 5 entities), the events are
    one per release, and rows go through and back."""
    import json
    from dataclasses import replace

    from support.tables import fraud_team_table

    from wgangp.data.schema.column_codes import to_seconds
    from wgangp.data.schema.inference import infer_schema
    from wgangp.data.schema.validation import validate_table
    from wgangp.data.transform.private_column import PrivateFit
    from wgangp.data.transform.table_transform import TableTransform

    frame = fraud_team_table(3000, frauds=600, seed=1)
    inferred = infer_schema(frame, "is_fraud")
    table = validate_table(frame, inferred, source="fraud team", min_rows_per_class=1)
    # Bounds as a private run's schema holds them: none (inference fits them on the rows).
    columns = tuple(replace(c, bounds=None, clip=True) for c in inferred.columns)
    schema = replace(inferred, columns=columns, label_counts=(), rows=None)
    classes = schema.classes(table[schema.label])
    private = PrivateFit(noise_multiplier=2.0, rng=np.random.default_rng(0))
    fitted = TableTransform.fit(table, schema, classes, dp=private)
    kinds = [c.kind for c in schema.features]
    expected = sum(1 if k == "categorical" else 4 for k in kinds)  # bounds, 3 trees
    assert len(private.events) == expected
    stored = set(_numbers(json.loads(fitted.to_json())))
    values = [table["amount"].dropna(), table["count"].dropna()]
    values.append(pd.Series(to_seconds(pd.to_datetime(table["day"]).dropna())))
    counts = pd.concat(values).value_counts()
    rare = {float(v) for v, held in counts.items() if held < 5}
    assert rare and not stored & rare
    back = TableTransform.from_json(fitted.to_json())
    x = back.transform(table, classes)
    assert np.isfinite(x).all()
    assert list(back.inverse(x, classes).columns) == [c.name for c in schema.features]


def test_a_few_hundred_entities_under_heavy_noise_keep_a_spread_of_values() -> None:
    """900 entities at noise 40 (a small table's budget): the knots do not pile into a handful
    of values (the column would come back as a few values), and they stay inside the bounds."""
    values = np.random.default_rng(5).gamma(2.0, 500.0, 900).round()
    fitted, _ = _fit(values, ColumnSchema("amount", "integer"), noise=40.0)
    knots = np.array(fitted.scales[ALL_ROWS].quantiles)[:, 0]
    assert len(np.unique(np.round(knots))) > 25
    low, high = fitted.low_high()
    assert low <= knots.min() and knots.max() <= high


def test_a_columns_exact_zeros_come_back_as_zero() -> None:
    """A debt of 0 for 84% of 3,000 entities: its knots hold exactly 0 for about that share (a
    bin of width 1e-9 of the range sits at 0), not values spread over the first bin."""
    rng = np.random.default_rng(6)
    values = np.where(rng.random(3000) < 0.84, 0.0, rng.lognormal(7, 1, 3000).round())
    fitted, _ = _fit(values, ColumnSchema("debt", "integer"), noise=2.0)
    scale = fitted.scales[ALL_ROWS]
    knots = np.array(scale.quantiles)[:, 0]
    zero_share = max((p for k, p in zip(knots, scale.references, strict=True) if k == 0))
    assert zero_share == pytest.approx(0.84, abs=0.03)
    assert knots.max() > 1000


def test_dates_under_heavy_noise_get_wide_bounds_that_are_dates() -> None:
    """Birth dates of 270 customers (3 to 12 rows each) at noise 28, as epsilon 1 leaves such a
    table, over 20 draws: the released bounds are dates (never NaT: the run failed on 'bounds
    [NaT, NaT] are not dates'), decades apart, and hold most birth dates (none collapses onto
    1970-01-01: the knots spread over many days)."""
    inside = []
    for seed in range(20):
        rng = np.random.default_rng(100 + seed)
        rows = rng.integers(3, 13, 270)
        born = pd.Timestamp("1940-01-01") + pd.to_timedelta(rng.integers(0, 60 * 365, 270), "D")
        values = pd.Series(np.repeat(born.to_numpy(), rows))
        entities = np.repeat(np.arange(270), rows)
        fitted, _ = _fit(values, ColumnSchema("dob", "datetime"), noise=28.0, seed=seed,
                         entities=entities)  # fmt: skip
        low, high = (pd.Timestamp(bound) for bound in fitted.schema.bounds)
        assert not pd.isna(low) and not pd.isna(high) and not pd.isna(pd.Timestamp(fitted.fill))
        assert high - low > pd.Timedelta(days=20 * 365)
        knots = np.array(fitted.scales[ALL_ROWS].quantiles)[:, 0]
        assert np.isfinite(knots).all() and len(np.unique(np.round(knots / 86400))) > 25
        inside.append(np.mean((born >= low) & (born <= high)))
    assert min(inside) > 0.25 and np.mean(inside) > 0.8, inside


def test_dates_many_entities_hold_get_bounds_near_their_range() -> None:
    """The date grid costs little where entities are many: 20,000 birth dates at noise 1 get
    bounds within a grid bin (2.15 years) of their 0.1% and 99.9% quantiles."""
    rng = np.random.default_rng(7)
    born = pd.Timestamp("1950-01-01") + pd.to_timedelta(rng.integers(0, 50 * 365, ENTITIES), "D")
    fitted, _ = _fit(pd.Series(born), ColumnSchema("dob", "datetime"))
    low, high = (pd.Timestamp(bound) for bound in fitted.schema.bounds)
    tails = pd.Series(born).quantile([0.001, 0.999])
    bin_width = pd.Timedelta(days=786)
    assert tails.iloc[0] - bin_width <= low <= tails.iloc[0]
    assert tails.iloc[1] <= high <= tails.iloc[1] + bin_width
