"""C2ST on known cases: same distribution reads AUC near 0.5, a 3-std shift near 1.

Tolerance: each repeat scores the held-out halves, 100 real against 200 other rows here: the null
standard deviation of one ROC-AUC is sqrt((n0 + n1 + 1) / (12 n0 n1)) = 0.035, and the mean over
repeats is no noisier. |AUC - 0.5| < 0.12 is more than three standard deviations.
"""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from wgangp.evaluation.detection import (
    boosting_model,
    detection_metrics,
    half_split_aucs,
    logistic_model,
    scale_leaves_to,
)

TOLERANCE = 0.12
N_FEATURES = 30


@pytest.fixture(autouse=True)
def one_thread():
    """As run_evaluation does: OpenMP boosting on a busy 2-core machine crawls with 2 threads."""
    with threadpool_limits(limits=1):
        yield


def gaussian(n: int, seed: int, shift: float = 0.0) -> np.ndarray:
    rows = np.random.default_rng(seed).normal(size=(n, N_FEATURES))
    rows[:, [1, 4, 14]] += shift
    return rows


def _detect(real: np.ndarray, others: dict[str, np.ndarray]) -> dict[str, float]:
    metrics, table = detection_metrics(real, others, repeats=5, gbm_max_iter=50, seed=0)
    assert set(table["repeat"]) == set(range(5))
    return metrics


def test_same_distribution_and_the_control_are_indistinguishable() -> None:
    metrics = _detect(gaussian(200, 1), {"": gaussian(400, 2), "control": gaussian(400, 3)})
    for name in ("c2st_auc_logreg", "c2st_auc_gbm", "c2st_auc_gbm_control"):
        assert abs(metrics[name] - 0.5) < TOLERANCE, name
    assert metrics["c2st_auc_gbm_std"] >= 0


def test_copies_of_the_real_rows_are_indistinguishable() -> None:
    """Identical rows stay on one side of the cut: a copy is not recognised by memory."""
    real = gaussian(200, 1)
    metrics = _detect(real, {"": np.vstack([real, real])})
    assert abs(metrics["c2st_auc_logreg"] - 0.5) < TOLERANCE
    assert abs(metrics["c2st_auc_gbm"] - 0.5) < TOLERANCE


def test_a_shift_of_three_std_is_detected_and_named_by_its_set() -> None:
    metrics = _detect(gaussian(200, 1), {"": gaussian(400, 2), "copula": gaussian(400, 2, 3.0)})
    assert abs(metrics["c2st_auc_gbm"] - 0.5) < TOLERANCE
    assert metrics["c2st_auc_logreg_copula"] > 0.9 and metrics["c2st_auc_gbm_copula"] > 0.9


def test_no_flip_real_against_real_stays_near_half_with_few_rows() -> None:
    """Cross-validated predictions on a few dozen rows anti-learn (AUC far below 0.5, which a
    max(auc, 1 - auc) flip would report as high); fitting on one half and scoring the other
    does not, on average."""
    scores = [
        np.mean(
            half_split_aucs(
                gaussian(40, s), gaussian(40, 100 + s), logistic_model, repeats=10, seed=s
            )
        )
        for s in range(10)
    ]
    assert abs(float(np.mean(scores)) - 0.5) < 0.05


def test_the_balanced_test_compares_equal_numbers_of_rows() -> None:
    """200 real rows against 1,000 others: each repeat draws 200 of the others; the null
    standard deviation of one AUC on 100 + 100 held-out rows is 0.041, so 0.12 is ~3 of them."""
    others = {"": gaussian(1000, 2), "shifted": gaussian(1000, 4, shift=3.0)}
    metrics, table = detection_metrics(
        gaussian(200, 1), others, repeats=5, gbm_max_iter=50, seed=0, balanced=True
    )
    assert (table["real_rows"] == 200).all() and (table["other_rows"] == 200).all()
    assert abs(metrics["c2st_balanced_auc_logreg"] - 0.5) < TOLERANCE
    assert metrics["c2st_balanced_auc_gbm_shifted"] > 0.95
    assert set(metrics) == {
        f"c2st_balanced_auc_{model}{suffix}{std}"
        for model in ("gbm", "logreg")
        for suffix in ("", "_shifted")
        for std in ("", "_std")
    }


def test_a_balanced_test_on_30_rows_still_grows_trees() -> None:
    """30 real rows against 30 shifted by 3 std: boosting's default leaf of 20 rows cannot split a
    fit of 30 (every AUC exactly 0.5); leaves scaled to the fit (5 rows) see the shift."""
    real, shifted = gaussian(30, 1), gaussian(30, 2, shift=3.0)
    stumps = half_split_aucs(real, shifted, lambda r: boosting_model(r, 50), repeats=5, seed=0)
    assert stumps == [0.5] * len(stumps) and stumps
    metrics, _ = detection_metrics(
        real, {"": shifted}, repeats=5, gbm_max_iter=50, seed=0, balanced=True
    )
    assert metrics["c2st_balanced_auc_gbm"] > 0.8


def test_leaves_follow_the_fit_only_below_200_rows() -> None:
    for rows, leaf in [(30, 5), (59, 5), (134, 13), (200, 20), (2000, 20)]:
        model = boosting_model(0, 10)
        scale_leaves_to(model, rows)
        assert model.get_params()["min_samples_leaf"] == leaf
    model = logistic_model(0)
    scale_leaves_to(model, 30)  # no leaves: unchanged, no error
