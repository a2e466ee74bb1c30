"""Fidelity: do synthetic frauds have the real frauds' marginals and correlations?

Compared against real TEST frauds (rows the GAN never saw). Per feature:

- KS statistic (scipy ``ks_2samp``): the largest gap between the two empirical CDFs, in [0, 1];
  scale-free. ``1 - KS`` is SDMetrics' ``KSComplement``.
- Wasserstein-1 (scipy ``wasserstein_distance``) on features standardized with the mean and
  standard deviation of the real TRAINING frauds, so it reads "in units of one fraud-class standard
  deviation" and features of different scale (Amount vs V14) average meaningfully.

Correlations: mean absolute difference of the off-diagonal Pearson correlations. A constant column
(collapsed generator) has no correlation; it counts as 0 there, so collapse shows up as a large gap.

SDMetrics: ``sdmetrics`` 0.25 installs beside this project's pins (numpy 2.4, pandas 3.1,
scikit-learn 1.9, scipy 1.17) without changing any of them, and its QualityReport ran warning-free
on pandas 3, so its overall score and its two property scores (Column Shapes = mean KSComplement,
Column Pair Trends = mean CorrelationSimilarity) are reported beside ours.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy.stats import ks_2samp, wasserstein_distance

from wgangp.data.schema import FEATURES
from wgangp.errors import ConfigError


def standardizer(reference: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Mean and scale per feature of ``reference``; a constant feature gets scale 1."""
    values = reference.loc[:, list(FEATURES)].to_numpy(dtype=np.float64)
    mean = values.mean(axis=0)
    scale = values.std(axis=0)
    scale[~(scale > 0)] = 1.0
    return mean, scale


def per_feature_table(
    real: pd.DataFrame, synthetic: pd.DataFrame, mean: np.ndarray, scale: np.ndarray
) -> pd.DataFrame:
    """KS statistic and standardized Wasserstein-1 per feature, real vs synthetic."""
    rows = []
    for i, name in enumerate(FEATURES):
        r = real[name].to_numpy(dtype=np.float64)
        s = synthetic[name].to_numpy(dtype=np.float64)
        rows.append(
            {
                "feature": name,
                "ks": float(ks_2samp(r, s).statistic),
                "wasserstein_std": float(
                    wasserstein_distance((r - mean[i]) / scale[i], (s - mean[i]) / scale[i])
                ),
                "real_mean": float(r.mean()),
                "synthetic_mean": float(s.mean()),
                "real_std": float(r.std()),
                "synthetic_std": float(s.std()),
            }
        )
    return pd.DataFrame(rows)


def correlation_matrix(frame: pd.DataFrame) -> pd.DataFrame:
    """Pearson correlations of the features; undefined entries (constant column) set to 0."""
    values = frame.loc[:, list(FEATURES)].to_numpy(dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = np.corrcoef(values, rowvar=False)
    corr = np.nan_to_num(corr, nan=0.0)
    np.fill_diagonal(corr, 1.0)
    return pd.DataFrame(corr, index=list(FEATURES), columns=list(FEATURES))


def correlation_difference(real: pd.DataFrame, synthetic: pd.DataFrame) -> float:
    """Mean absolute difference of the off-diagonal Pearson correlations."""
    gap = np.abs(correlation_matrix(real).to_numpy() - correlation_matrix(synthetic).to_numpy())
    upper = np.triu_indices_from(gap, k=1)
    return float(gap[upper].mean())


def sdmetrics_quality(real: pd.DataFrame, synthetic: pd.DataFrame) -> dict[str, float]:
    """SDMetrics' QualityReport on the features: overall, Column Shapes, Column Pair Trends."""
    try:
        from sdmetrics.reports.single_table import QualityReport
    except ImportError as err:
        raise ConfigError(
            "evaluate.sdmetrics=true but the sdmetrics package is not installed: "
            "pip install 'sdmetrics>=0.25,<0.26' or set evaluate.sdmetrics=false"
        ) from err
    features = list(FEATURES)
    metadata = {"columns": {name: {"sdtype": "numerical"} for name in features}}
    report = QualityReport()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant synthetic columns warn per pair; scored NaN
        report.generate(
            real.loc[:, features].reset_index(drop=True),
            synthetic.loc[:, features].reset_index(drop=True),
            metadata,
            verbose=False,
        )
    properties = report.get_properties().set_index("Property")["Score"]
    return {
        "sdm_quality_score": float(report.get_score()),
        "sdm_column_shapes": float(properties["Column Shapes"]),
        "sdm_column_pair_trends": float(properties["Column Pair Trends"]),
    }


def fidelity_metrics(
    real_test_fraud: pd.DataFrame,
    synthetic: pd.DataFrame,
    real_train_fraud: pd.DataFrame,
    *,
    with_sdmetrics: bool,
) -> tuple[dict[str, float], pd.DataFrame]:
    """Summary metrics (names without the ``eval/`` section) and the per-feature table."""
    mean, scale = standardizer(real_train_fraud)
    table = per_feature_table(real_test_fraud, synthetic, mean, scale)
    ks_mean = float(table["ks"].mean())
    metrics = {
        "ks_mean": ks_mean,
        "ks_max": float(table["ks"].max()),
        "ks_complement": 1.0 - ks_mean,
        "wasserstein_mean": float(table["wasserstein_std"].mean()),
        "corr_diff": correlation_difference(real_test_fraud, synthetic),
    }
    if with_sdmetrics:
        metrics.update(sdmetrics_quality(real_test_fraud, synthetic))
    return metrics, table
