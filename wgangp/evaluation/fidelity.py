"""Fidelity: do synthetic rows have the real rare-class rows' marginals and correlations?

Compared against real TEST rows of the rare class (rows the GAN never saw), column by column, by
the column's kind in the table's schema:

- numbers (continuous, integer, datetime as seconds), on the values present: KS statistic
  (scipy ``ks_2samp``): the largest gap between the two empirical CDFs, in [0, 1]; scale-free.
  ``1 - KS`` is SDMetrics' ``KSComplement``. Wasserstein-1 (scipy ``wasserstein_distance``) on
  values standardized with the mean and standard deviation of the real TRAINING rare-class rows,
  so it reads "in units of one class standard deviation" and columns of different scale (Amount
  vs V14) average meaningfully.
- categories: total variation distance of the level shares among the values present,
  ``0.5 * sum |p_real - p_synthetic|``, in [0, 1] (``1 - TV`` is SDMetrics' ``TVComplement``).
- gaps, per nullable column: the share of empty cells, real against synthetic; the metric is the
  absolute difference in percentage points.

Correlations, numeric columns only: mean absolute difference of the off-diagonal Pearson
correlations (pairwise-complete when a column has gaps). A constant column (collapsed generator)
has no correlation; it counts as 0 there, so collapse shows up as a large gap.

SDMetrics: ``sdmetrics`` 0.25 installs beside this project's pins (numpy 2.4, pandas 3.1,
scikit-learn 1.9, scipy 1.17) without changing any of them, and its QualityReport ran warning-free
on pandas 3, so its overall score and its two property scores (Column Shapes = mean KSComplement
and TVComplement, Column Pair Trends = mean CorrelationSimilarity and ContingencySimilarity) are
reported beside ours; its metadata comes from the schema (categorical columns as categorical,
datetimes as numbers of seconds).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy.stats import ks_2samp, wasserstein_distance

from wgangp.data.schema.table_schema import ColumnSchema, TableSchema
from wgangp.errors import ConfigError
from wgangp.evaluation.encoding import NUMBER_KINDS, TableEncoding, level_codes, seconds


def standardizer(reference: pd.DataFrame, schema: TableSchema) -> tuple[np.ndarray, np.ndarray]:
    """Mean and scale per numeric column of ``reference``; a constant column gets scale 1."""
    encoding = TableEncoding(schema, reference)
    return encoding.mean, encoding.scale


def numeric_names(schema: TableSchema) -> list[str]:
    return [c.name for c in schema.features if c.kind in NUMBER_KINDS]


def gap_share(values: pd.Series) -> float:
    """The share of empty cells (0 for an empty column)."""
    return float(values.isna().mean()) if len(values) else 0.0


def total_variation(real: pd.Series, synthetic: pd.Series, column: ColumnSchema) -> float:
    """Half the L1 distance of the level shares among present values (1 when a side has none)."""
    shares = []
    for values in (real, synthetic):
        codes = level_codes(values, column)
        codes = codes[codes >= 0]
        if not len(codes):
            return 1.0 if len(values) else float("nan")
        shares.append(np.bincount(codes, minlength=len(column.levels or ())) / len(codes))
    return float(0.5 * np.abs(shares[0] - shares[1]).sum())


def per_feature_table(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    mean: np.ndarray,
    scale: np.ndarray,
    schema: TableSchema,
) -> pd.DataFrame:
    """Per feature: KS and standardized Wasserstein-1 (numbers), total variation (categories),
    shares of gaps (nullable columns), real vs synthetic."""
    rows = []
    numbers = {name: i for i, name in enumerate(numeric_names(schema))}
    for column in schema.features:
        name = column.name
        row: dict[str, object] = {"feature": name}
        if column.kind == "categorical":
            row |= {"kind": column.kind, "tv": total_variation(real[name], synthetic[name], column)}
        else:
            row["kind"] = column.kind
            row |= _number_row(
                real[name], synthetic[name], mean[numbers[name]], scale[numbers[name]]
            )
        if column.nullable:
            row |= {
                "real_gap_share": gap_share(real[name]),
                "synthetic_gap_share": gap_share(synthetic[name]),
            }
        rows.append(row)
    return pd.DataFrame(rows)


def _number_row(real: pd.Series, synthetic: pd.Series, mean: float, scale: float) -> dict:
    r, s = seconds(real), seconds(synthetic)
    r, s = r[~np.isnan(r)], s[~np.isnan(s)]
    if not len(r) or not len(s):  # one side has only gaps: as far apart as it gets
        nan = float("nan")
        return {"ks": 1.0 if len(r) or len(s) else nan, "wasserstein_std": nan}
    return {
        "ks": float(ks_2samp(r, s).statistic),
        "wasserstein_std": float(wasserstein_distance((r - mean) / scale, (s - mean) / scale)),
        "real_mean": float(r.mean()),
        "synthetic_mean": float(s.mean()),
        "real_std": float(r.std()),
        "synthetic_std": float(s.std()),
    }


def correlation_matrix(frame: pd.DataFrame, schema: TableSchema) -> pd.DataFrame:
    """Pearson correlations of the numeric columns (pairwise-complete where there are gaps);
    undefined entries (a constant column) set to 0."""
    names = numeric_names(schema)
    if not names:
        return pd.DataFrame()
    values = (
        np.column_stack([seconds(frame[name]) for name in names])
        if names
        else np.empty((len(frame), 0))
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        if np.isnan(values).any():
            corr = pd.DataFrame(values).corr(min_periods=2).to_numpy()
        else:
            corr = np.corrcoef(values, rowvar=False)
    corr = np.nan_to_num(np.atleast_2d(corr), nan=0.0)
    np.fill_diagonal(corr, 1.0)
    return pd.DataFrame(corr, index=names, columns=names)


def correlation_difference(
    real: pd.DataFrame, synthetic: pd.DataFrame, schema: TableSchema
) -> float:
    """Mean absolute difference of the off-diagonal Pearson correlations (numeric columns)."""
    gap = np.abs(
        correlation_matrix(real, schema).to_numpy()
        - correlation_matrix(synthetic, schema).to_numpy()
    )
    upper = np.triu_indices_from(gap, k=1)
    return float(gap[upper].mean())


def sdmetrics_quality(
    real: pd.DataFrame, synthetic: pd.DataFrame, schema: TableSchema
) -> dict[str, float]:
    """SDMetrics' QualityReport on the features: overall, Column Shapes, Column Pair Trends."""
    try:
        from sdmetrics.reports.single_table import QualityReport
    except ImportError as err:
        raise ConfigError(
            "evaluate.sdmetrics=true but the sdmetrics package is not installed: "
            "pip install 'sdmetrics>=0.25,<0.26' or set evaluate.sdmetrics=false"
        ) from err
    metadata = {
        "columns": {
            c.name: {"sdtype": "categorical" if c.kind == "categorical" else "numerical"}
            for c in schema.features
        }
    }
    report = QualityReport()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant synthetic columns warn per pair; scored NaN
        report.generate(
            _sdmetrics_frame(real, schema),
            _sdmetrics_frame(synthetic, schema),
            metadata,
            verbose=False,
        )
    properties = report.get_properties().set_index("Property")["Score"]
    return {
        "sdm_quality_score": float(report.get_score()),
        "sdm_column_shapes": float(properties["Column Shapes"]),
        "sdm_column_pair_trends": float(properties["Column Pair Trends"]),
    }


