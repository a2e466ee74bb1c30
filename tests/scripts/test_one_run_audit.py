"""The one-run audit (scripts/one_run_audit.py) and its attacks (scripts/canary_scores.py): a
generator that copies its members is caught and one that ignores them is not; the figures read
back; one tiny real run end to end (slow)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest
from canary_tables import loans

from scripts import one_run_audit as one_run
from scripts.canary_scores import density_ratio_scores, nearest_scores
from scripts.membership_statistics import auc


def space(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """200 canaries far from 2,000 real rows in 6 dimensions, and which of them went in."""
    rng = np.random.default_rng(seed)
    real = rng.normal(size=(2000, 6))
    canaries = rng.uniform(-10.0, 10.0, size=(200, 6))  # far apart, mostly far from real rows
    return real, canaries, rng.random(200) < 0.5


def test_both_attacks_catch_a_generator_that_copies_members_and_not_one_that_ignores_them() -> None:
    real, canaries, included = space()
    rng = np.random.default_rng(1)
    fresh = rng.normal(size=(5000, 6))
    members = np.repeat(canaries[included], 10, axis=0)  # a learned canary: rows around it
    noisy = members + rng.normal(scale=0.05, size=members.shape)
    copying = np.vstack([fresh, noisy])
    for drawn, low, high in ((copying, 0.95, 1.0), (fresh, 0.35, 0.65)):
        nearest = nearest_scores(canaries, drawn)
        ratio = density_ratio_scores(canaries, drawn, real)
        for values in (nearest, ratio):
            assert low <= auc(values[included], values[~included]) <= high


def audits(shift: float, seeds=(0, 1), generator: str = "wgangp") -> list[one_run.SeedAudit]:
    """Seeds whose included canaries score ``shift`` higher, on both attacks."""
    out = []
    for seed in seeds:
        rng = np.random.default_rng([seed, 3])
        included = rng.random(200) < 0.5
        values = {a: (rng.normal(size=200) + shift * included).tolist() for a in one_run.ATTACKS}
        out.append(one_run.SeedAudit(seed, generator, included.tolist(), values, epsilon=3.0))
    return out


def test_a_leak_gives_a_bound_below_the_ceiling_and_noise_gives_none() -> None:
    rows = one_run.summary(audits(4.0) + audits(0.0, generator="noise"))
    leak = {row["seed"]: row for row in rows if row["generator"] == "wgangp"}
    noise = [row for row in rows if row["generator"] == "noise"]
    for row in leak.values():
        assert 1.0 < row["bound"] <= row["ceiling"]
        assert row["auc"]["nearest"] > 0.95 and row["claimed"] == 3.0
    assert leak["pooled"]["bound"] > leak["0"]["bound"] and leak["pooled"]["canaries"] == 400
    assert all(row["bound"] < 0.5 for row in noise)
    # Eight tries, each at 0.05 / 8.
    assert len(leak["0"]["tries"]) == len(one_run.ATTACKS) * len(one_run.GUESS_SHARES) == 8
    text = one_run.table_text(rows)
    assert "| wgangp | pooled | 400 (" in text and "wgangp: bound per seed" in text


def test_pooled_scores_are_ranks_within_each_seed() -> None:
    first, second = audits(0.0)
    first.scores = {a: [1.0, 5.0, 3.0] for a in one_run.ATTACKS}
    second.scores = {a: [-100.0, 200.0, 0.0] for a in one_run.ATTACKS}
    first.included, second.included = [True, False, True], [False, False, True]
    included, ranked = one_run.pooled_scores([first, second])
    assert included.tolist() == [True, False, True, False, False, True]
    assert ranked["nearest"].tolist() == [0.0, 1.0, 0.5, 0.0, 1.0, 0.5]


def test_inclusion_is_a_fair_coin_per_canary_and_follows_the_seed() -> None:
    draws = one_run.inclusion(4000, seed=0)
    assert 0.47 < draws.mean() < 0.53
    assert (draws == one_run.inclusion(4000, seed=0)).all()
    assert not (draws == one_run.inclusion(4000, seed=1)).all()


def test_results_read_back(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "audit.jsonl"
    import json

    path.write_text("".join(json.dumps(asdict(a)) + "\n" for a in audits(4.0)))
    assert one_run.main(["--from-results", str(path)]) == 0
    assert one_run.table_text(one_run.summary(audits(4.0))) in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--set", "seed=4"], "the audit's own setting"),
        (["--seeds", "1,1"], "distinct integers"),
        (["--canaries", "5"], ">= 10"),
        (["--draws", "1"], ">= 10"),
        (["--delta", "1"], "[0, 1)"),
    ],
)
def test_bad_arguments_are_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert one_run.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_one_tiny_run_plants_trains_draws_and_scores(tmp_path: Path) -> None:
    table = loans()
    found = one_run.run_seed(
        table, 0, 12, tmp_path, ["trainer.steps=3", "trainer.batch_size=64"], copies=2,
        draws=300, delta=1e-5,
    )  # fmt: skip
    assert [a.generator for a in found] == ["wgangp", "smote"]
    for audit in found:
        assert len(audit.included) == 12 and audit.included == found[0].included
        assert set(audit.scores) == set(one_run.ATTACKS)
        assert all(np.isfinite(audit.scores[a]).all() and len(audit.scores[a]) == 12
                   for a in one_run.ATTACKS)  # fmt: skip
    assert found[0].epsilon is None and found[0].run_id
    # SMOTE puts rows on its training rows: the members sit nearer its rows.
    smote = found[1]
    nearest = np.asarray(smote.scores["nearest"])
    included = np.asarray(smote.included)
    assert auc(nearest[included], nearest[~included]) >= 0.7  # 12 canaries: a coin reads 0.5
