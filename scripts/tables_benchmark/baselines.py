"""The cheap generators a team would try first, fitted on the same training rows as the model.

- SMOTE, or SMOTE-NC when the table has categorical (or gap) columns: interpolation between a
  training rare row and one of its rare neighbours (imbalanced-learn); integers rounded.
- A Gaussian copula of the rare training rows (the project's, :mod:`wgangp.serving.copula`, on
  the coded rows: categoricals as codes, so their shares are kept, rounded back to levels).
- Independent marginals: each column resampled on its own from the rare training rows, the
  floor any model of dependence between columns must beat.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from imblearn.over_sampling import SMOTE, SMOTENC

from scripts.tables_benchmark.codes import TableCodes
from wgangp.data.schema.table_schema import RARE
from wgangp.serving.copula import GaussianCopula

#: Common-class rows SMOTE balances against (they do not change its rare rows; speed).
MAX_COMMON_ROWS = 20_000
K_NEIGHBORS = 5


def smote_rows(
    codes: TableCodes, rare: pd.DataFrame, common: pd.DataFrame, n: int, seed: int
) -> pd.DataFrame:
    """``n`` rows by SMOTE (SMOTE-NC when some coded column is discrete)."""
    x_rare, x_common = codes.encode(rare), codes.encode(common.iloc[:MAX_COMMON_ROWS])
    x = np.vstack([x_common, x_rare])
    y = np.concatenate([np.zeros(len(x_common), int), np.ones(len(x_rare), int)])
    strategy = {0: len(x_common), 1: len(x_rare) + n}
    k = min(K_NEIGHBORS, len(x_rare) - 1)
    discrete = [codes.names.index(name) for name in codes.discrete]
    if discrete:
        sampler = SMOTENC(discrete, sampling_strategy=strategy, k_neighbors=k, random_state=seed)
    else:
        sampler = SMOTE(sampling_strategy=strategy, k_neighbors=k, random_state=seed)
    resampled, _ = sampler.fit_resample(x, y)
    return codes.decode(np.asarray(resampled, np.float64)[len(x) :])


def copula_rows(codes: TableCodes, rare: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """``n`` rows of a Gaussian copula with the rare training rows' empirical marginals.

    Codes (categoricals, gap columns) are spread uniformly within +-0.45 of themselves before
    the fit: the quantiles interpolate between training values, and between two tied codes that
    would round a share of draws to the wrong one; spread, each code keeps its share.
    """
    rng = np.random.default_rng(seed)
    x = codes.encode(rare)
    discrete = [codes.names.index(name) for name in codes.discrete]
    x[:, discrete] += rng.uniform(-0.45, 0.45, size=(len(x), len(discrete)))
    copula = GaussianCopula.fit({RARE: x})
    return codes.decode(copula.draw(n, RARE, rng))


def marginal_rows(rare: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """``n`` rows whose every column is drawn on its own from the rare training rows."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {name: rare[name].to_numpy()[rng.integers(0, len(rare), n)] for name in rare.columns}
    )