def _sdmetrics_frame(frame: pd.DataFrame, schema: TableSchema) -> pd.DataFrame:
    """The features, datetimes as seconds (declared numerical)."""
    out = frame.loc[:, [c.name for c in schema.features]].reset_index(drop=True)
    for column in schema.features:
        if column.kind == "datetime":
            out[column.name] = seconds(out[column.name])
    return out


def fidelity_metrics(
    real_test_rare: pd.DataFrame,
    synthetic: pd.DataFrame,
    real_train_rare: pd.DataFrame,
    schema: TableSchema,
    *,
    with_sdmetrics: bool,
) -> tuple[dict[str, float], pd.DataFrame]:
    """Summary metrics (names without the ``eval/`` section) and the per-feature table; a kind's
    metrics appear when the table has columns of that kind."""
    mean, scale = standardizer(real_train_rare, schema)
    table = per_feature_table(real_test_rare, synthetic, mean, scale, schema)
    metrics: dict[str, float] = {}
    if numeric_names(schema):
        ks = table["ks"].dropna()
        ks_mean = float(ks.mean())
        metrics |= {
            "ks_mean": ks_mean,
            "ks_max": float(ks.max()),
            "ks_complement": 1.0 - ks_mean,
            "wasserstein_mean": float(table["wasserstein_std"].mean()),
        }
        if len(numeric_names(schema)) > 1:
            metrics["corr_diff"] = correlation_difference(real_test_rare, synthetic, schema)
    if "tv" in table:
        tv = table["tv"].dropna()
        metrics |= {"tv_mean": float(tv.mean()), "tv_max": float(tv.max())}
    if "real_gap_share" in table:
        nullable = table.dropna(subset=["real_gap_share"])
        points = 100.0 * (nullable["real_gap_share"] - nullable["synthetic_gap_share"]).abs()
        metrics |= {
            "gap_share_diff_mean": float(points.mean()),
            "gap_share_diff_max": float(points.max()),
        }
    if with_sdmetrics:
        metrics.update(sdmetrics_quality(real_test_rare, synthetic, schema))
    return metrics, table
