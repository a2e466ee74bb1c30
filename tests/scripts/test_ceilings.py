"""The ceilings script: its resampler, its utility sets, the command on a small table."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from scripts.ceilings import augmented_frauds, jittered, main, utility_ceiling
from wgangp.config import EvaluateConfig
from wgangp.data.builtin.simulated import simulate_creditcard


def frauds_table(rng: np.random.Generator) -> np.ndarray:
    """Three columns: a normal one of sd 2, a count-like one, an Amount-like one with repeats."""
    amounts = rng.choice([0.0, 1.0, 99.99, 250.0], size=100)
    return np.column_stack([2.0 * rng.standard_normal(100), rng.integers(0, 5, 100), amounts])


def test_jitter_of_zero_resamples_training_rows() -> None:
    frauds = frauds_table(np.random.default_rng(0))
    rows = jittered(frauds, 500, 0.0, np.random.default_rng(1), log=(2,))
    assert {tuple(r) for r in np.round(rows, 9)} <= {tuple(r) for r in np.round(frauds, 9)}


def test_jitter_moves_each_column_by_its_own_spread_and_keeps_exact_columns() -> None:
    frauds = frauds_table(np.random.default_rng(0))
    rows = jittered(frauds, 20_000, 0.2, np.random.default_rng(1), exact=(2,), log=(2,))
    assert set(rows[:, 2]) <= set(frauds[:, 2])  # Amount's repeated values, bit for bit
    assert not np.isin(rows[:, 1], frauds[:, 1]).all()
    # Resampling keeps the column's variance and adds (0.2 sd)^2: sd * sqrt(1.04).
    assert rows[:, 0].std() == pytest.approx(frauds[:, 0].std() * np.sqrt(1.04), rel=0.03)


def test_jitter_on_the_log_scale_never_goes_negative() -> None:
    frauds = frauds_table(np.random.default_rng(0))
    rows = jittered(frauds, 5_000, 1.0, np.random.default_rng(1), log=(2,))
    assert rows[:, 2].min() >= 0.0
    assert not np.isin(rows[:, 2], frauds[:, 2]).all()


def test_the_utility_sets_hold_what_their_names_say() -> None:
    frauds, new = np.arange(40.0).reshape(20, 2), -np.ones((3, 2))
    sets = augmented_frauds(frauds, new, np.random.default_rng(0))
    assert {k: len(v) for k, v in sets.items()} == {
        "half the training frauds": 10,
        "three quarters": 15,
        "all": 20,
        "all + 3 new real frauds": 23,
        "all + copies of all": 40,
    }
    assert np.array_equal(sets["all"], frauds)
    assert {tuple(r) for r in sets["half the training frauds"]} < {tuple(r) for r in frauds}


@pytest.mark.slow
def test_new_real_frauds_lift_a_detector_that_has_never_seen_their_kind() -> None:
    """Held-out frauds sit in a region only the new frauds cover: only they can lift PR-AUC."""
    rng = np.random.default_rng(0)
    normals = rng.standard_normal((2_000, 2))
    seen = rng.standard_normal((30, 2)) + [6.0, 0.0]
    unseen_kind = rng.standard_normal((30, 2)) + [0.0, 6.0]
    held_out = np.vstack([rng.standard_normal((500, 2)), rng.standard_normal((20, 2)) + [0, 6.0]])
    held_out_labels = np.r_[np.zeros(500, int), np.ones(20, int)]
    settings = dataclasses.replace(EvaluateConfig(), seeds=2, gbm_max_iter=20)
    lifts = utility_ceiling(seen, normals, unseen_kind, held_out, held_out_labels, settings, 0)
    assert lifts["all"] == [0.0, 0.0]
    new, copies = lifts["all + 30 new real frauds"], lifts["all + copies of all"]
    assert min(new) > 0.5 and min(new) > max(copies) + 0.3


@pytest.fixture(scope="module")
def small_table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ceilings") / "small.csv"
    simulate_creditcard(n_rows=3_000, fraud_rate=0.05, seed=0).to_csv(path, index=False)
    return path


def test_the_command_prints_one_row_per_figure(
    small_table: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main([
        "--data", str(small_table), "--seeds", "0", "--split", "test", "--n-synthetic", "200",
        "--repeats", "2", "--utility-repeats", "2", "--gbm-max-iter", "10",
        "--max-normal-rows", "1000",
    ])  # fmt: skip
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("| on the test split, split seeds [0]")
    names = [line.split(" | ")[0].removeprefix("| ") for line in lines[2:]]
    assert "detection: Amount exact, the rest jittered" in names
    assert "detection: training frauds (the control)" in names
    assert "PR-AUC lift: all + copies of all" in names
    row = next(line for line in lines if line.startswith("| PR-AUC lift: all |"))
    assert row == "| PR-AUC lift: all | 0.0000 ± 0.0000 | +0.0000 |"


def test_a_missing_table_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--data", str(tmp_path / "absent.csv"), "--seeds", "0"])
    message = str(exit_info.value.code)
    assert message.startswith("error: ") and "\n" not in message
