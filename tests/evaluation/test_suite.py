"""run_evaluation end to end at tiny sizes: metric names, files, repeatability, clear errors."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support.creditcard import COLUMNS, FEATURES, LABEL, SCHEMA

from wgangp.config import EvaluateConfig
from wgangp.errors import ConfigError, DataError
from wgangp.evaluation.suite import EvaluationResult, run_evaluation

#: Names the lead logs to MLflow; a rename here is a breaking change.
CORE_METRICS = [
    "eval/ks_mean",
    "eval/ks_complement",
    "eval/wasserstein_mean",
    "eval/corr_diff",
    "eval/c2st_auc_logreg",
    "eval/c2st_auc_gbm",
    "eval/c2st_auc_gbm_std",
    "eval/c2st_auc_gbm_control",
    "eval/c2st_auc_logreg_control",
    "eval/c2st_auc_gbm_copula",
    "eval/c2st_auc_gbm_smote",
    "eval/pr_auc_real",
    "eval/pr_auc_augmented",
    "eval/pr_auc_augmented_r1",
    "eval/pr_auc_smote",
    "eval/pr_auc_ros",
    "eval/pr_auc_tstr",
    "eval/pr_auc_real_std",
    "eval/pr_auc_smote_logreg",
    "eval/pr_auc_smote_logreg_std",
    "eval/lift_vs_real",
    "eval/lift_vs_smote",
    "eval/lift_vs_smote_std",
    "eval/pr_auc_copula",
    "eval/lift_vs_copula",
    "eval/lift_vs_copula_std",
    "eval/near_copies",
    "eval/near_copies_smote",
    "eval/near_copies_copula",
    "eval/roc_auc_real",
    "eval/roc_auc_augmented",
    "eval/recall_at_p90_real",
    "eval/recall_at_p90_augmented",
    "eval/dcr_synthetic_median",
    "eval/dcr_baseline_median",
    "eval/dcr_ratio",
    "eval/dcr_share_below_p5",
    "eval/exact_copies",
]
SDMETRICS_METRICS = ["eval/sdm_quality_score", "eval/sdm_column_shapes"]


def toy_rows(n_normal: int, n_fraud: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.normal(size=(n_normal + n_fraud, 30)), columns=list(FEATURES))
    frame.loc[n_normal:, ["V1", "V2", "V3"]] += 1.5
    frame[LABEL] = np.r_[np.zeros(n_normal, dtype=int), np.ones(n_fraud, dtype=int)]
    return frame.loc[:, list(COLUMNS)]


def sampler(n: int, seed: int) -> pd.DataFrame:
    return toy_rows(0, n, seed % 2**31 + 7)


def tiny_settings(**overrides) -> EvaluateConfig:
    values = dict(
        n_synthetic=120,
        augment_ratios=[1.0],
        seeds=2,
        max_normal_rows=500,
        c2st_repeats=3,
        gbm_max_iter=20,
        sdmetrics=False,
    )
    return EvaluateConfig(**(values | overrides))


@pytest.fixture(scope="module")
def toy_result() -> EvaluationResult:
    return run_evaluation(
        toy_rows(1500, 40, 1), toy_rows(800, 30, 2), sampler, tiny_settings(), SCHEMA
    )


def test_all_metric_names_are_present_and_finite(toy_result: EvaluationResult) -> None:
    missing = [name for name in CORE_METRICS if name not in toy_result.metrics]
    assert not missing
    assert all(name.startswith("eval/") for name in toy_result.metrics)
    assert all(math.isfinite(v) for v in toy_result.metrics.values())
    assert set(toy_result.tables) >= {"utility", "fidelity_per_feature", "disclosure", "detection"}


def test_same_inputs_and_seed_give_the_same_metrics(toy_result: EvaluationResult) -> None:
    again = run_evaluation(
        toy_rows(1500, 40, 1), toy_rows(800, 30, 2), sampler, tiny_settings(), SCHEMA
    )
    assert again.metrics == toy_result.metrics
    other = run_evaluation(
        toy_rows(1500, 40, 1), toy_rows(800, 30, 2), sampler, tiny_settings(), SCHEMA, seed=1
    )
    assert other.metrics["eval/ks_mean"] != toy_result.metrics["eval/ks_mean"]


def test_write_creates_the_report_files(toy_result: EvaluationResult, tmp_path: Path) -> None:
    written = toy_result.write(tmp_path / "eval")
    names = {p.name for p in written}
    assert {"marginals.png", "correlations.png", "projection.png"} <= names
    assert {"report.md", "report.html", "utility.csv", "disclosure.csv", "metrics.csv"} <= names
    assert all(p.exists() for p in written)
    for png in ("marginals.png", "correlations.png", "projection.png"):
        data = (tmp_path / "eval" / png).read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) > 10_000
    report = (tmp_path / "eval" / "report.md").read_text()
    assert "eval/pr_auc_smote" in report and "![" in report
    assert "eval/pr_auc_smote" in (tmp_path / "eval" / "report.html").read_text()
    metrics = pd.read_csv(tmp_path / "eval" / "metrics.csv")
    assert len(metrics) == len(toy_result.metrics)


def test_a_sampler_returning_nan_fails_with_one_line() -> None:
    def broken(n: int, seed: int) -> pd.DataFrame:
        rows = sampler(n, seed)
        rows.loc[0, "V3"] = np.nan
        return rows

    with pytest.raises(DataError, match="NaN") as info:
        run_evaluation(toy_rows(500, 20, 1), toy_rows(300, 10, 2), broken, tiny_settings(), SCHEMA)
    assert "\n" not in str(info.value)


def test_a_sampler_returning_too_few_rows_fails() -> None:
    with pytest.raises(DataError, match="instead of a DataFrame of 120 rows"):
        run_evaluation(
            toy_rows(500, 20, 1),
            toy_rows(300, 10, 2),
            lambda n, s: sampler(5, s),
            tiny_settings(),
            SCHEMA,
        )


def test_a_test_split_without_frauds_fails() -> None:
    with pytest.raises(DataError, match="real_test"):
        run_evaluation(toy_rows(500, 20, 1), toy_rows(300, 0, 2), sampler, tiny_settings(), SCHEMA)


def test_missing_columns_fail() -> None:
    with pytest.raises(DataError, match="lacks columns"):
        run_evaluation(
            toy_rows(500, 20, 1).drop(columns=["V7"]),
            toy_rows(300, 10, 2),
            sampler,
            tiny_settings(),
            SCHEMA,
        )


def test_invalid_settings_fail_before_any_work() -> None:
    with pytest.raises(ConfigError, match="evaluate.headline_ratio"):
        run_evaluation(
            toy_rows(500, 20, 1),
            toy_rows(300, 10, 2),
            sampler,
            tiny_settings(headline_ratio=3.0),
            SCHEMA,
        )


@pytest.mark.slow
def test_on_the_real_sample_with_jittered_training_frauds(
    tmp_path: Path, real_sample: Path
) -> None:
    frame = pd.read_csv(real_sample)
    frame[LABEL] = frame[LABEL].astype(int)
    rng = np.random.default_rng(0)
    is_test = np.zeros(len(frame), dtype=bool)
    for label in (0, 1):
        rows = np.flatnonzero(frame[LABEL].to_numpy() == label)
        is_test[rng.choice(rows, len(rows) // 5, replace=False)] = True
    train, test = frame[~is_test], frame[is_test]
    frauds = train[train[LABEL] == 1].reset_index(drop=True)
    scale = frauds[list(FEATURES)].std().to_numpy()

    def jittered_training_frauds(n: int, seed: int) -> pd.DataFrame:
        draw = np.random.default_rng(seed)
        rows = frauds.iloc[draw.integers(0, len(frauds), n)].reset_index(drop=True)
        noise = draw.normal(size=(n, len(FEATURES))) * scale * 0.1
        rows[list(FEATURES)] = rows[list(FEATURES)].to_numpy() + noise
        return rows

    result = run_evaluation(
        train,
        test,
        jittered_training_frauds,
        tiny_settings(n_synthetic=300, seeds=1, max_normal_rows=3000, sdmetrics=True),
        SCHEMA,
    )
    for name in CORE_METRICS + SDMETRICS_METRICS:
        assert math.isfinite(result.metrics[name]), name
    assert result.metrics["eval/n_test_rare"] == 59
    # our KS agrees with SDMetrics' KSComplement (Column Shapes = its mean over columns)
    assert result.metrics["eval/ks_complement"] == pytest.approx(
        result.metrics["eval/sdm_column_shapes"], abs=1e-9
    )
    # jittered copies of training frauds sit much closer to the training rows than new frauds
    assert result.metrics["eval/dcr_ratio"] < 1
    assert result.metrics["eval/exact_copies"] == 0
    assert result.metrics["eval/pr_auc_real"] > 0.5  # the real detector works on real frauds
    assert {"report.md", "marginals.png"} <= {p.name for p in result.write(tmp_path)}
