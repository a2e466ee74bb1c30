"""The membership audit's parts that need no training: its statistics, its results and their
report, and its command line (the audit itself trains three default models: see
docs/privacy-audit.md for its figures and command; its canaries: test_canaries.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from scripts import membership_audit as audit
from scripts import membership_report as report_of
from scripts import membership_statistics as statistics


def test_auc_on_a_hand_example() -> None:
    # Pairs (member, other): 3>2, 3>0, 2=2 (a half), 2>0, 1<2, 1>0: 4.5 of 6.
    assert statistics.auc(np.array([3.0, 2.0, 1.0]), np.array([2.0, 0.0])) == pytest.approx(0.75)
    assert statistics.auc(np.array([1.0, 2.0]), np.array([1.0, 2.0])) == pytest.approx(0.5)


def test_advantage_is_zero_for_identical_scores_and_one_when_separated() -> None:
    scores = np.array([-3.0, -1.5, -0.2, -4.0])
    assert statistics.advantage(scores, scores.copy()) == 0.0
    assert statistics.advantage(np.array([5.0, 6.0, 7.0]), np.array([1.0, 2.0])) == 1.0
    # Members scoring lower is no membership signal: a score >= t guesses "member".
    assert statistics.advantage(np.array([1.0, 2.0]), np.array([5.0, 6.0, 7.0])) == 0.0
    # One threshold between: TPR 2/3 (scores 5, 6 of 1, 5, 6), FPR 0 (of 2, 3).
    assert statistics.advantage(np.array([1.0, 5.0, 6.0]), np.array([2.0, 3.0])) == pytest.approx(
        2 / 3
    )


def test_the_null_and_the_intervals_tell_signal_from_noise() -> None:
    rng = np.random.default_rng(0)
    noise = [rng.normal(size=20) for _ in range(3)], [rng.normal(size=20) for _ in range(3)]
    signal = [g + 3.0 for g in noise[0]], noise[1]
    quiet, loud = statistics.compare(*noise, seed=0), statistics.compare(*signal, seed=0)
    assert quiet["advantage_p"] > 0.05 and loud["advantage_p"] < 0.01
    assert loud["auc_p"] < 0.01 and loud["auc"] > 0.95
    assert 0.1 < quiet["advantage_null95"] < 0.4  # what 60 + 60 scores read by chance
    for figures in (quiet, loud):
        for name in ("auc", "advantage"):
            assert figures[f"{name}_low"] <= figures[name] <= figures[f"{name}_high"]
    assert loud["advantage_low"] > quiet["advantage_null95"]


def _audit(seed: int, in_shift: float, copies: int = 10) -> report_of.SeedResult:
    """A seed's result whose IN canaries sit ``in_shift`` nearer the generated rows."""
    rng = np.random.default_rng([seed, 9])
    distances = {g: rng.exponential(size=30) + 1.0 for g in report_of.GROUPS}
    distances["in"] = distances["in"] - in_shift
    return report_of.SeedResult(seed, {"default": distances}, copies=copies)


def test_a_paired_difference_sees_a_leak_and_refuses_other_canaries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(statistics, "BOOTSTRAP", 300)
    leaky = [_audit(seed, 0.9) for seed in (0, 1)]
    private = [_audit(seed, 0.0) for seed in (0, 1)]
    figures = report_of.paired_difference(leaky, private)
    assert figures["auc"] > 0.2 and figures["auc_low"] > 0 and figures["auc_p"] < 0.01
    assert figures["advantage"] > 0.3 and figures["advantage_low"] > 0
    # Against itself: exactly 0, every resample too.
    same = report_of.paired_difference(private, private)
    assert same["advantage"] == same["advantage_low"] == same["advantage_high"] == 0
    assert "paired over 60 IN and 60 OUT canaries (seeds 0,1)" in report_of.paired_text(
        figures, leaky
    )
    with pytest.raises(ValueError, match="nothing to pair"):
        report_of.paired_difference(leaky, [_audit(seed, 0.0, copies=1) for seed in (0, 1)])


def test_records_round_trip_through_their_json_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(statistics, "BOOTSTRAP", 100)
    monkeypatch.setattr(statistics, "PERMUTATIONS", 100)
    rng = np.random.default_rng(1)
    results = [
        report_of.SeedResult(
            seed,
            {
                name: {g: rng.exponential(size=5) for g in report_of.GROUPS}
                for name in ("default", "smote")
            },
            {g: rng.exponential(size=5) for g in report_of.GROUPS},
            train_rare=900,
            generated=900,
            wall_s=12.5,
            run_id=f"run{seed}",
        )
        for seed in (0, 1)
    ]
    rows = report_of.records(results, ["trainer.steps=5"])
    assert [(r["seed"], r["generator"], r["comparison"]) for r in rows] == [
        (s, g, c)
        for s in ("0", "1", "pooled")
        for g in ("default", "smote")
        for c in ("in_vs_out", "out_vs_fresh")
    ]
    first = tmp_path / "first.jsonl"
    assert report_of.report(rows, str(first)) == 0
    again = tmp_path / "again.jsonl"
    assert audit.main(["--from-results", str(first), "--out", str(again)]) == 0
    read = [json.loads(line) for line in again.read_text().splitlines()]
    assert read == [json.loads(line) for line in first.read_text().splitlines()]
    assert read[0]["overrides"] == ["trainer.steps=5"]
    # Paired against another audit of other seeds: one line, exit 2.
    other = tmp_path / "other.jsonl"
    report_of.report(report_of.records(results[:1], []), str(other))
    assert audit.main(["--from-results", str(first), "--against", str(other)]) == 2
    assert "nothing to pair" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--set", "seed=4"], "the audit's own setting"),
        (["--set", "trainer.stepz=5"], "unknown config key"),
        (["--seeds", "1,1"], "distinct integers"),
        (["--canaries", "1"], ">= 2"),
        (["--copies", "0"], ">= 1"),
        (["--against", "other.jsonl"], "--against needs --from-results FILE"),
    ],
)
def test_bad_arguments_are_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert audit.main(argv) == 2
    assert message in capsys.readouterr().err


def test_a_missing_table_names_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert audit.main(["--data", str(tmp_path)]) == 2
    assert "--data" in capsys.readouterr().err
