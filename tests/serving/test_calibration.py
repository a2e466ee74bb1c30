"""Marginal calibration: training marginals out, the generator's ranks kept, checked on load."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import ks_2samp

from wgangp.data.schema import CLASSES, FEATURES
from wgangp.errors import DataError
from wgangp.serving.calibration import MarginalCalibration

WIDTH = len(FEATURES)


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
    return MarginalCalibration.fit(generated, real), real


def test_each_column_follows_the_training_marginal_and_keeps_its_ranks() -> None:
    calibration, real = _fitted()
    rng = np.random.default_rng(1)
    draw = rng.standard_normal((4000, 1)) + 0.5 * rng.standard_normal((4000, WIDTH))
    out = calibration.apply(draw, label=1)
    for column in range(WIDTH - 1):
        assert ks_2samp(out[:, column], real[1][:, column]).statistic < 0.06
        # monotone per column: the order of the rows within a column is the generator's
        order = np.argsort(draw[:, column])
        assert (np.diff(out[order, column]) >= -1e-9).all()
    # the dependence between columns survives: the shared factor still correlates them
    assert np.corrcoef(out[:, 0], out[:, 1])[0, 1] > 0.5
    # a point mass comes back exact, at about its training share
    assert abs(np.mean(out[:, -1] == 1.0) - 0.2) < 0.03
    # values stay inside the training rows' range, or within a group's spread of it (the
    # outermost knots extend the line through the outermost groups' means)
    assert out.min() >= real[1].min() - 0.1 and out.max() <= real[1].max() + 0.1


def test_a_linear_map_is_recovered_between_the_quantiles() -> None:
    """Real = 3 * generated + 2 in every column: calibration is that map (within the grid)."""
    grid = np.tile(np.linspace(0.0, 1.0, 2001)[:, None], (1, WIDTH))
    calibration = MarginalCalibration.fit(
        {c: grid for c in CLASSES}, {c: 3 * grid + 2 for c in CLASSES}
    )
    probe = np.tile(np.linspace(0.05, 0.95, 19)[:, None], (1, WIDTH))
    np.testing.assert_allclose(calibration.apply(probe, label=0), 3.0 * probe + 2.0, atol=1e-3)


def test_saved_and_loaded_it_maps_the_same(tmp_path: Path) -> None:
    calibration, _ = _fitted()
    path = tmp_path / "calibration.json"
    path.write_text(calibration.to_json())
    loaded = MarginalCalibration.load(path)
    draw = np.random.default_rng(3).standard_normal((100, WIDTH))
    for label in CLASSES:
        np.testing.assert_allclose(loaded.apply(draw, label), calibration.apply(draw, label))


@pytest.mark.parametrize(
    "edit",
    [
        lambda p: {**p, "format": "wgangp.calibration/9"},
        lambda p: {**p, "classes": {"1": p["classes"]["1"]}},
        lambda p: _set_first_quantile(p, "oops"),
        lambda p: _set_first_quantile(p, None),
    ],
    ids=["format", "one class", "text", "null"],
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
            "(class 0 real quantiles of Time: quantiles not sorted (knot 2 of 63, 0.0147002, "
            "below knot 1, 50))",
        ),
        (
            lambda p: _set_first_quantile(p, -1e300),
            "(class 0 real quantiles of Time: quantile -1e+300 beyond 1e+16)",
        ),
        (
            lambda p: _edit_real(p, lambda t: t["references"].pop()),
            "(class 0 real quantiles hold 63 knots for 62 references)",
        ),
        (
            lambda p: _edit_real(p, lambda t: t["quantiles"][3].pop()),
            "(class 0 real quantiles are not quantiles 30 columns wide)",
        ),
        (
            lambda p: _edit_real(p, lambda t: t["references"].reverse()),
            "(class 0 real quantiles of Time: references from 0 to 1, not rising from 0 to 1)",
        ),
        (
            lambda p: _edit_real(p, lambda t: t["references"].__setitem__(-1, 2.0)),
            "(class 0 real quantiles of Time: references from 0 to 2, not rising from 0 to 1)",
        ),
    ],
    ids=["inf", "unsorted", "1e300", "lengths", "ragged", "references reversed", "references 2"],
)
def test_a_table_no_fit_writes_is_refused_naming_it(tmp_path: Path, edit, says: str) -> None:
    calibration, _ = _fitted()
    path = tmp_path / "calibration.json"
    path.write_text(calibration.to_json())
    path.write_text(json.dumps(edit(json.loads(path.read_text()))))
    with pytest.raises(DataError) as err:
        MarginalCalibration.load(path)
    assert str(err.value) == (
        f"{path} is not a usable calibration {says}; it was not written by wgangp's training or "
        "was edited: retrain to get a new one"
    )


def _edit_real(payload: dict, edit) -> dict:
    edit(payload["classes"]["0"]["real"])
    return payload


def _set_first_quantile(payload: dict, value: object) -> dict:
    payload["classes"]["0"]["real"]["quantiles"][0][0] = value
    return payload
