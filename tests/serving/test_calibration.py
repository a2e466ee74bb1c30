"""Marginal calibration, one for every table: per class and in the networks' space, numbers onto
the training quantiles (ranks and dependence kept), each level's mean probability onto its
training share, each gap share onto the training one; stored as plain numbers and checked on
load.

Two layouts: Kaggle's (30 number slots, from the shipped schema) and a small mixed one (a number
with gaps, a categorical).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import ks_2samp
from support.creditcard import CLASSES, FEATURES, SCHEMA

from wgangp.data.transform.layout import Block, table_layout
from wgangp.errors import DataError
from wgangp.serving.calibration import MarginalCalibration

#: Kaggle's table in the networks' space: one number slot per feature.
KAGGLE = table_layout(SCHEMA.features)
WIDTH = len(FEATURES)
#: A number with gaps and a categorical of three levels.
MIXED = (
    Block("amount", "continuous", 0, 1),
    Block("amount", "missing", 1, 1),
    Block("merchant", "categorical", 2, 3),
)

# --- Kaggle's layout: numbers only ---------------------------------------------------------------


def _fitted(seed: int = 0) -> tuple[MarginalCalibration, dict[int, np.ndarray]]:
    """Generated rows: correlated normals. Real rows: shifted, skewed, with a point mass."""
    rng = np.random.default_rng(seed)
    generated, real = {}, {}
    for label in CLASSES:
        base = rng.standard_normal((5000, 1))
        generated[label] = base + 0.5 * rng.standard_normal((5000, WIDTH))
        rows = rng.exponential(2.0, (300, WIDTH)) - 7.0 * label
        rows[:60, -1] = 1.0  # 20% of the rows at exactly 1.0, as Amount's 1.00
        real[label] = rows
    return MarginalCalibration.fit(KAGGLE, generated, real), real


def test_the_kaggle_layout_is_one_number_slot_per_feature() -> None:
    assert [(b.column, b.kind, b.start, b.width) for b in KAGGLE] == [
        (name, "continuous", i, 1) for i, name in enumerate(FEATURES)
    ]
    assert MarginalCalibration(KAGGLE, {}).numbers == list(range(WIDTH))


def test_each_column_follows_the_training_marginal_and_keeps_its_ranks() -> None:
    calibration, real = _fitted()
    rng = np.random.default_rng(1)
    draw = rng.standard_normal((4000, 1)) + 0.5 * rng.standard_normal((4000, WIDTH))
    out = calibration.apply(draw, label=1)
    for column in range(WIDTH - 1):
        assert ks_2samp(out[:, column], real[1][:, column]).statistic < 0.06
        # monotone per column: the order of the rows within a column is the generator's
        order = np.argsort(draw[:, column])
        assert (np.diff(out[order, column]) >= -1e-5).all()
    # the dependence between columns survives: the shared factor still correlates them
    assert np.corrcoef(out[:, 0], out[:, 1])[0, 1] > 0.5
    # a point mass comes back exact (float32 of 1.0), at about its training share
    assert abs(np.mean(out[:, -1] == 1.0) - 0.2) < 0.03
    # values stay inside the training rows' range, or within a group's spread of it (the
    # outermost knots extend the line through the outermost groups' means)
    assert out.min() >= real[1].min() - 0.1 and out.max() <= real[1].max() + 0.1


def test_a_linear_map_is_recovered_between_the_quantiles() -> None:
    """Real = 3 * generated + 2 in every column: calibration is that map (within the grid)."""
    grid = np.tile(np.linspace(0.0, 1.0, 2001)[:, None], (1, WIDTH))
    calibration = MarginalCalibration.fit(
        KAGGLE, {c: grid for c in CLASSES}, {c: 3 * grid + 2 for c in CLASSES}
    )
    probe = np.tile(np.linspace(0.05, 0.95, 19)[:, None], (1, WIDTH))
    np.testing.assert_allclose(calibration.apply(probe, label=0), 3.0 * probe + 2.0, atol=1e-3)


def test_saved_and_loaded_it_maps_the_same(tmp_path: Path) -> None:
    calibration, _ = _fitted()
    path = tmp_path / "calibration.json"
    path.write_text(calibration.to_json())
    assert json.loads(path.read_text())["format"] == "wgangp.calibration/2"
    loaded = MarginalCalibration.load(path)
    assert loaded.layout == KAGGLE
    draw = np.random.default_rng(3).standard_normal((100, WIDTH))
    for label in CLASSES:
        np.testing.assert_allclose(loaded.apply(draw, label), calibration.apply(draw, label))


@pytest.mark.parametrize(
    "edit",
    [
        lambda p: {**p, "format": "wgangp.calibration/1"},
        lambda p: {**p, "classes": {"1": p["classes"]["1"]}},
        lambda p: _set_first_quantile(p, "oops"),
        lambda p: _set_first_quantile(p, None),
        lambda p: {**p, "layout": p["layout"][:-1]},
    ],
    ids=["format", "one class", "text", "null", "layout"],
)
def test_an_edited_file_is_refused_in_one_line(tmp_path: Path, edit) -> None:
    calibration, _ = _fitted()
    path = tmp_path / "calibration.json"
    path.write_text(calibration.to_json())
    path.write_text(json.dumps(edit(json.loads(path.read_text()))))
    with pytest.raises(DataError) as err:
        MarginalCalibration.load(path)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(f"{path} is not a usable calibration (")
    assert message.endswith("retrain to get a new one")


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (
            lambda p: _set_first_quantile(p, float("inf")),
            "(class 0 real quantiles of Time: non-finite quantiles)",
        ),
        (
            lambda p: _set_first_quantile(p, 50.0),
            "(class 0 real quantiles of Time: quantiles not sorted (knot 2 of 62, ",
        ),
        (
            lambda p: _set_first_quantile(p, -1e300),
            "(class 0 real quantiles of Time: quantile -1e+300 beyond 1e+16)",
        ),
        (
            lambda p: _edit_real(p, lambda t: t["references"].pop()),
            "(class 0 real quantiles hold 62 knots for 61 references)",
        ),
        (
            lambda p: _edit_real(p, lambda t: t["quantiles"][3].pop()),
            "(class 0 real quantiles are not quantiles 1 columns wide)",
        ),
        (
            lambda p: _edit_real(p, lambda t: t["references"].reverse()),
            "(class 0 real quantiles of Time: references from 0 to 1, not rising from 0 to 1)",
        ),
        (
            lambda p: _edit_real(p, lambda t: t["references"].__setitem__(-1, 2.0)),
            "(class 0 real quantiles of Time: references from 0 to 2, not rising from 0 to 1)",
        ),
        (
            lambda p: p["classes"]["0"]["real"].pop(),
            "(class 0: 29 real quantile tables)",
        ),
    ],
    ids=[
        "inf",
        "unsorted",
        "1e300",
        "lengths",
        "ragged",
        "references reversed",
        "references 2",
        "a table short",
    ],
)
def test_a_table_no_fit_writes_is_refused_naming_it(tmp_path: Path, edit, says: str) -> None:
    calibration, _ = _fitted()
    path = tmp_path / "calibration.json"
    path.write_text(calibration.to_json())
    payload = json.loads(path.read_text())
    edit(payload)
    path.write_text(json.dumps(payload))
    with pytest.raises(DataError) as err:
        MarginalCalibration.load(path)
    message = str(err.value)
    assert message.startswith(f"{path} is not a usable calibration {says}"), message
    assert message.endswith(
        "; it was not written by wgangp's training or was edited: retrain to get a new one"
    )
    assert "\n" not in message


def _edit_real(payload: dict, edit) -> dict:
    """``edit`` the class 0 real quantiles of the first column (Time)."""
    edit(payload["classes"]["0"]["real"][0])
    return payload


def _set_first_quantile(payload: dict, value: object) -> dict:
    payload["classes"]["0"]["real"][0]["quantiles"][0][0] = value
    return payload


# --- a mixed layout: a number with gaps, a categorical ---------------------------------------


def _real(rng: np.random.Generator, n: int) -> np.ndarray:
    x = np.zeros((n, 5))
    x[:, 0] = rng.exponential(2.0, n)
    x[:, 1] = rng.random(n) < 0.3  # 30% gaps
    x[np.arange(n), 2 + rng.choice(3, n, p=[0.6, 0.3, 0.1])] = 1
    return x


def _generated(rng: np.random.Generator, n: int) -> np.ndarray:
    x = np.zeros((n, 5))
    x[:, 0] = rng.standard_normal(n)
    x[:, 1] = rng.uniform(0.0, 0.2, n)  # the generator's gap probabilities: 10% on average
    x[:, 2:5] = rng.dirichlet([1, 1, 1], n)  # a third each
    return x


@pytest.fixture(scope="module")
def mixed() -> tuple[MarginalCalibration, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    real = {0: _real(rng, 400), 1: _real(rng, 200)}
    generated = {0: _generated(rng, 20_000), 1: _generated(rng, 20_000)}
    return MarginalCalibration.fit(MIXED, generated, real, 5), generated[1], real[1]


def test_each_kind_gets_the_training_marginal(mixed) -> None:
    calibration, generated, real = mixed
    out = calibration.apply(generated, 1)
    assert abs(out[:, 1].mean() - real[:, 1].mean()) < 1e-3  # the share of gaps
    shares = real[:, 2:5].mean(axis=0)  # merchant has no gaps: over all rows
    np.testing.assert_allclose(out[:, 2:5].mean(axis=0), shares, atol=1e-3)  # each level
    np.testing.assert_allclose(out[:, 2:5].sum(axis=1), 1.0, rtol=1e-5)
    present = np.sort(real[real[:, 1] < 0.5, 0])
    for q in (0.1, 0.5, 0.9):  # the number's present values: knots of 5-row means
        assert abs(np.quantile(out[:, 0], q) - np.quantile(present, q)) < 0.15 * present.std()
    # the number's map is monotone: a row keeps its rank
    assert (np.diff(out[np.argsort(generated[:, 0]), 0]) >= 0).all()


def test_a_gap_probability_of_exactly_one_in_float32_stays_finite() -> None:
    # In float32, 1 - 1e-12 rounds to 1: a generated gap probability of exactly 1 must not
    # read as an infinite logit when the gap share is fitted, nor when it is applied.
    rng = np.random.default_rng(1)
    real = {0: _real(rng, 400), 1: _real(rng, 200)}
    generated = {label: _generated(rng, 2000).astype(np.float32) for label in (0, 1)}
    for rows in generated.values():
        rows[:50, 1], rows[50:100, 1] = 1.0, 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        calibration = MarginalCalibration.fit(MIXED, generated, real, 5)
        out = calibration.apply(generated[1], 1)
    assert np.isfinite(out).all()
    assert abs(out[:, 1].mean() - real[1][:, 1].mean()) < 0.02  # the share still lands


def test_a_mixed_calibration_round_trips_and_an_edited_file_is_one_line(mixed, tmp_path) -> None:
    calibration, generated, _ = mixed
    path = tmp_path / "calibration.json"
    path.write_text(calibration.to_json())
    again = MarginalCalibration.load(path)
    np.testing.assert_array_equal(again.apply(generated, 1), calibration.apply(generated, 1))
    raw = json.loads(path.read_text())
    raw["classes"]["1"]["weights"]["2"] = [1.0, -1.0, 1.0]
    path.write_text(json.dumps(raw))
    with pytest.raises(DataError, match="level weights of merchant are not >= 0") as info:
        MarginalCalibration.load(path)
    assert "\n" not in str(info.value)


# --- under privacy.epsilon: every target a DP release --------------------------------------------


def _mixed_rows(rng: np.random.Generator, rows: int, shift: float) -> np.ndarray:
    """Rows of MIXED in the networks' space: a normal number (empty in 10%), a level of three
    with shares 0.6, 0.3, 0.1 (generated rows as probabilities, real ones as one-hot)."""
    x = np.zeros((rows, 5))
    x[:, 0] = rng.standard_normal(rows) + shift
    x[:, 1] = rng.random(rows) < 0.1
    x[np.arange(rows), 2 + rng.choice(3, rows, p=[0.6, 0.3, 0.1])] = 1.0
    return x


def test_a_private_calibration_releases_one_target_per_block_and_class() -> None:
    """20,000 entities of 2 rows each at noise 1: the targets are the real marginals (generated
    numbers off by 1 come back centred, levels and gaps at their shares), from exactly
    ``releases(layout)`` Gaussian releases."""
    from wgangp.data.transform.private_column import PrivateFit

    rng = np.random.default_rng(0)
    real = {c: _mixed_rows(rng, 40_000, 0.0) for c in CLASSES}
    generated = {c: _mixed_rows(rng, 20_000, 1.0) for c in CLASSES}
    for c in CLASSES:  # generated levels as flat probabilities, gaps at 40%
        generated[c][:, 2:5] = 1 / 3
        generated[c][:, 1] = 0.4
    owners = {c: np.repeat(np.arange(20_000), 2) for c in CLASSES}
    private = PrivateFit(1.0, np.random.default_rng(1))
    calibration = MarginalCalibration.fit(MIXED, generated, real, owners=owners, dp=private)
    assert len(private.events) == MarginalCalibration.releases(MIXED) == 6
    out = calibration.apply(_mixed_rows(np.random.default_rng(2), 20_000, 1.0), label=1)
    assert abs(out[:, 0].mean()) < 0.05 and abs(out[:, 0].std() - 1.0) < 0.05
    probabilities = np.full((20_000, 3), 1 / 3)
    flat = np.column_stack([np.zeros(20_000), np.full(20_000, 0.4), probabilities])
    shares = calibration.apply(flat, label=0)
    np.testing.assert_allclose(shares[:, 2:5].mean(axis=0), [0.6, 0.3, 0.1], atol=0.01)
    assert abs(shares[:, 1].mean() - 0.1) < 0.01


def test_a_private_calibration_needs_the_entities() -> None:
    from wgangp.data.transform.private_column import PrivateFit

    rows = {c: np.zeros((10, 5)) for c in CLASSES}
    with pytest.raises(ValueError, match="counts entities"):
        MarginalCalibration.fit(MIXED, rows, rows, dp=PrivateFit(1.0, np.random.default_rng()))


def test_a_private_calibration_of_few_entities_under_heavy_noise_keeps_a_spread() -> None:
    """900 entities at noise 20: the class's numbers are calibrated onto a spread of values,
    never onto one (a column of a single value is what piling weak evidence did)."""
    from wgangp.data.transform.private_column import PrivateFit

    rng = np.random.default_rng(3)
    real = {c: _mixed_rows(rng, 900, 0.0) for c in CLASSES}
    generated = {c: _mixed_rows(rng, 5000, 0.0) for c in CLASSES}
    owners = {c: np.arange(900) for c in CLASSES}
    private = PrivateFit(20.0, np.random.default_rng(4))
    calibration = MarginalCalibration.fit(MIXED, generated, real, owners=owners, dp=private)
    out = calibration.apply(_mixed_rows(np.random.default_rng(5), 5000, 0.0), label=1)
    assert 0.5 < out[:, 0].std() < 2.0
    assert len(np.unique(np.round(out[:, 0], 2))) > 100
