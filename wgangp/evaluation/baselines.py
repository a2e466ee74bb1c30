"""The cheap alternatives a fraud team would try first, judged exactly like the GAN's rows.

- SMOTE (imbalanced-learn): interpolates between a training fraud and one of its nearest fraud
  neighbours, so its rows sit on segments between real customers' rows.
- A Gaussian copula fitted on the training frauds: each feature through its empirical quantiles
  onto a normal scale (scikit-learn's ``QuantileTransformer``), one covariance of the transformed
  rows, multivariate normal draws mapped back. It keeps every marginal and the linear
  dependence, nothing more, and never copies a row.

Both see the training frauds only (SMOTE also the normals it balances against, which do not
change its fraud rows), as the GAN does.
"""

from __future__ import annotations

import numpy as np
from imblearn.over_sampling import SMOTE

from wgangp.data.schema import FRAUD
from wgangp.serving.copula import GaussianCopula

#: The generators the GAN is compared with, by the names their metrics carry.
BASELINES = ("smote", "copula")


def smote_frauds(
    frauds: np.ndarray, normals: np.ndarray, n: int, *, k_neighbors: int, seed: int
) -> np.ndarray:
    """``n`` new fraud rows made by SMOTE from the training frauds."""
    x = np.vstack([normals, frauds])
    y = np.concatenate([np.zeros(len(normals), dtype=int), np.ones(len(frauds), dtype=int)])
    sampler = SMOTE(
        sampling_strategy={0: len(normals), 1: len(frauds) + n},
        k_neighbors=min(k_neighbors, len(frauds) - 1),
        random_state=seed,
    )
    resampled, _ = sampler.fit_resample(x, y)
    return np.asarray(resampled)[len(x) :]


def copula_frauds(frauds: np.ndarray, n: int, *, seed: int) -> np.ndarray:
    """``n`` fraud rows from a Gaussian copula with the training frauds' empirical marginals
    (the one a synthesizer draws a share of its rows from, :mod:`wgangp.serving.copula`)."""
    copula = GaussianCopula.fit({FRAUD: frauds})
    return copula.draw(n, FRAUD, np.random.default_rng(seed))


def baseline_frauds(
    name: str,
    frauds: np.ndarray,
    normals: np.ndarray,
    n: int,
    *,
    smote_k_neighbors: int,
    seed: int,
) -> np.ndarray:
    """``n`` rows of the baseline ``name`` (one of :data:`BASELINES`)."""
    if name == "smote":
        return smote_frauds(frauds, normals, n, k_neighbors=smote_k_neighbors, seed=seed)
    if name == "copula":
        return copula_frauds(frauds, n, seed=seed)
    raise ValueError(f"unknown baseline {name!r}; choose one of {BASELINES}")
