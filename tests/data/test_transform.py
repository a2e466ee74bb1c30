"""The transform is invertible to original units and fitted on what it is given only."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from wgangp.data.schema import AMOUNT, COLUMNS, FEATURES, LABEL, PCA_FEATURES, TIME
from wgangp.data.simulated import simulate_creditcard
from wgangp.data.transform import TabularTransformer
from wgangp.errors import DataError


@pytest.fixture(scope="module")
def frame():
    return simulate_creditcard(3000, seed=1)


def test_round_trip_recovers_original_units(frame) -> None:
    transformer = TabularTransformer().fit(frame)
    x = transformer.transform(frame)
    assert x.dtype == np.float32 and x.shape == (len(frame), len(FEATURES))
    np.testing.assert_allclose(x.mean(axis=0), 0.0, atol=1e-4)
    back = transformer.inverse_transform(x, frame[LABEL].to_numpy())
    assert list(back.columns) == list(COLUMNS)
    np.testing.assert_allclose(
        back[list(PCA_FEATURES)], frame[list(PCA_FEATURES)], rtol=1e-5, atol=1e-5
    )
    # Amount and Time come back within their bounds: means of the few most extreme rows, so that
    # the stored bounds are no one's own amount or time (docs/privacy.md).
    amount = frame[AMOUNT].clip(upper=transformer.amount_max)
    np.testing.assert_allclose(back[AMOUNT], amount, atol=0.011 + 1e-6 * frame[AMOUNT].max())
    time = frame[TIME].clip(transformer.time_min, transformer.time_max).round()
    np.testing.assert_allclose(back[TIME], time, atol=1.0)
    assert (frame[AMOUNT] > transformer.amount_max).sum() < 5
    assert (back[LABEL].to_numpy() == frame[LABEL].to_numpy()).all()


@pytest.mark.parametrize("log_amount", [True, False])
def test_inverse_keeps_amount_and_time_in_the_training_range(frame, log_amount: bool) -> None:
    """A generator that overshoots never yields an amount above the mean of the 5 largest trained
    on, a bound that is no one's amount (with log1p, expm1 of the old cap of 20 was 4.85e8)."""
    transformer = TabularTransformer(log_amount=log_amount).fit(frame)
    top = frame[AMOUNT].nlargest(5)
    assert transformer.amount_max == pytest.approx(top.mean())
    assert transformer.amount_max not in set(frame[AMOUNT])
    wild = np.random.default_rng(0).normal(scale=50, size=(500, len(FEATURES))).astype(np.float32)
    back = transformer.inverse_transform(wild)
    assert np.isfinite(back.to_numpy()).all()
    assert back[AMOUNT].between(0, transformer.amount_max).all()
    assert back[AMOUNT].max() == round(transformer.amount_max, 2)  # the overshoot is clipped
    assert back[TIME].between(frame[TIME].min(), frame[TIME].max()).all()


@pytest.mark.parametrize("earlier", [f"wgangp.preprocessing/{v}" for v in range(1, 6)])
def test_files_of_earlier_versions_are_refused_with_the_retrain_line(frame, earlier) -> None:
    """Earlier formats stored training values in their quantile tables: retrain, in one line."""
    payload = json.loads(TabularTransformer().fit(frame).to_json())
    assert payload["format"] == "wgangp.preprocessing/6"
    payload["format"] = earlier
    with pytest.raises(DataError) as err:
        TabularTransformer.from_json(json.dumps(payload), source="p.json")
    assert str(err.value) == (
        f"p.json is not a wgangp.preprocessing/6 document (found {earlier!r}); it was not "
        "written by wgangp's training or was edited: retrain to get a new one"
    )


def _with(frame, column: str, rows: list[int], value: float):
    changed = frame.astype({column: np.float64})
    changed.loc[changed.index[rows], column] = value
    return changed


@pytest.mark.parametrize(
    ("column", "rows", "value", "shown"),
    [
        ("V3", [7], 1e200, "std inf"),
        ("V3", [7], 1e308, "std inf"),
        ("V3", list(range(0, 3000, 100)), 1e308, "mean inf"),
        (TIME, list(range(0, 3000, 100)), 1e308, "mean inf"),
        (AMOUNT, [7], np.inf, "mean inf"),
    ],
)
def test_fit_refuses_a_non_finite_transform(frame, column, rows, value, shown) -> None:
    """Validation refuses such values first; the transform checks itself all the same."""
    with pytest.raises(DataError) as err:
        TabularTransformer().fit(_with(frame, column, rows, value))
    message = str(err.value)
    assert message.startswith(f"column {column} of the training rows makes the fitted transform")
    assert shown in message and f"fix or drop the rows with extreme {column} values" in message


def test_the_fit_line_in_docs_errors_md(frame) -> None:
    with pytest.raises(DataError) as err:
        TabularTransformer().fit(_with(frame, "V3", [7], 1e200))
    assert str(err.value) == (
        "column V3 of the training rows makes the fitted transform non-finite (mean 3.33333e+196, "
        "std inf): its values are too large to scale; fix or drop the rows with extreme V3 values"
    )


