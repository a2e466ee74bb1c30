"""The baselines: a Gaussian copula keeps the marginals without copying; SMOTE interpolates."""

from __future__ import annotations

import numpy as np
from scipy.stats import ks_2samp

from wgangp.evaluation.baselines import copula_rare, smote_rare
from wgangp.evaluation.disclosure import near_copy_share


def skewed_frauds(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(n, 3))
    return np.column_stack([base[:, 0], np.exp(base[:, 1]), base[:, 0] + 0.3 * base[:, 2]])


def test_copula_rows_keep_each_marginal_and_the_correlation() -> None:
    train = skewed_frauds(300, 0)
    rows = copula_rare(train, 2000, seed=1)
    assert rows.shape == (2000, 3) and np.isfinite(rows).all()
    for j in range(3):
        assert ks_2samp(rows[:, j], train[:, j]).statistic < 0.1, j
    corr = np.corrcoef(rows, rowvar=False)[0, 2]
    assert abs(corr - np.corrcoef(train, rowvar=False)[0, 2]) < 0.1
    assert (rows.min(axis=0) >= train.min(axis=0) - 1e-9).all()  # empirical quantiles: in range


def test_copula_rows_are_as_new_as_new_real_rows_and_smote_rows_are_not() -> None:
    train, test = skewed_frauds(300, 0), skewed_frauds(300, 1)
    normals = np.random.default_rng(2).normal(size=(500, 3)) + 5
    copula = copula_rare(train, 1000, seed=3)
    smote = smote_rare(train, normals, 1000, k_neighbors=5, seed=3)
    assert smote.shape == (1000, 3)
    assert near_copy_share(copula, train, test) < 0.15
    assert near_copy_share(smote, train, test) > 0.3
