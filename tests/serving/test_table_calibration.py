"""The calibration of a user's table: numbers onto the training quantiles, each level's mean
probability onto its training share, each gap share onto the training one; stored and checked."""

from __future__ import annotations

import json

import numpy as np
import pytest

from wgangp.data.table_layout import Block
from wgangp.serving.table_calibration import TableCalibration

LAYOUT = (
    Block("amount", "continuous", 0, 1),
    Block("amount", "missing", 1, 1),
    Block("merchant", "categorical", 2, 3),
)


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
def fitted() -> tuple[TableCalibration, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    real = {0: _real(rng, 400), 1: _real(rng, 200)}
    generated = {0: _generated(rng, 20_000), 1: _generated(rng, 20_000)}
    return TableCalibration.fit(LAYOUT, generated, real, 5), generated[1], real[1]


def test_each_kind_gets_the_training_marginal(fitted) -> None:
    calibration, generated, real = fitted
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


def test_it_round_trips_and_an_edited_file_is_one_line(fitted, tmp_path) -> None:
    calibration, generated, _ = fitted
    path = tmp_path / "calibration.json"
    path.write_text(calibration.to_json())
    again = TableCalibration.load(path)
    np.testing.assert_array_equal(again.apply(generated, 1), calibration.apply(generated, 1))
    raw = json.loads(path.read_text())
    raw["classes"]["1"]["weights"]["2"] = [1.0, -1.0, 1.0]
    path.write_text(json.dumps(raw))
    with pytest.raises(Exception, match="level weights of merchant are not >= 0") as info:
        TableCalibration.load(path)
    assert "\n" not in str(info.value)