def test_transform_refuses_rows_that_scale_to_inf(frame) -> None:
    transformer = TabularTransformer().fit(frame)
    with pytest.raises(DataError, match=r"^column V9 is non-finite after scaling in 2 of 3000 row"):
        transformer.transform(_with(frame, "V9", [4, 9], 1e300))


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda p: p["std"].__setitem__(3, math.inf), "non-finite parameters for V3 (mean "),
        (lambda p: p["mean"].__setitem__(0, math.nan), "non-finite parameters for Time (mean nan"),
        (lambda p: p.__setitem__("amount_max", math.inf), "for Amount (max inf)"),
        (lambda p: p.__setitem__("time_max", -math.inf), "for Time (min "),
        (lambda p: p["std"].__setitem__(3, "x"), "holds parameters that are not numbers"),
        (lambda p: p.__setitem__("extra", 1), "has unknown key(s) extra"),
        (lambda p: p.__setitem__("mean", [0.0]), "has 1 means and 30 scales, not 30"),
        (lambda p: p.__setitem__("format", "x/9"), "is not a wgangp.preprocessing/6 document"),
    ],
)
def test_load_refuses_a_broken_file_in_one_line(frame, tmp_path, edit, expected) -> None:
    path = TabularTransformer().fit(frame).save(tmp_path / "preprocessing.json")
    payload = json.loads(path.read_text())
    edit(payload)
    path.write_text(json.dumps(payload))  # json writes Infinity / NaN, as the old code did
    with pytest.raises(DataError) as err:
        TabularTransformer.load(path)
    assert str(err.value).startswith(f"{path} ") and expected in str(err.value)
    assert "\n" not in str(err.value)


def test_load_refuses_text_that_is_not_json(tmp_path) -> None:
    path = tmp_path / "preprocessing.json"
    path.write_text("{not json")
    with pytest.raises(DataError, match=r"preprocessing.json is not valid JSON \("):
        TabularTransformer.load(path)


def test_json_round_trip_and_no_pickle(frame, tmp_path) -> None:
    transformer = TabularTransformer().fit(frame)
    path = transformer.save(tmp_path / "p.json")
    loaded = TabularTransformer.load(path)
    np.testing.assert_array_equal(loaded.transform(frame), transformer.transform(frame))
    assert path.read_text().lstrip().startswith("{")


def test_unscaled_mode_is_identity_on_features(frame) -> None:
    transformer = TabularTransformer(scaling="none", log_amount=False).fit(frame)
    np.testing.assert_allclose(
        transformer.transform(frame), frame[list(FEATURES)].to_numpy(np.float32), rtol=1e-6
    )


@pytest.mark.parametrize("per_class", [False, True])
def test_quantile_scale_round_trips_and_keeps_each_class_in_its_range(frame, per_class) -> None:
    """A quantile scale maps every column onto a normal, and back inside the fitted rows' range;
    per class, the frauds' range, not the normals'."""
    transformer = TabularTransformer(scaling="quantile", per_class=per_class).fit(frame)
    x = transformer.transform(frame)
    assert x.dtype == np.float32 and np.isfinite(x).all()
    assert abs(float(np.median(x))) < 0.05 and 0.8 < float(x.std()) < 1.2
    labels = frame[LABEL].to_numpy()
    back = transformer.inverse_transform(x, labels)
    # Within the outermost knots (lines through the group means) every normal row comes back.
    scales = transformer._scale_objects()
    knots = np.asarray(scales["0" if per_class else "all"].quantiles)[:, 14]
    normal = frame[LABEL] == 0
    inside = normal & frame["V14"].between(knots[0], knots[-1], inclusive="neither")
    assert inside.sum() > 0.99 * normal.sum()
    np.testing.assert_allclose(back["V14"][inside], frame["V14"][inside], rtol=1e-4, atol=1e-4)
    top = np.asarray(scales["1" if per_class else "all"].quantiles)[-1, 14]
    wild = np.full((4, len(FEATURES)), 40.0, np.float32)
    frauds = transformer.inverse_transform(wild, np.ones(4, int))
    assert frauds["V14"].max() == pytest.approx(top)
    fraud_rows = frame[frame[LABEL] == 1]
    real_top = (fraud_rows if per_class else frame)["V14"].nlargest(2)
    assert top != real_top.iloc[0] and top > real_top.iloc[1] - abs(real_top.iloc[1])


def test_a_per_class_transform_needs_labels_to_invert(frame) -> None:
    transformer = TabularTransformer(scaling="standard", per_class=True).fit(frame)
    with pytest.raises(ValueError, match="needs the rows' labels"):
        transformer.inverse_transform(np.zeros((2, len(FEATURES)), np.float32))
    frauds = frame[frame[LABEL] == 1]
    x = transformer.transform(frauds)
    np.testing.assert_allclose(x.mean(axis=0)[1:29], 0.0, atol=1e-4)  # the frauds' own scale


