"""Speed budget: the default evaluation of a Kaggle-sized split stays under two minutes.

The frame is simulated (284,807 rows, 492 frauds, the file's shape), split 80/20 by class like the
trainer's test split. The evaluation runs single-threaded (``evaluate.threads=1``), so its CPU time
is the wall time it takes on an otherwise idle machine; the wall time is printed as well, since on
a shared machine it also counts the other processes' share of the two cores.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd
import pytest

from wgangp.config import EvaluateConfig
from wgangp.data.schema import AMOUNT, COLUMNS, LABEL, PCA_FEATURES, TIME, TIME_MAX
from wgangp.evaluation.suite import run_evaluation

ROWS, FRAUDS = 284_807, 492
BUDGET_SECONDS = 120.0


def simulated_rows(n_normal: int, n_fraud: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = n_normal + n_fraud
    scales = np.linspace(2.0, 0.3, len(PCA_FEATURES))
    values = rng.normal(size=(n, len(PCA_FEATURES))) * scales
    values[n_normal:, :14] += rng.normal(-2.5, 1.0, size=(n_fraud, 1)) * np.linspace(1, 0.2, 14)
    frame = pd.DataFrame(values, columns=list(PCA_FEATURES))
    frame.insert(0, TIME, np.sort(rng.integers(0, int(TIME_MAX), n)).astype(float))
    frame[AMOUNT] = np.round(rng.lognormal(3.0, 1.6, n), 2)
    frame[LABEL] = np.r_[np.zeros(n_normal, dtype=int), np.ones(n_fraud, dtype=int)]
    return frame.loc[:, list(COLUMNS)]


@pytest.mark.slow
def test_default_settings_on_a_kaggle_sized_split_fit_the_budget(capsys) -> None:
    n_test_fraud = FRAUDS // 5
    n_test_normal = (ROWS - FRAUDS) // 5
    train = simulated_rows(ROWS - FRAUDS - n_test_normal, FRAUDS - n_test_fraud, seed=1)
    test = simulated_rows(n_test_normal, n_test_fraud, seed=2)
    assert len(train) + len(test) == ROWS

    def sampler(n: int, seed: int) -> pd.DataFrame:
        return simulated_rows(0, n, seed=int(seed) + 3)

    wall, cpu = time.perf_counter(), time.process_time()
    result = run_evaluation(train, test, sampler, EvaluateConfig(), seed=0)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    with capsys.disabled():
        print(f"\nevaluation of {ROWS} rows: {wall:.1f} s wall, {cpu:.1f} s CPU")
    assert all(math.isfinite(v) for v in result.metrics.values())
    assert result.metrics["eval.n_train_frauds"] == FRAUDS - n_test_fraud
    assert cpu < BUDGET_SECONDS
