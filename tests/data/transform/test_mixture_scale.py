"""The Gaussian-mixture scale (``preprocess=gmm``): a column's modes, its tails, its file."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.special import ndtri
from support.creditcard import AMOUNT, FEATURES, LABEL, SCHEMA

from wgangp.data.builtin.simulated import simulate_creditcard
from wgangp.data.transform.mixture_scale import Z_MAX, GaussianMixtureScale
from wgangp.data.transform.table_transform import TableTransform
from wgangp.errors import DataError


@pytest.fixture(scope="module")
def two_modes() -> np.ndarray:
    """One column: 30% of the rows near -5, 70% near +5 (sd 1)."""
    rng = np.random.default_rng(0)
    return np.concatenate([rng.normal(-5, 1, 1200), rng.normal(5, 1, 2800)])[:, None]


def test_each_mode_gets_its_share_of_the_normal_scale(two_modes) -> None:
    """Between the modes the mixture's CDF is 0.3, so x = 0 lands at ndtri(0.3) = -0.524; the
    column as a whole comes out a standard normal (a z-score would leave it two lumps)."""
    scale = GaussianMixtureScale.fit(two_modes)
    weights, means = np.asarray(scale.weights[0]), np.asarray(scale.means[0])
    assert weights.sum() == pytest.approx(1.0)
    assert weights[means < 0].sum() == pytest.approx(0.3, abs=0.02)
    assert np.all(np.abs(np.abs(means) - 5) < 2)  # components sit on the modes, none between
    assert scale.forward(np.zeros((1, 1)))[0, 0] == pytest.approx(ndtri(0.3), abs=0.01)
    z = scale.forward(two_modes)
    assert abs(z.mean()) < 0.05 and abs(z.std() - 1) < 0.05
    np.testing.assert_allclose(scale.inverse(z), two_modes, atol=1e-8)


def test_the_inverse_reaches_beyond_the_fitted_rows_and_stays_finite(two_modes) -> None:
    """A quantile scale stops at the largest row; the mixture's Gaussian tail goes on, up to 8 sds
    of the outermost mode (fewer where that mode's share of the tail runs out first); NaN and
    infinite network outputs come back finite."""
    scale = GaussianMixtureScale.fit(two_modes)
    z = np.array([[4.0], [6.0], [Z_MAX], [50.0], [-50.0], [np.nan], [np.inf]])
    x = scale.inverse(z)[:, 0]
    assert np.isfinite(x).all()
    assert x[0] < x[1] < x[2] and x[1] > two_modes.max()
    means, sds = np.asarray(scale.means[0]), np.asarray(scale.sds[0])
    assert x[3] == x[2] <= max(means + 8 * sds)
    assert min(means - 8 * sds) <= x[4] < two_modes.min() - 2


def test_far_outliers_come_back_at_the_tail_bound(two_modes) -> None:
    """A row beyond the tail bound is squashed onto it (the networks never see |z| > 8)."""
    scale = GaussianMixtureScale.fit(two_modes)
    z = scale.forward(np.array([[1e6], [-1e6]]))
    np.testing.assert_array_equal(z[:, 0], [Z_MAX, -Z_MAX])


@pytest.fixture(scope="module")
def frame():
    return simulate_creditcard(3000, fraud_rate=0.1, seed=2)


def _classes(frame) -> np.ndarray:
    return SCHEMA.classes(frame[LABEL])


@pytest.mark.slow
def test_gmm_transform_round_trips_per_class(frame) -> None:
    labels = _classes(frame)
    transformer = TableTransform.fit(frame, SCHEMA, labels, scaling="gmm", point_masses=False)
    x = transformer.transform(frame, labels)
    assert x.dtype == np.float32 and np.isfinite(x).all() and np.abs(x).max() <= Z_MAX
    frauds = x[labels == 1]
    np.testing.assert_allclose(frauds.mean(axis=0)[1:29], 0.0, atol=0.1)  # the frauds' own scale
    back = transformer.inverse(x, labels)
    np.testing.assert_allclose(back["V14"], frame["V14"], rtol=1e-4, atol=1e-4)
    amount = frame[AMOUNT].clip(*transformer.columns[-1].schema.bounds)  # the 5 largest's mean
    np.testing.assert_allclose(back[AMOUNT], amount, atol=0.011)


@pytest.mark.slow
def test_gmm_files_are_saved_and_checked_on_load(frame) -> None:
    labels = _classes(frame)
    transformer = TableTransform.fit(frame, SCHEMA, labels, scaling="gmm", point_masses=False)
    payload = json.loads(transformer.to_json())
    v3 = FEATURES.index("V3")
    assert set(payload["columns"][v3]["scales"]["1"]) == {"weights", "means", "sds"}
    loaded = TableTransform.from_dict(payload, "p.json")
    np.testing.assert_array_equal(
        loaded.transform(frame, labels), transformer.transform(frame, labels)
    )
    for edit in (
        lambda mixture: mixture["sds"][0].__setitem__(0, -1.0),
        lambda mixture: mixture["means"][0].append(0.0),
        lambda mixture: mixture["weights"].pop(),
        lambda mixture: mixture["weights"][0].__setitem__(0, "oops"),
    ):
        broken = json.loads(json.dumps(payload))
        edit(broken["columns"][v3]["scales"]["1"])
        with pytest.raises(DataError, match="column V3: its scale of 1 "):
            TableTransform.from_dict(broken, "p.json")
    broken = json.loads(json.dumps(payload))
    broken["columns"][v3]["scales"]["0"]["means"][0][0] = math.inf
    with pytest.raises(DataError, match="column V3: its scale of 0 is non-finite"):
        TableTransform.from_dict(broken, "p.json")
