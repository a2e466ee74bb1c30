"""The transform is invertible to original units and fitted on what it is given only."""

from __future__ import annotations

import numpy as np
import pytest

from wgangp.data.schema import AMOUNT, COLUMNS, FEATURES, LABEL, PCA_FEATURES, TIME
from wgangp.data.simulated import simulate_creditcard
from wgangp.data.transform import TabularTransformer


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
    np.testing.assert_allclose(back[AMOUNT], frame[AMOUNT], atol=0.011 + 1e-6 * frame[AMOUNT].max())
    np.testing.assert_allclose(back[TIME], frame[TIME].round(), atol=1.0)
    assert (back[LABEL].to_numpy() == frame[LABEL].to_numpy()).all()


def test_inverse_keeps_amount_and_time_in_range(frame) -> None:
    transformer = TabularTransformer().fit(frame)
    wild = np.random.default_rng(0).normal(scale=50, size=(500, len(FEATURES))).astype(np.float32)
    back = transformer.inverse_transform(wild)
    assert (back[AMOUNT] >= 0).all() and np.isfinite(back[AMOUNT]).all()
    assert back[TIME].between(frame[TIME].min(), frame[TIME].max()).all()


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
