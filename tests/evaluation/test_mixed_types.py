"""The evaluation on a table with integers, categories and gaps: hand-checked pieces, then the
whole ``run_evaluation`` on a small fixture and on the shared credit-scoring table."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from wgangp.config import EvaluateConfig, SelectConfig
from wgangp.data.schema.inference import infer_schema
from wgangp.data.schema.table_schema import ColumnSchema, TableSchema
from wgangp.errors import DataError
from wgangp.evaluation.baselines import baseline_rows
from wgangp.evaluation.disclosure import is_copy
from wgangp.evaluation.encoding import TableEncoding
from wgangp.evaluation.fidelity import fidelity_metrics, total_variation
from wgangp.evaluation.suite import EvaluationResult, run_evaluation
from wgangp.synthesis.selection import ValidationProbe

LEVELS = ("a", "b", "c")
SCHEMA = TableSchema(
    columns=(
        ColumnSchema("count", "integer", bounds=(0, 20), missing=1, nullable=True),
        ColumnSchema("kind", "categorical", levels=LEVELS, missing=1, nullable=True),
        ColumnSchema("amount", "continuous", bounds=(-10.0, 10.0)),
        ColumnSchema("is_bad", "categorical", levels=("no", "yes")),
    ),
    label="is_bad",
    positive="yes",
)
CREDIT_DATA = Path("../shared/data/tables/credit_data_modeldata.csv.gz")


def mixed_rows(n_other: int, n_rare: int, seed: int) -> pd.DataFrame:
    """The rare class has more of level "c", higher counts, larger amounts and more gaps."""
    rng = np.random.default_rng(seed)
    rare = np.r_[np.zeros(n_other, dtype=bool), np.ones(n_rare, dtype=bool)]
    n = len(rare)
    count = rng.poisson(np.where(rare, 6, 3)).clip(0, 20).astype(np.float64)
    count[rng.random(n) < np.where(rare, 0.2, 0.05)] = np.nan
    kind = np.where(
        rng.random(n) < np.where(rare, 0.6, 0.2), "c", rng.choice(["a", "b"], n)
    ).astype(object)
    kind[rng.random(n) < 0.1] = np.nan
    amount = (rng.normal(size=n) + np.where(rare, 1.0, 0.0)).clip(-10, 10)
    frame = pd.DataFrame({"count": count, "kind": kind, "amount": amount})
    frame[SCHEMA.label] = np.where(rare, "yes", "no")
    return frame


def rare_sampler(n: int, seed: int) -> pd.DataFrame:
    return mixed_rows(0, n, seed % 2**31 + 11)


def settings(**overrides) -> EvaluateConfig:
    values = dict(
        n_synthetic=120,
        augment_ratios=[1.0],
        seeds=1,
        max_normal_rows=500,
        c2st_repeats=2,
        gbm_max_iter=10,
        sdmetrics=True,
    )
    return EvaluateConfig(**(values | overrides))


def test_total_variation_by_hand() -> None:
    real = pd.Series(["a", "a", "b", np.nan], dtype=object)
    synthetic = pd.Series(["a", "b", "b", "c"], dtype=object)
    # shares among present values: real (2/3, 1/3, 0), synthetic (1/4, 1/2, 1/4)
    tv = total_variation(real, synthetic, SCHEMA.column("kind"))
    assert tv == pytest.approx(0.5 * (5 / 12 + 2 / 12 + 3 / 12))
    assert total_variation(real, real, SCHEMA.column("kind")) == 0.0


def test_gap_share_difference_in_points_by_hand() -> None:
    real = pd.DataFrame(
        {"count": [1.0, np.nan, 3.0, 4.0], "kind": ["a", "a", "b", np.nan], "amount": [0.0] * 4}
    )
    synthetic = real.assign(count=[1.0, 2.0, 3.0, 4.0], kind=["a", "b", "b", "c"])
    metrics, table = fidelity_metrics(real, synthetic, real, SCHEMA, with_sdmetrics=False)
    # count: 25% gaps against 0%; kind: 25% against 0%
    assert metrics["gap_share_diff_mean"] == pytest.approx(25.0)
    assert metrics["gap_share_diff_max"] == pytest.approx(25.0)
    assert metrics["tv_mean"] == pytest.approx(5 / 12)
    row = table.set_index("feature").loc["count"]
    assert row["real_gap_share"] == 0.25 and row["synthetic_gap_share"] == 0.0
    # KS on present values only: real (1, 3, 4) against (1, 2, 3, 4); at 2 the CDFs read 1/3, 2/4
    assert row["ks"] == pytest.approx(1 / 6)


def test_mixed_distance_of_two_rows_by_hand() -> None:
    reference = pd.DataFrame(
        {
            "count": [1.0, 3.0, np.nan, 1.0],  # median 1; filled (1, 3, 1, 1)
            "kind": ["a", "b", "c", np.nan],
            "amount": [0.0, 2.0, 0.0, 2.0],  # mean 1, std 1
        }
    )
    encoding = TableEncoding(SCHEMA, reference)
    rows = pd.DataFrame(
        {"count": [np.nan, 1.0, np.nan], "kind": ["a", "b", np.nan], "amount": [0.0, 2.0, 0.0]}
    )
    points = encoding.distance_matrix(rows)
    # amount differs by 2 std; count: a gap against 1 = the median: indicator only; kind differs
    assert np.linalg.norm(points[0] - points[1]) == pytest.approx(math.sqrt(4 + 1 + 1))
    # a category against a gap counts 1, like a category against another
    assert np.linalg.norm(points[0] - points[2]) == pytest.approx(1.0)
    assert np.isfinite(points).all() and points.shape == (3, 1 + 2 + 3 + 1)


def test_an_exact_copy_needs_every_feature_and_gap_equal() -> None:
    rows = pd.DataFrame({"count": [np.nan, 2.0], "kind": [np.nan, "b"], "amount": [0.5, 1.0]})
    same = rows.copy()
    other_gap = rows.assign(count=[1.0, 2.0])
    other_kind = rows.assign(kind=["a", "c"])
    assert is_copy(rows, same, 1e-6, SCHEMA).tolist() == [True, True]
    assert is_copy(rows, other_gap, 1e-6, SCHEMA).tolist() == [False, True]
    assert is_copy(rows, other_kind, 1e-6, SCHEMA).tolist() == [False, False]


@pytest.mark.parametrize("name", ["smote", "copula", "independent"])
def test_baseline_rows_are_valid_rows_of_the_table(name: str) -> None:
    frame = mixed_rows(400, 80, 3)
    is_rare = frame[SCHEMA.label] == SCHEMA.positive
    rare, other = frame[is_rare], frame[~is_rare]
    encoding = TableEncoding(SCHEMA, frame)
    rows = baseline_rows(name, rare, other, 500, encoding, smote_k_neighbors=5, seed=0)
    assert list(rows.columns) == ["count", "kind", "amount"] and len(rows) == 500
    counts = rows["count"].dropna().to_numpy(np.float64)
    assert (counts == np.round(counts)).all() and counts.min() >= 0 and counts.max() <= 20
    assert rows["kind"].dropna().isin(LEVELS).all()
    assert rows["amount"].between(-10, 10).all()
    # gaps come back, in about the real share (SMOTE-NC: the neighbours' most frequent value)
    real_gaps = rare["count"].isna().mean()
    assert rows["count"].isna().mean() == pytest.approx(real_gaps, abs=0.12)
    assert rows["kind"].isna().any() or name == "smote"


@pytest.fixture(scope="module")
def mixed_result() -> EvaluationResult:
    return run_evaluation(
        mixed_rows(1200, 60, 1), mixed_rows(600, 30, 2), rare_sampler, settings(), SCHEMA
    )


def test_the_whole_evaluation_runs_on_a_mixed_table(mixed_result: EvaluationResult) -> None:
    metrics = mixed_result.metrics
    for name in (
        "ks_mean",
        "tv_mean",
        "gap_share_diff_mean",
        "corr_diff",
        "c2st_auc_gbm",
        "c2st_balanced_auc_gbm",
        "c2st_balanced_auc_gbm_control",
        "c2st_balanced_auc_gbm_independent",
        "pr_auc_augmented",
        "lift_vs_smote",
        "lift_vs_independent",
        "near_copies",
        "near_copies_smote",
        "near_copies_independent",
        "exact_copies",
        "dcr_ratio",
        "dcr_overfitting_protection",
        "disclosure_protection",
        "sdm_quality_score",
    ):
        assert math.isfinite(metrics[f"eval/{name}"]), name
    # the sampler draws from the true law of the rare class: close to real on every kind
    assert metrics["eval/tv_mean"] < 0.2
    real, synthetic = mixed_result.samples["real_test_rare"], mixed_result.samples["synthetic"]
    points = [
        100 * abs(real[c].isna().mean() - synthetic[c].isna().mean()) for c in ("count", "kind")
    ]
    assert metrics["eval/gap_share_diff_max"] == pytest.approx(max(points))
    assert synthetic["count"].isna().any() and synthetic["kind"].isna().any()
    balanced = mixed_result.tables["detection_balanced"]
    assert (balanced["real_rows"] == balanced["other_rows"]).all()
    assert (balanced["real_rows"] == 30).all()  # min(30 test rows, 120 generated)


def test_the_report_draws_categories_and_gaps(
    mixed_result: EvaluationResult, tmp_path: Path
) -> None:
    names = {p.name for p in mixed_result.write(tmp_path)}
    assert {"marginals.png", "correlations.png", "projection.png", "report.md"} <= names


def test_a_sampler_with_a_level_that_does_not_exist_fails_in_one_line() -> None:
    def wrong(n: int, seed: int) -> pd.DataFrame:
        return rare_sampler(n, seed).assign(kind="z")

    with pytest.raises(DataError, match="'kind' = 'z', not one of its levels") as info:
        run_evaluation(mixed_rows(300, 20, 1), mixed_rows(200, 10, 2), wrong, settings(), SCHEMA)
    assert "\n" not in str(info.value)


def test_gaps_in_a_column_without_gaps_fail_in_one_line() -> None:
    train = mixed_rows(300, 20, 1)
    train.loc[3, "amount"] = np.nan
    with pytest.raises(DataError, match="gaps in 'amount'"):
        run_evaluation(train, mixed_rows(200, 10, 2), rare_sampler, settings(), SCHEMA)


@pytest.mark.slow
def test_on_the_shared_credit_scoring_table(tmp_path: Path) -> None:
    if not CREDIT_DATA.exists():
        pytest.skip(f"{CREDIT_DATA} is absent (shared data not laid beside the repository)")
    raw = pd.read_csv(CREDIT_DATA)
    schema = infer_schema(raw, label="Status", positive="bad")
    rng = np.random.default_rng(0)
    is_test = rng.random(len(raw)) < 0.25
    train, test = raw[~is_test].reset_index(drop=True), raw[is_test].reset_index(drop=True)
    rare = train[train["Status"] == "bad"].reset_index(drop=True)

    def resampled_rows(n: int, seed: int) -> pd.DataFrame:  # real rows: a perfect "generator"
        picks = np.random.default_rng(seed).integers(0, len(rare), n)
        return rare.iloc[picks].reset_index(drop=True)

    result = run_evaluation(train, test, resampled_rows, settings(n_synthetic=300), schema)
    metrics = result.metrics
    assert metrics["eval/tv_mean"] < 0.1 and metrics["eval/gap_share_diff_max"] < 3
    assert metrics["eval/exact_copies"] > 250  # copies of training rows are found as copies
    assert metrics["eval/near_copies"] > 0.5
    assert {"marginals.png", "report.md"} <= {p.name for p in result.write(tmp_path)}


def test_the_validation_probe_reads_a_mixed_table() -> None:
    sc = SelectConfig(samples=60, repeats=2, gbm_max_iter=20)
    probe = ValidationProbe(mixed_rows(0, 40, 5), sc, seed=0, schema=SCHEMA)
    faithful = probe.score(rare_sampler, step=3)

    def no_c(n: int, seed: int) -> pd.DataFrame:
        return rare_sampler(n, seed).replace({"kind": {"c": "a"}})

    wrong = probe.score(no_c, step=3)
    assert set(faithful) == {
        "val/c2st_auc_gbm",
        "val/c2st_auc_gbm_std",
        "val/ks_mean",
        "val/tv_mean",
    }
    assert all(math.isfinite(v) for v in faithful.values())
    assert faithful["val/tv_mean"] < 0.2 < 0.4 < wrong["val/tv_mean"]
    assert faithful["val/c2st_auc_gbm"] < wrong["val/c2st_auc_gbm"]


def dated_rows(n_other: int, n_rare: int, seed: int) -> pd.DataFrame:
    """A datetime with gaps (the rare class a month later) and a two-level category."""
    rng = np.random.default_rng(seed)
    rare = np.r_[np.zeros(n_other, dtype=bool), np.ones(n_rare, dtype=bool)]
    offsets = rng.integers(0, 300 * 86_400, len(rare)) + rare * 30 * 86_400
    when = pd.Series(pd.Timestamp("2020-01-01") + pd.to_timedelta(offsets, unit="s"))
    when[rng.random(len(rare)) < 0.1] = pd.NaT
    kind = np.where(rng.random(len(rare)) < np.where(rare, 0.7, 0.3), "x", "y")
    return pd.DataFrame({"when": when, "kind": kind, "y": rare.astype(int)})


DATED = TableSchema(
    columns=(
        ColumnSchema("when", "datetime", bounds=("2020-01-01", "2020-12-31"), nullable=True),
        ColumnSchema("kind", "categorical", levels=("x", "y")),
        ColumnSchema("y", "categorical", levels=(0, 1)),
    ),
    label="y",
    positive=1,
)


def test_a_datetime_and_a_category_alone_run_and_draw(tmp_path: Path) -> None:
    result = run_evaluation(
        dated_rows(800, 50, 1),
        dated_rows(400, 25, 2),
        lambda n, seed: dated_rows(0, n, seed % 2**31).drop(columns=["y"]),
        settings(sdmetrics=False),
        DATED,
    )
    for name in ("ks_mean", "tv_mean", "gap_share_diff_mean", "exact_copies", "near_copies"):
        assert math.isfinite(result.metrics[f"eval/{name}"]), name
    assert "eval/corr_diff" not in result.metrics  # one numeric column: no pair to correlate
    names = {p.name for p in result.write(tmp_path)}
    assert {"marginals.png", "projection.png"} <= names and "correlations.png" not in names
    copula = baseline_rows(
        "copula",
        dated_rows(0, 50, 3),
        dated_rows(100, 0, 4),
        200,
        TableEncoding(DATED, dated_rows(100, 50, 3)),
        smote_k_neighbors=5,
        seed=0,
    )
    dates = copula["when"].dropna()
    assert pd.api.types.is_datetime64_any_dtype(copula["when"])
    assert dates.min() >= pd.Timestamp("2020-01-01") and dates.max() <= pd.Timestamp("2020-12-31")


def test_a_table_of_categories_only_gets_smoten_rows() -> None:
    schema = TableSchema(
        columns=(
            ColumnSchema("kind", "categorical", levels=LEVELS, missing=1, nullable=True),
            ColumnSchema("size", "categorical", levels=("s", "m", "l")),
            ColumnSchema("is_bad", "categorical", levels=("no", "yes")),
        ),
        label="is_bad",
        positive="yes",
    )
    rng = np.random.default_rng(0)
    kind = rng.choice(np.array(["a", "b", "c"], dtype=object), 300)
    kind[rng.random(300) < 0.2] = np.nan
    frame = pd.DataFrame({"kind": kind, "size": rng.choice(["s", "m", "l"], 300)})
    rare, other = frame.iloc[:60], frame.iloc[60:]
    rows = baseline_rows(
        "smote", rare, other, 100, TableEncoding(schema, frame), smote_k_neighbors=5, seed=0
    )
    assert rows["kind"].dropna().isin(LEVELS).all() and rows["size"].isin(["s", "m", "l"]).all()
    assert len(rows) == 100
