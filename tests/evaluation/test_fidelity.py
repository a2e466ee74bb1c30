"""Fidelity metrics on known cases: identical samples score 0, a shifted sample scores high."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from support.creditcard import COLUMNS, FEATURES, LABEL, SCHEMA

from wgangp.evaluation.fidelity import correlation_difference, fidelity_metrics


def fraud_rows(n: int, seed: int) -> pd.DataFrame:
    """Correlated Gaussian frauds with wgangp's columns."""
    rng = np.random.default_rng(seed)
    mixing = np.eye(len(FEATURES)) + 0.3 * np.random.default_rng(99).normal(size=(30, 30))
    frame = pd.DataFrame(rng.normal(size=(n, len(FEATURES))) @ mixing, columns=list(FEATURES))
    frame[LABEL] = 1
    return frame.loc[:, list(COLUMNS)]


def test_identical_samples_have_zero_distance() -> None:
    real = fraud_rows(200, seed=1)
    metrics, table = fidelity_metrics(
        real, real.copy(), fraud_rows(300, 2), SCHEMA, with_sdmetrics=True
    )
    assert metrics["ks_mean"] == 0.0
    assert metrics["ks_complement"] == 1.0
    assert metrics["wasserstein_mean"] == pytest.approx(0.0, abs=1e-12)
    assert metrics["corr_diff"] == pytest.approx(0.0, abs=1e-12)
    assert metrics["sdm_quality_score"] == pytest.approx(1.0)
    assert list(table["feature"]) == list(FEATURES)


def test_shift_of_three_std_on_a_few_features_is_large() -> None:
    real, train = fraud_rows(300, seed=1), fraud_rows(300, seed=2)
    same = fraud_rows(300, seed=3)
    shifted = same.copy()
    shifted_features = ["V1", "V4", "V14"]
    for name in shifted_features:
        shifted[name] += 3 * train[name].std()
    base, _ = fidelity_metrics(real, same, train, SCHEMA, with_sdmetrics=False)
    metrics, table = fidelity_metrics(real, shifted, train, SCHEMA, with_sdmetrics=False)
    by_feature = table.set_index("feature")
    # a 3-sigma mean shift of a Gaussian: KS = 2*Phi(1.5) - 1 = 0.87 in the limit
    assert (by_feature.loc[shifted_features, "ks"] > 0.75).all()
    # standardized by the training frauds, so Wasserstein reads ~3 on the shifted features
    assert (by_feature.loc[shifted_features, "wasserstein_std"].between(2.5, 3.5)).all()
    assert by_feature.drop(index=shifted_features)["ks"].max() < 0.2
    assert metrics["ks_mean"] > base["ks_mean"] + 0.07
    # a shift does not change correlations
    assert metrics["corr_diff"] == pytest.approx(base["corr_diff"], abs=1e-9)


def test_constant_synthetic_column_counts_as_zero_correlation() -> None:
    real = fraud_rows(200, seed=1)
    collapsed = real.copy()
    collapsed["V2"] = 0.5
    gap = correlation_difference(real, collapsed, SCHEMA)
    assert np.isfinite(gap) and gap > 0
