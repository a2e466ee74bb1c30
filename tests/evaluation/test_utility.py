"""Utility on a toy problem where the "synthetic" frauds are extra draws of the true fraud law."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from support.creditcard import COLUMNS, FEATURES, LABEL, SCHEMA
from threadpoolctl import threadpool_limits

from wgangp.evaluation.utility import (
    recall_at_precision,
    recall_name,
    summarize,
    utility_metrics,
    utility_per_seed,
)

SIGNAL = ["V1", "V2", "V3", "V4", "V5", "V6"]


def toy_rows(n_normal: int, n_fraud: int, seed: int) -> pd.DataFrame:
    """Normals N(0, I); frauds shifted by 1.2 on six features: learnable, but not from 12 rows."""
    rng = np.random.default_rng(seed)
    values = rng.normal(size=(n_normal + n_fraud, len(FEATURES)))
    frame = pd.DataFrame(values, columns=list(FEATURES))
    frame.loc[n_normal:, SIGNAL] += 1.2
    frame[LABEL] = np.r_[np.zeros(n_normal, dtype=int), np.ones(n_fraud, dtype=int)]
    return frame.loc[:, list(COLUMNS)]


def true_fraud_sampler(n: int, seed: int) -> pd.DataFrame:
    return toy_rows(0, n, seed + 1000)


@pytest.fixture(autouse=True)
def one_thread():
    with threadpool_limits(limits=1):
        yield


def test_recall_at_precision_on_a_known_ranking() -> None:
    labels = np.array([1, 1, 0, 1, 0, 0, 1, 0])
    scores = np.linspace(1, 0, 8)  # ranking as listed
    # top 2: precision 1, recall 0.5; top 4: precision 0.75, recall 0.75
    assert recall_at_precision(labels, scores, 0.9) == 0.5
    assert recall_at_precision(labels, scores, 0.7) == 0.75
    assert recall_at_precision(np.array([0, 1]), np.array([1.0, 0.0]), 0.9) == 0.0
    assert recall_name(0.9) == "recall_at_p90" and recall_name(0.95) == "recall_at_p95"


def test_extra_true_frauds_lift_pr_auc_over_real_only() -> None:
    train, test = toy_rows(1500, 12, seed=1), toy_rows(3000, 150, seed=2)
    per_seed = utility_per_seed(
        train[list(FEATURES)],
        SCHEMA.classes(train[LABEL]),
        test[list(FEATURES)],
        SCHEMA.classes(test[LABEL]),
        true_fraud_sampler,
        ratios=[1.0, 4.0],
        headline_ratio=4.0,
        repeat_seeds=[11, 12],
        max_normal_rows=1000,
        target_precision=0.9,
        smote_k_neighbors=5,
        gbm_max_iter=50,
        schema=SCHEMA,
    )
    metrics = utility_metrics(per_seed, headline_ratio=4.0, target_precision=0.9)
    assert metrics["pr_auc_augmented"] == metrics["pr_auc_augmented_r4"]
    assert metrics["lift_vs_real"] > 0.02
    assert metrics["lift_vs_real_logreg"] > 0
    assert metrics["lift_vs_smote"] > 0  # new true frauds beat interpolations of 12 known ones
    assert metrics["pr_auc_tstr"] > 0.3  # trained on true-law frauds: far above the base rate 0.05
    # every training set of a repeat sees the same normals: sizes follow the added counts
    sizes = per_seed[per_seed["repeat"] == 0].set_index(["model", "method"])["n_train_rows"]
    assert sizes["gbm", "real"] == 1012
    for method in ("augmented_r4", "smote", "copula", "independent", "ros"):
        assert sizes["gbm", method] == 1060, method
    assert sizes["gbm", "tstr"] == 1012
    summary = summarize(per_seed, headline_ratio=4.0)
    assert summary["headline"].sum() == 2  # gbm and logreg at ratio 4
    # real, r1, r4, smote, copula, independent, ros, tstr for two models
    assert len(summary) == 2 * 8
