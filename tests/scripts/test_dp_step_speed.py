"""The private step's speed script (``scripts.dp_step_speed``) on a tiny credit-card table: both
steps built as a private run builds them, timed alike, traced once, and printed."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.configs import TINY_NETWORKS

from scripts.dp_step_speed import (
    Measured,
    build_steps,
    compose_config,
    main,
    measure,
    methods,
    table,
    time_updates,
)
from wgangp.data.builtin.simulated import simulate_creditcard

TINY_TRAINER = ["trainer.n_critic=1", "trainer.steps_per_call=1", *TINY_NETWORKS]


@pytest.fixture(scope="module")
def tiny_table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("dp_speed") / "credit.csv.gz"
    simulate_creditcard(n_rows=3000, fraud_rate=0.05, seed=0).to_csv(path, index=False)
    return path


def test_it_times_a_private_runs_critic_update_against_the_plain_one(tiny_table: Path) -> None:
    cfg = compose_config(tiny_table, 32, TINY_TRAINER)
    assert cfg.privacy.epsilon == 3 and cfg.trainer.batch_size == 32
    step, plain = build_steps(cfg)
    assert step.plan.noise_multiplier > 0 and plain.critic is not step.critic
    assert step.batches.rows is plain.batches.rows  # the same rows: only DP differs
    timing, traces = time_updates(step, plain, repeats=2, updates=2)
    assert len(timing.private) == len(timing.plain) == 2
    assert min(timing.private + timing.plain) > 0 and traces == 1
    assert step.clipped_chunk.experimental_get_tracing_count() == 1
    measured = Measured(32, 1, 1, step.chunk_size, 32.0, timing, timing, {"chunk": 1})
    header, _, row = table([measured])
    assert row.startswith("| 32 |") and row.count("|") == header.count("|")


@pytest.mark.slow
def test_the_whole_measure_and_its_methods_run(tiny_table: Path) -> None:
    cfg = compose_config(tiny_table, 16, TINY_TRAINER)
    measured = measure(cfg, repeats=1, updates=1)
    assert min(measured.generator_step.private + measured.generator_step.plain) > 0
    assert set(measured.traces.values()) == {1}
    lines = methods(cfg, repeats=1, updates=1)
    names = [line.split(" | ")[0] for line in lines[2:]]
    assert any("Jacobian" in name for name in names) and any("ghost" in name for name in names)
    assert all(float(line.split(" | ")[1].split()[0]) > 0 for line in lines[2:])


def test_a_missing_table_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--data", str(tmp_path / "absent.csv.gz")])
    assert exit_.value.code == 2
    assert "no such table; give its path with --data" in capsys.readouterr().err
