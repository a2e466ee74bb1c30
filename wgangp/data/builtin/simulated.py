"""A built-in, SIMULATED stand-in for Kaggle's credit-card fraud table.

It lets the project run end to end with no download and no credentials. Every number below is a
hand-chosen parameter that gives plausible scales (heavy-tailed PCA-like components, a day/night
cycle, log-normal amounts, frauds shifted along a shared "severity" direction); no real row or
value is embedded. Models trained on it learn nothing about real fraud.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from wgangp.data.builtin.creditcard import column_names
from wgangp.errors import ConfigError

_SECONDS_PER_DAY = 86_400.0
_SECONDS_PER_HOUR = 3_600.0
#: The last second of Kaggle's two days, as its Time column ends.
_TIME_MAX = 172_792.0

# Relative activity per hour of the day: normal card use sleeps at night, fraud much less so.
_NORMAL_HOURLY = np.array(
    [0.9, 0.55, 0.3, 0.22, 0.2, 0.25, 0.4, 0.65, 0.9, 1.0, 1.05, 1.05]
    + [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.05, 1.05, 1.05, 1.05, 1.0, 0.9]
)
_FRAUD_HOURLY = np.array(
    [0.8, 0.9, 1.5, 1.0, 1.0, 0.6, 0.6, 1.0, 0.7, 0.8, 0.7, 1.5]
    + [1.0, 1.0, 1.1, 1.2, 1.0, 1.2, 1.0, 1.0, 0.8, 0.8, 0.6, 0.8]
)

# Normal rows: standard deviation of V1..V28 (decreasing, like PCA components) and the
# Student-t degrees of freedom that set each column's tail weight (smaller = heavier).
_NORMAL_STD = np.array(
    [1.9, 1.65, 1.45, 1.4, 1.35, 1.3, 1.2, 1.2, 1.1, 1.05, 1.0, 0.95, 1.0, 0.9]
    + [0.92, 0.85, 0.8, 0.84, 0.81, 0.77, 0.73, 0.73, 0.62, 0.61, 0.52, 0.48, 0.4, 0.33]
)
_NORMAL_TAIL_DF = np.array(
    [5.0, 3.5, 6.0, 12.0, 3.5, 5.0, 3.5, 3.5, 8.0, 5.0, 30.0, 8.0, 30.0, 6.0]
    + [30.0, 10.0, 5.0, 15.0, 10.0, 3.5, 3.5, 8.0, 3.5, 20.0, 8.0, 20.0, 3.5, 3.5]
)

# Fraud rows: V = shift * severity + noise. Severity ~ Gamma (mean 1) is shared by all columns of
# a row, so frauds move together along one direction and range from "almost normal" to extreme.
_FRAUD_SHIFT = np.array(
    [-4.5, 3.0, -6.5, 4.5, -3.0, -1.5, -5.0, 1.0, -2.5, -5.5, 3.5, -6.0, 0.0, -6.5]
    + [0.0, -4.0, -6.5, -2.0, 0.7, 0.4, 0.5, 0.1, -0.1, -0.1, 0.0, 0.0, 0.15, 0.1]
)
_FRAUD_NOISE_STD = np.array(
    [5.5, 3.5, 4.5, 1.5, 4.5, 1.5, 5.5, 4.0, 1.8, 3.0, 1.5, 2.5, 1.1, 1.5]
    + [1.0, 2.5, 5.0, 2.2, 1.5, 1.3, 2.5, 1.1, 1.6, 0.5, 0.8, 0.5, 1.1, 0.5]
)
_FRAUD_SEVERITY_SHAPE = 2.5
_FRAUD_TAIL_DF = 4.0

# Correlations among normal rows come from two shared Gaussian factors, as {column: loading}.
# The Amount factor also drives the log-amount, so Amount correlates with those V's.
_AMOUNT_LOADINGS = {1: -0.55, 19: 0.45, 6: 0.35, 4: -0.3, 0: -0.2}  # V2, V20, V7, V5, V1
_SHARED_LOADINGS = {11: 0.45, 13: -0.45, 16: -0.45, 15: 0.33, 6: 0.33}  # V12, V14, V17, V16, V7

# Amount: a log-normal body, a cluster of ~1-unit card checks, and exact zeros.
_NORMAL_AMOUNT = {"median": 30.0, "sigma": 1.55, "p_small": 0.12, "p_zero": 0.006, "cap": 25_000.0}
_FRAUD_AMOUNT = {"median": 50.0, "sigma": 1.6, "p_small": 0.2, "p_zero": 0.05, "cap": 2_500.0}


def simulate_creditcard(
    n_rows: int = 284_807, fraud_rate: float = 0.00173, seed: int = 0
) -> pd.DataFrame:
    """Simulate a credit-card table with Kaggle's 31-column schema (simulated, not real data).

    Deterministic by ``seed``. Rows are sorted by Time, as in the real file. The fraud count is
    ``max(2, round(n_rows * fraud_rate))`` (and leaves at least 2 normal rows).
    """
    n_rows = int(n_rows)
    if n_rows < 4:
        raise ConfigError(f"simulated rows must be at least 4 (2 per class), got {n_rows}")
    if not 0.0 <= fraud_rate < 1.0:
        raise ConfigError(f"simulated fraud_rate must be in [0, 1), got {fraud_rate}")
    n_fraud = min(max(2, round(n_rows * fraud_rate)), n_rows - 2)
    rng = np.random.Generator(np.random.PCG64(seed))

    # Rows are generated in column-major arrays already in time order, and the few fraud rows
    # overwrite normal ones at positions drawn to follow the fraud hour profile: this avoids
    # permuting the whole table (the slow part at 284,807 rows).
    time = np.sort(_times(rng, n_rows))
    fraud_at = _fraud_positions(rng, time, n_fraud)
    pca, amount_factor = _normal_pca(rng, n_rows)
    amount = _amounts(rng, amount_factor, _NORMAL_AMOUNT)
    pca[:, fraud_at] = _fraud_pca(rng, n_fraud)
    amount[fraud_at] = _amounts(rng, rng.standard_normal(n_fraud), _FRAUD_AMOUNT)
    label = np.zeros(n_rows, np.int64)
    label[fraud_at] = 1

    features = np.vstack([time, pca, amount])  # (30, n): its transpose is one pandas block
    *feature_columns, label_column = column_names()
    frame = pd.DataFrame(features.T, columns=feature_columns, copy=False)
    frame[label_column] = label
    return frame


def _times(rng: np.random.Generator, n: int) -> np.ndarray:
    """Whole seconds over two days, with the hour of day following normal card activity."""
    day = rng.integers(0, 2, n)
    hour = rng.choice(24, size=n, p=_NORMAL_HOURLY / _NORMAL_HOURLY.sum())
    seconds = day * _SECONDS_PER_DAY + (hour + rng.random(n)) * _SECONDS_PER_HOUR
    return np.minimum(np.floor(seconds), _TIME_MAX)


def _fraud_positions(rng: np.random.Generator, time: np.ndarray, n_fraud: int) -> np.ndarray:
    """Pick fraud rows, weighted by fraud/normal activity at their hour (weighted sampling)."""
    hour = ((time % _SECONDS_PER_DAY) // _SECONDS_PER_HOUR).astype(np.int64)
    weight = (_FRAUD_HOURLY / _NORMAL_HOURLY)[hour]
    keys = np.log(rng.random(time.shape[0])) / weight  # Efraimidis-Spirakis: largest keys win
    return np.sort(np.argpartition(keys, -n_fraud)[-n_fraud:])


def _normal_pca(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """V1..V28 of normal rows as a (28, n) array, plus the Gaussian factor behind Amount."""
    pca = rng.standard_normal((28, n))
    amount_factor, shared_factor = rng.standard_normal((2, n))
    for column in set(_AMOUNT_LOADINGS) | set(_SHARED_LOADINGS):
        a, b = _AMOUNT_LOADINGS.get(column, 0.0), _SHARED_LOADINGS.get(column, 0.0)
        pca[column] *= np.sqrt(1.0 - a * a - b * b)
        pca[column] += a * amount_factor + b * shared_factor
    # Student-t tails: one mixing scale per row, shared by the columns of equal tail weight, so
    # outlier rows are extreme in several components at once, as in the real table.
    for tail_df in np.unique(_NORMAL_TAIL_DF):
        columns = tail_df == _NORMAL_TAIL_DF
        pca[columns] *= np.sqrt((tail_df - 2.0) / rng.chisquare(tail_df, n))
    pca *= _NORMAL_STD[:, None]
    return pca, amount_factor


def _fraud_pca(rng: np.random.Generator, n: int) -> np.ndarray:
    """V1..V28 of fraud rows as a (28, n) array: a shared severity times a shift, plus noise."""
    severity = rng.gamma(_FRAUD_SEVERITY_SHAPE, 1.0 / _FRAUD_SEVERITY_SHAPE, n)
    t_scale = np.sqrt(_FRAUD_TAIL_DF / (_FRAUD_TAIL_DF - 2.0))
    noise = rng.standard_t(_FRAUD_TAIL_DF, (28, n)) * (_FRAUD_NOISE_STD / t_scale)[:, None]
    return _FRAUD_SHIFT[:, None] * severity + noise


def _amounts(rng: np.random.Generator, z: np.ndarray, params: dict[str, float]) -> np.ndarray:
    """Log-normal body driven by ``z``, plus small-amount and zero clusters, in cents."""
    amount: np.ndarray = params["median"] * np.exp(params["sigma"] * z)
    kind = rng.random(len(z))
    small = kind < params["p_small"]
    amount[small] = np.exp(0.35 * rng.standard_normal(int(small.sum())))
    amount[kind > 1.0 - params["p_zero"]] = 0.0
    return np.round(np.clip(amount, 0.0, params["cap"]), 2)
