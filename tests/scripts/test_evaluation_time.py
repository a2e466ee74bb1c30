"""The evaluation-time script runs the real evaluation (shrunk here) and reports its seconds."""

from __future__ import annotations

import dataclasses

from support.creditcard import FRAUD, LABEL

from scripts.evaluation_time import full_settings, measure, simulated_frauds
from wgangp.config import EvaluateConfig


def test_simulated_frauds_are_frauds_and_vary_with_the_seed() -> None:
    first, second = simulated_frauds(50, seed=1), simulated_frauds(50, seed=2)
    assert len(first) == 50 and (first[LABEL] == FRAUD).all()
    assert not first.equals(second)


def test_measure_times_a_real_evaluation() -> None:
    small = dataclasses.replace(
        EvaluateConfig(), n_synthetic=200, seeds=2, c2st_repeats=2, gbm_max_iter=10,
        max_normal_rows=2000, sdmetrics=False, augment_ratios=[1.0],
    )  # fmt: skip
    result = measure(20_000, small)
    assert result["metrics"] > 20
    assert result["cpu_s"] > 0 and result["wall_s"] > 0
    parts = {k for k in result if k.startswith("cpu_") and k != "cpu_s"}
    assert {"cpu_utility_s", "cpu_detection_s", "cpu_fidelity_s"} <= parts
    assert sum(result[k] for k in parts) <= result["cpu_s"] * 1.01  # the parts are in the whole


def test_the_full_settings_are_conf_evaluate_full() -> None:
    full = full_settings()
    assert (full.seeds, full.dcr_repeats) == (5, 5)
    assert full.n_synthetic == EvaluateConfig().n_synthetic
