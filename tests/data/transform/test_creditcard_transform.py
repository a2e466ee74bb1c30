"""Kaggle's file through the one transform and its shipped schema: invertible to original units,
Amount in cents within [0, a cap no one holds], Time in seconds within its fitted range, V1..V28
unclipped, point masses back exactly, fitted on what it is given only."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from support.creditcard import AMOUNT, FEATURES, LABEL, PCA_FEATURES, SCHEMA, TIME

from wgangp.data.builtin.simulated import simulate_creditcard
from wgangp.data.transform.table_transform import TableTransform
from wgangp.errors import DataError


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return simulate_creditcard(3000, seed=1)


def classes(frame: pd.DataFrame) -> np.ndarray:
    return SCHEMA.classes(frame[LABEL])


def fit(frame: pd.DataFrame, **options) -> TableTransform:
    return TableTransform.fit(frame, SCHEMA, classes(frame), **options)


def test_round_trip_recovers_original_units(frame) -> None:
    transformer = fit(frame, point_masses=False)
    x = transformer.transform(frame, classes(frame))
    assert x.dtype == np.float32 and x.shape == (len(frame), len(FEATURES))
    assert transformer.quantile_columns == ()
    back = transformer.inverse(x, classes(frame))
    assert tuple(back.columns) == FEATURES
    np.testing.assert_allclose(
        back[list(PCA_FEATURES)], frame[list(PCA_FEATURES)], rtol=1e-4, atol=1e-4
    )
    # Amount and Time come back within their bounds: means of the few most extreme rows, so that
    # the stored bounds are no one's own amount or time (docs/privacy.md), on their steps.
    amount = transformer.columns[-1].schema.bounds
    time = transformer.columns[0].schema.bounds
    expected = frame[AMOUNT].clip(*amount)
    np.testing.assert_allclose(back[AMOUNT], expected, atol=0.011 + 1e-6 * frame[AMOUNT].max())
    np.testing.assert_allclose(back[TIME], frame[TIME].clip(*time), atol=1.0)
    assert (frame[AMOUNT] > amount[1]).sum() < 5
    assert (np.round(back[AMOUNT], 2) == back[AMOUNT]).all()
    assert (back[TIME] == np.round(back[TIME])).all()


def test_overshoots_stay_in_range_and_v_columns_are_unclipped(frame) -> None:
    """A generator that overshoots never yields an amount above the mean of the 5 largest trained
    on, a bound that is no one's amount (expm1 of 20 is 4.85e8); V1..V28 are unbounded in the
    data too (``clip: false``) and come back as generated."""
    transformer = fit(frame, point_masses=False)
    low, cap = transformer.columns[-1].schema.bounds
    top = frame[AMOUNT].nlargest(5)
    assert cap == pytest.approx(np.floor(top.mean() * 100) / 100)  # on the cents grid, inward
    assert cap not in set(frame[AMOUNT]) and low >= 0
    wild = np.random.default_rng(0).normal(scale=50, size=(500, len(FEATURES)))
    back = transformer.inverse(wild, np.random.default_rng(1).integers(0, 2, 500))
    assert np.isfinite(back.to_numpy()).all()
    assert back[AMOUNT].between(low, cap).all() and back[AMOUNT].max() == cap
    assert back[TIME].between(frame[TIME].min(), frame[TIME].max()).all()
    assert back["V3"].abs().max() > 10 * frame["V3"].abs().max()


@pytest.mark.parametrize("earlier", ["wgangp.preprocessing/6", "wgangp.table_transform/1"])
def test_files_of_earlier_versions_are_refused_with_the_retrain_line(frame, earlier) -> None:
    """Earlier formats (Kaggle's own transform; a table's before every table had one kind)."""
    payload = json.loads(fit(frame).to_json())
    assert payload["format"] == "wgangp.table_transform/2"
    payload["format"] = earlier
    with pytest.raises(DataError) as err:
        TableTransform.from_json(json.dumps(payload), source="p.json")
    assert str(err.value) == (
        "p.json is not a wgangp.table_transform/2 document; it was not written by wgangp's "
        "training or was edited: retrain to get a new one"
    )


def _with(frame, column: str, rows: list[int], value: float):
    changed = frame.astype({column: np.float64})
    changed.loc[changed.index[rows], column] = value
    return changed


@pytest.mark.parametrize(
    ("column", "rows", "value"),
    [
        ("V3", [7], 1e200),
        ("V3", [7], 1e308),
        ("V3", list(range(0, 3000, 100)), 1e308),
        (TIME, list(range(0, 3000, 100)), 1e308),
    ],
)
def test_fit_refuses_values_no_scale_can_hold(frame, column, rows, value) -> None:
    """Validation refuses such values first; the transform's fit reads cells the same way."""
    with pytest.raises(DataError) as err:
        fit(_with(frame, column, rows, value), point_masses=False, source="rows")
    message = str(err.value)
    assert message.startswith(f"rows: column {column} has {len(rows)} value(s) larger than 1e+15")
    assert "\n" not in message


def test_transform_refuses_rows_no_scale_can_hold(frame) -> None:
    transformer = fit(frame)
    broken = _with(frame, "V9", [4, 9], 1e300)
    with pytest.raises(DataError, match=r"^rows: column V9 has 2 value\(s\) larger than 1e\+15"):
        transformer.transform(broken, classes(broken), source="rows")