@pytest.mark.parametrize(("scaling", "per_class"), [("quantile", True), ("standard", True)])
def test_per_class_scales_round_trip_and_a_broken_file_is_refused(
    frame, tmp_path, scaling, per_class
) -> None:
    """Quantile or per-class scales round-trip; a broken scale is refused."""
    transformer = TabularTransformer(scaling=scaling, per_class=per_class).fit(frame)
    path = transformer.save(tmp_path / "preprocessing.json")
    payload = json.loads(path.read_text())
    assert set(payload["scales"]) == {"0", "1"}
    loaded = TabularTransformer.load(path)
    np.testing.assert_array_equal(loaded.transform(frame), transformer.transform(frame))
    first = next(iter(payload["scales"]["1"].values()))
    first[1] = [math.inf] * len(FEATURES) if scaling == "quantile" else math.inf
    path.write_text(json.dumps(payload))
    with pytest.raises(DataError, match=r"holds non-finite parameters for "):
        TabularTransformer.load(path)
    del payload["scales"]["1"]
    path.write_text(json.dumps(payload))
    with pytest.raises(DataError, match="holds parameters that are not numbers"):
        TabularTransformer.load(path)


@pytest.fixture(scope="module")
def many_frauds():
    return simulate_creditcard(3000, fraud_rate=0.1, seed=2)


def _with_repeated_amounts(frame):
    """The frame with a third of the frauds at exactly 1.00 and a tenth at 0.00, as in the data."""
    frame = frame.copy()
    frauds = np.flatnonzero(frame[LABEL].to_numpy() == 1)
    frame.loc[frauds[: len(frauds) // 3], AMOUNT] = 1.0
    frame.loc[frauds[len(frauds) // 3 : len(frauds) // 3 + len(frauds) // 10], AMOUNT] = 0.0
    return frame


def test_quantile_columns_bring_repeated_amounts_back_exact(many_frauds) -> None:
    """A standardized Amount smears the 1.00s over a bell; through its quantiles, every normal
    draw in the 1.00s' share of the scale lands on 1.00 exactly, and the other columns stay
    standardized."""
    frame = _with_repeated_amounts(many_frauds)
    frauds = frame[frame[LABEL] == 1]
    share = float((frauds[AMOUNT] == 1.0).mean())
    draws = np.random.default_rng(0).standard_normal((20_000, len(FEATURES))).astype(np.float32)
    ones = np.ones(len(draws), int)
    mixed = TabularTransformer(per_class=True, quantile_columns=[AMOUNT]).fit(frame)
    plain = TabularTransformer(per_class=True).fit(frame)
    generated = mixed.inverse_transform(draws, ones)
    assert float((generated[AMOUNT] == 1.0).mean()) == pytest.approx(share, abs=0.02)
    assert float((plain.inverse_transform(draws, ones)[AMOUNT] == 1.0).mean()) < 0.01
    x = mixed.transform(frauds)
    np.testing.assert_allclose(x[:, 1:29], plain.transform(frauds)[:, 1:29], rtol=1e-6)
    back = mixed.inverse_transform(x, np.ones(len(x), int))
    np.testing.assert_array_equal(back[AMOUNT] == 1.0, frauds[AMOUNT].to_numpy() == 1.0)


def test_quantile_columns_are_saved_and_checked_on_load(many_frauds, tmp_path) -> None:
    frame = many_frauds
    transformer = TabularTransformer(per_class=True, quantile_columns=[AMOUNT]).fit(frame)
    path = transformer.save(tmp_path / "preprocessing.json")
    payload = json.loads(path.read_text())
    assert payload["quantile_columns"] == [AMOUNT]
    assert set(payload["scales"]["1"]) == {"base", "quantile", "columns"}
    loaded = TabularTransformer.load(path)
    x = transformer.transform(frame)
    labels = frame[LABEL].to_numpy()
    np.testing.assert_array_equal(loaded.transform(frame), x)
    assert loaded.inverse_transform(x, labels).equals(transformer.inverse_transform(x, labels))
    for edit in (
        lambda p: p.update(quantile_columns=["Amt"]),
        lambda p: p["scales"]["1"].update(columns=[29, 29]),
        lambda p: p["scales"]["1"].update(columns=[0]),  # Time through Amount's quantiles
        lambda p: p.update(quantile_columns=[]),
        lambda p: p["scales"]["0"].update(columns="Amount"),
    ):
        broken = json.loads(json.dumps(payload))
        edit(broken)
        path.write_text(json.dumps(broken))
        with pytest.raises(DataError, match="holds parameters that are not numbers"):
            TabularTransformer.load(path)
    broken = json.loads(json.dumps(payload))
    broken["scales"]["1"]["quantile"]["quantiles"][5] = [math.nan]
    path.write_text(json.dumps(broken))
    with pytest.raises(DataError, match=r"holds non-finite parameters for Amount"):
        TabularTransformer.load(path)
