"""The main-command timing script: what it prints, when it calls figures idle, and (slow) two
real runs of the command in fresh processes, folders and stores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.configs import SMALL_MODEL
from support.tracked_runs import SMALL_EVALUATION

from scripts import main_timing
from scripts.main_timing import IDLE_LOAD, machine_line, render, summary


def _record(
    seed: int, load_before: float, wall: float = 100.0, selected: bool = True
) -> dict[str, object]:
    phases = {
        "read": {"wall_s": 2.0, "cpu_s": 2.1, "peak_rss_mb": 500.0},
        "train": {"wall_s": 60.0 + seed, "cpu_s": 100.0, "peak_rss_mb": 900.0},
        "evaluate": {"wall_s": 30.0, "cpu_s": 55.0, "peak_rss_mb": 950.0},
    }
    quality = {"selection/score": 0.55 + seed / 100, "eval/c2st_auc_gbm": 0.6 + seed / 100}
    if not selected:  # selection off: too few validation rows
        del quality["selection/score"]
    return {
        "seed": seed,
        "wall_s": wall,
        "cpu_s": 170.0,
        "peak_rss_mb": 1000.0,
        "load_1m": [load_before, 2.2],
        "phases": phases,
        "quality": quality,
        "dir": "x",
    }


def test_summary_is_the_median_and_the_range() -> None:
    assert summary([3.0, 1.0, 2.0]) == "2.0 (1.0..3.0)"
    assert summary([0.61234], 4) == "0.6123"


def test_a_run_started_above_the_threshold_is_never_called_idle() -> None:
    loaded = machine_line([_record(0, 0.4), _record(1, IDLE_LOAD + 0.1)], "CPU X")
    assert "LOADED" in loaded and "not idle" in loaded and "idle (" not in loaded
    # The load after a run counts the run itself: only the load a run started at decides.
    idle = machine_line([_record(0, 0.4), _record(1, IDLE_LOAD)], "CPU X")
    assert "idle (every run started" in idle and "LOADED" not in idle
    assert "CPU X" in idle


def test_the_table_has_every_phase_the_rest_and_the_quality_with_its_spread() -> None:
    text = render([_record(0, 0.3, wall=100.0), _record(1, 0.3, wall=104.0)], "CPU X")
    lines = text.splitlines()
    for name in ("read", "train", "evaluate"):
        assert any(line.startswith(f"| {name} wall s |") for line in lines)
        assert any(line.startswith(f"| {name} CPU s |") for line in lines)
    rest = next(line for line in lines if line.startswith("| outside the phases"))
    assert "| 8.0 | 11.0 | 9.5 (8.0..11.0) |" in rest  # 100 - 92 and 104 - 93
    score = next(line for line in lines if "selection/score" in line)
    assert "0.5550 (0.5500..0.5600)" in score and "seed spread (sd) 0.0071" in score


def test_a_quality_figure_a_run_lacks_is_a_dash_not_a_crash() -> None:
    text = render([_record(0, 0.3), _record(1, 0.3, selected=False)], "CPU X")
    score = next(line for line in text.splitlines() if "selection/score" in line)
    assert "| 0.5500 | - | 0.5500 | seed spread (sd) -" in score


@pytest.mark.slow
def test_two_runs_of_the_command_are_timed_from_their_own_folders(tmp_path: Path) -> None:
    tiny = [
        *SMALL_MODEL,
        "trainer.steps=20",
        "trainer.steps_per_call=10",
        "select.every=10",
        "select.samples=50",
        "select.repeats=2",
        "trainer.progress=false",
        "trainer.sample_rows=50",
        *SMALL_EVALUATION,
    ]
    argv = ["--runs", "2", "--settle", "0", "--out", str(tmp_path)]
    argv += [arg for override in tiny for arg in ("--override", override)]
    assert main_timing.main(argv) == 0
    document = json.loads((tmp_path / "main_timing.json").read_text())
    records = document["records"]
    assert [r["seed"] for r in records] == [0, 1]
    for i, record in enumerate(records):
        assert (tmp_path / f"run-{i}" / "mlflow.db").is_file()  # a store of its own
        assert {"read", "train", "select", "evaluate"} <= set(record["phases"])
        assert record["wall_s"] >= sum(p["wall_s"] for p in record["phases"].values())
        # The tiny table's validation split is too small for step selection: no selected score.
        assert set(record["quality"]) == {"eval/c2st_auc_gbm"}
    assert records[0]["quality"] != records[1]["quality"]  # two seeds
    printed = (tmp_path / "main_timing.md").read_text()
    assert document["cpu_model"] in printed and "1-minute load" in printed
