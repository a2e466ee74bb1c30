"""C2ST on known cases: same distribution gives AUC near 0.5, a 3-std shift gives AUC near 1.

Tolerance: with 200 rows per class the null standard deviation of one ROC-AUC is
sqrt((n0 + n1 + 1) / (12 n0 n1)) = 0.029; the fold mean of 5 folds is averaged from folds of 80
rows (0.065 each) so about 0.03 again. |AUC - 0.5| < 0.12 is four standard deviations.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from threadpoolctl import threadpool_limits

from wgangp.data.schema import FEATURES, LABEL
from wgangp.evaluation.detection import detection_metrics

TOLERANCE = 0.12


@pytest.fixture(autouse=True)
def one_thread():
    """As run_evaluation does: OpenMP boosting on a busy 2-core machine crawls with 2 threads."""
    with threadpool_limits(limits=1):
        yield


def gaussian_frauds(n: int, seed: int, shift: dict[str, float] | None = None) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.normal(size=(n, len(FEATURES))), columns=list(FEATURES))
    for name, offset in (shift or {}).items():
        frame[name] += offset
    frame[LABEL] = 1
    return frame


def test_same_distribution_is_indistinguishable() -> None:
    metrics, table = detection_metrics(
        gaussian_frauds(200, 1), gaussian_frauds(400, 2), folds=5, gbm_max_iter=50, seed=0
    )
    assert abs(metrics["c2st_auc_logreg"] - 0.5) < TOLERANCE
    assert abs(metrics["c2st_auc_gbm"] - 0.5) < TOLERANCE
    assert set(table["rows_per_class"]) == {200}
    assert len(table) == 10


def test_identical_rows_are_indistinguishable() -> None:
    """Copies share a fold; split apart, the twin's opposite label gave AUC 0.02, not 0.5."""
    real = gaussian_frauds(200, 1)
    metrics, _ = detection_metrics(real, real.copy(), folds=5, gbm_max_iter=50, seed=0)
    assert abs(metrics["c2st_auc_logreg"] - 0.5) < TOLERANCE
    assert abs(metrics["c2st_auc_gbm"] - 0.5) < TOLERANCE


def test_shift_of_three_std_is_detected() -> None:
    shift = {"V1": 3.0, "V4": 3.0, "V14": 3.0}
    metrics, _ = detection_metrics(
        gaussian_frauds(200, 1), gaussian_frauds(400, 2, shift), folds=5, gbm_max_iter=50, seed=0
    )
    assert metrics["c2st_auc_logreg"] > 0.9
    assert metrics["c2st_auc_gbm"] > 0.9