def test_load_refuses_a_non_finite_scale_in_one_line(frame) -> None:
    payload = json.loads(fit(frame).to_json())
    payload["columns"][3]["scales"]["all"]["std"] = [math.inf]
    with pytest.raises(DataError) as err:
        TableTransform.from_json(json.dumps(payload), source="p.json")
    assert str(err.value).startswith("p.json column V3: its scale of all is non-finite")
    assert "\n" not in str(err.value)


def test_unscaled_mode_is_identity_on_features(frame) -> None:
    """``scaling=none``: raw units, no log of Amount, no quantiles (the ablation's setup)."""
    transformer = fit(frame, scaling="none", per_class=False)
    np.testing.assert_allclose(
        transformer.transform(frame), frame[list(FEATURES)].to_numpy(np.float32), rtol=1e-6
    )


@pytest.mark.parametrize("per_class", [False, True])
def test_quantile_scale_round_trips_and_keeps_each_class_in_its_range(frame, per_class) -> None:
    """A quantile scale maps every column onto a normal, and back inside the fitted rows' range;
    per class, the frauds' range, not the normals'."""
    transformer = fit(frame, scaling="quantile", per_class=per_class)
    labels = classes(frame)
    x = transformer.transform(frame, labels)
    assert x.dtype == np.float32 and np.isfinite(x).all()
    assert abs(float(np.median(x))) < 0.05 and 0.8 < float(x.std()) < 1.2
    back = transformer.inverse(x, labels)
    # Within the outermost knots (lines through the group means) every normal row comes back.
    v14 = transformer.columns[FEATURES.index("V14")].scales
    knots = np.asarray(v14["0" if per_class else "all"].quantiles)[:, 0]
    normal = labels == 0
    inside = normal & frame["V14"].between(knots[0], knots[-1], inclusive="neither").to_numpy()
    assert inside.sum() > 0.99 * normal.sum()
    np.testing.assert_allclose(back["V14"][inside], frame["V14"][inside], rtol=1e-4, atol=1e-4)
    scale = v14["1"] if per_class and "1" in v14 else v14["all"]
    top = np.asarray(scale.quantiles)[-1, 0]
    wild = np.full((4, len(FEATURES)), 40.0, np.float32)
    frauds = transformer.inverse(wild, 1)
    assert frauds["V14"].max() == pytest.approx(top)


@pytest.fixture(scope="module")
def many_frauds() -> pd.DataFrame:
    return simulate_creditcard(3000, fraud_rate=0.1, seed=2)


def _with_repeated_amounts(frame):
    """The frame with a third of the frauds at exactly 1.00 and a tenth at 0.00, as in the data."""
    frame = frame.copy()
    frauds = np.flatnonzero(frame[LABEL].to_numpy() == 1)
    frame.loc[frauds[: len(frauds) // 3], AMOUNT] = 1.0
    frame.loc[frauds[len(frauds) // 3 : len(frauds) // 3 + len(frauds) // 10], AMOUNT] = 0.0
    return frame


def test_point_masses_bring_repeated_amounts_back_exact(many_frauds) -> None:
    """A standardized Amount smears the 1.00s over a bell; with point masses found in the data,
    Amount goes through its quantiles and every draw in the 1.00s' share of the scale lands on
    1.00 exactly, at its share; the other columns stay standardized."""
    frame = _with_repeated_amounts(many_frauds)
    frauds = frame[frame[LABEL] == 1]
    share, zeros = float((frauds[AMOUNT] == 1.0).mean()), float((frauds[AMOUNT] == 0.0).mean())
    draws = np.random.default_rng(0).standard_normal((20_000, len(FEATURES)))
    found = fit(frame)
    plain = fit(frame, point_masses=False)
    assert AMOUNT in found.quantile_columns and AMOUNT not in plain.quantile_columns
    assert "V3" not in found.quantile_columns
    generated = found.inverse(draws, 1)
    assert float((generated[AMOUNT] == 1.0).mean()) == pytest.approx(share, abs=0.02)
    assert float((generated[AMOUNT] == 0.0).mean()) == pytest.approx(zeros, abs=0.02)
    assert float((plain.inverse(draws, 1)[AMOUNT] == 1.0).mean()) < 0.01
    x = found.transform(frauds, 1)
    np.testing.assert_allclose(x[:, 1:29], plain.transform(frauds, 1)[:, 1:29], rtol=1e-6)
    back = found.inverse(x, 1)
    np.testing.assert_array_equal(back[AMOUNT] == 1.0, frauds[AMOUNT].to_numpy() == 1.0)


def test_quantile_columns_are_saved_and_checked_on_load(many_frauds) -> None:
    transformer = fit(many_frauds, quantile_columns=[TIME])
    payload = json.loads(transformer.to_json())
    assert TIME in payload["quantile_columns"]
    loaded = TableTransform.from_json(transformer.to_json())
    labels = classes(many_frauds)
    x = transformer.transform(many_frauds, labels)
    np.testing.assert_array_equal(loaded.transform(many_frauds, labels), x)
    assert loaded.inverse(x, labels).equals(transformer.inverse(x, labels))
    broken = json.loads(json.dumps(payload))
    broken["quantile_columns"] = [*payload["quantile_columns"], "V3"]  # V3 has a standard scale
    with pytest.raises(DataError, match="maps column V3 through quantiles it does not hold"):
        TableTransform.from_dict(broken, "p.json")
    broken["quantile_columns"] = ["Amt"]
    with pytest.raises(DataError, match="not numeric columns of the table"):
        TableTransform.from_dict(broken, "p.json")
