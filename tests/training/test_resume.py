"""Crash and resume: ``kill -9`` mid-run, the same command plus ``trainer.resume=true`` continues.

The slow test kills a real training process after its second checkpoint, relaunches it, and
compares with an uninterrupted run of the same command: same MLflow run, every metric step
exactly once, and (CPU, op determinism on) bit-identical final weights and optimizer slots.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from support.configs import TINY_MODEL, compose

from wgangp.config import to_config
from wgangp.errors import ConfigError
from wgangp.training.checkpoints import (
    RunRecord,
    config_key,
    open_checkpoint_dir,
    resolve_checkpoint_dir,
)

STEPS, CHECKPOINT_EVERY, LOG_EVERY = 400, 50, 10
COMMAND = [
    *TINY_MODEL,
    f"trainer.steps={STEPS}",
    "trainer.steps_per_call=10",
    f"trainer.checkpoint_every={CHECKPOINT_EVERY}",
    "trainer.keep_checkpoints=2",
    "trainer.progress=false",
    "trainer.sample_rows=0",
    f"tracking.log_every={LOG_EVERY}",
    "tracking.uri=sqlite:///mlflow.db",
    "tracking.log_model=false",
    "evaluate.enabled=false",
]


def test_config_key_ignores_resume_but_not_the_trajectory() -> None:
    base = to_config(compose(COMMAND))
    assert config_key(base) == config_key(to_config(compose([*COMMAND, "trainer.resume=true"])))
    assert config_key(base) == config_key(to_config(compose([*COMMAND, "evaluate.enabled=true"])))
    assert config_key(base) != config_key(to_config(compose([*COMMAND, "seed=1"])))
    assert config_key(base) != config_key(to_config(compose([*COMMAND, "gp.weight=5"])))


def test_checkpoints_default_to_the_launch_dir_keyed_by_name_seed_and_config(
    tmp_path: Path,
) -> None:
    """A relaunch from the same directory finds them; trainer.checkpoint_dir overrides it."""
    cfg = to_config(compose(COMMAND))
    expected = tmp_path / "checkpoints" / f"{cfg.name}-seed{cfg.seed}-{config_key(cfg)}"
    assert resolve_checkpoint_dir(cfg, tmp_path) == expected
    cfg.trainer.checkpoint_dir = "mine/ckpt"
    assert resolve_checkpoint_dir(cfg, tmp_path) == tmp_path / "mine" / "ckpt"


def test_checkpoint_dir_is_locked_and_an_interrupted_run_is_not_overwritten(
    tmp_path: Path,
) -> None:
    cfg = to_config(compose(COMMAND))
    directory, previous, stale = open_checkpoint_dir(cfg, tmp_path)
    assert previous is None and stale is None
    assert directory.path.parent == (tmp_path / "checkpoints").resolve()
    with pytest.raises(ConfigError, match="is in use by pid"):
        open_checkpoint_dir(cfg, tmp_path)
    directory.write_record(RunRecord(run_id="abc", status="RUNNING", step=50))
    (directory.path / "checkpoint").write_text("")
    directory.release()  # as when the process was killed

    with pytest.raises(ConfigError, match="add trainer.resume=true to continue it") as caught:
        open_checkpoint_dir(cfg, tmp_path)
    assert "\n" not in str(caught.value)
    resumed = to_config(compose([*COMMAND, "trainer.resume=true"]))
    again, record, _ = open_checkpoint_dir(resumed, tmp_path)
    assert record is not None and record.run_id == "abc" and record.step == 50
    again.write_record(RunRecord(run_id="abc", status="FINISHED", step=STEPS))
    again.release()
    fresh, previous, stale = open_checkpoint_dir(cfg, tmp_path)  # a finished run is cleared
    assert previous is None and stale is None and not fresh.has_checkpoint()
    fresh.release()


@pytest.mark.parametrize("resume", [False, True])
def test_an_interrupted_run_without_a_checkpoint_is_started_over_not_claimed(
    tmp_path: Path, resume: bool
) -> None:
    """Nothing to continue: no 'has checkpoints' error, no run to reopen; its record comes
    back as stale so the job can close that MLflow run."""
    cfg = to_config(compose([*COMMAND, f"trainer.resume={str(resume).lower()}"]))
    directory, _, _ = open_checkpoint_dir(cfg, tmp_path)
    directory.write_record(RunRecord(run_id="abc", status="KILLED", step=0))
    directory.release()
    again, previous, stale = open_checkpoint_dir(cfg, tmp_path)
    assert previous is None and stale is not None and stale.run_id == "abc"
    assert not again.record_path.exists()
    again.release()


def test_history_journal_restores_up_to_the_checkpoint(tmp_path: Path) -> None:
    from wgangp.step.train_step import METRICS
    from wgangp.training.history import MetricHistory

    journal = tmp_path / "history.csv"
    first = MetricHistory(log_every=2)
    block = np.arange(6 * len(METRICS), dtype=np.float32).reshape(6, -1)
    first.add(0, block[:4])
    first.persist(journal)  # checkpoint at step 4
    first.add(4, block[4:])
    first.persist(journal)  # rows of steps 5, 6 written, then killed before the checkpoint
    resumed = MetricHistory(log_every=2, skip_through=6)
    assert resumed.restore(journal, upto_step=4) == 4
    points = resumed.add(4, block[4:])
    assert points == []  # step 6 was already logged
    resumed.persist(journal)
    assert resumed.frame()["step"].tolist() == [1, 2, 3, 4, 5, 6]
    assert MetricHistory(2).restore(journal, 6) == 6


def test_every_point_logged_before_a_checkpoint_is_in_the_store_when_it_is_written(
    tmp_path: Path, monkeypatch
) -> None:
    """A resumed run logs only the steps after its checkpoint: a point still queued when the
    process dies would be lost for good, so a checkpoint waits for the queue (a slow store)."""
    from mlflow import MlflowClient

    from wgangp.tracking import tracker as tracker_module
    from wgangp.train import train
    from wgangp.training.loop import HostLoop

    def slow_apply(client, uri, entry) -> None:
        if entry["op"] == "metrics":
            time.sleep(0.2)
        apply_entry(client, uri, entry)

    apply_entry = tracker_module.apply_entry
    monkeypatch.setattr(tracker_module, "apply_entry", slow_apply)
    db = f"sqlite:///{tmp_path / 'mlflow.db'}"
    seen: list[tuple[int, int]] = []
    checkpoint = HostLoop.checkpoint

    def observed(loop: HostLoop, step: int) -> str:
        path = checkpoint(loop, step)
        history = MlflowClient(db).get_metric_history(loop.tracker.run_id, "train/critic_loss")
        seen.append((step, max(m.step for m in history)))
        return path

    monkeypatch.setattr(HostLoop, "checkpoint", observed)
    overrides = [*COMMAND, "trainer.steps=60", "trainer.checkpoint_every=20", f"tracking.uri={db}"]
    result = train(to_config(compose(overrides)), output_dir=tmp_path / "out", launch_dir=tmp_path)
    assert result.status == "FINISHED"
    assert seen == [(20, 20), (40, 40), (60, 60)]


def _launch(cwd: Path, extra: list[str]) -> subprocess.Popen:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONUNBUFFERED": "1"}
    env.pop("MLFLOW_TRACKING_URI", None)
    cwd.mkdir(parents=True, exist_ok=True)
    log = (cwd / f"train-{len(list(cwd.glob('train-*.log')))}.log").open("w")
    return subprocess.Popen(
        [sys.executable, "-m", "wgangp.train", *COMMAND, *extra],
        cwd=cwd,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )


def _checkpoint_dir(launch: Path) -> Path:
    (found,) = (launch / "checkpoints").iterdir()
    return found


def tf_latest_step(checkpoint_dir: Path) -> int:
    text = (checkpoint_dir / "checkpoint").read_text()
    return int(text.split('model_checkpoint_path: "ckpt-', 1)[1].split('"', 1)[0])


def _variables(checkpoint_dir: Path) -> dict[str, np.ndarray]:
    import tensorflow as tf

    reader = tf.train.load_checkpoint(str(checkpoint_dir))
    return {
        name: reader.get_tensor(name)
        for name, _ in tf.train.list_variables(str(checkpoint_dir))
        if not name.startswith(("_CHECKPOINTABLE_OBJECT_GRAPH", "save_counter"))  # bookkeeping
    }


def _metric(launch: Path, key: str) -> tuple[list, list]:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(f"sqlite:///{launch}/mlflow.db")
    (run,) = client.search_runs([client.get_experiment_by_name("wgangp").experiment_id])
    history = client.get_metric_history(run.info.run_id, key)
    return run, sorted(history, key=lambda m: (m.step, m.timestamp))


@pytest.mark.slow
def test_kill_9_then_resume_matches_an_uninterrupted_run(tmp_path: Path) -> None:
    crashed, straight = tmp_path / "crashed", tmp_path / "straight"
    reference = _launch(straight, [])
    victim = _launch(crashed, [])
    deadline = time.monotonic() + 600
    second = f"ckpt-{2 * CHECKPOINT_EVERY}.index"
    while not list((crashed / "checkpoints").glob(f"*/{second}")):
        assert victim.poll() is None, (crashed / "train-0.log").read_text()[-3000:]
        assert time.monotonic() < deadline, "no second checkpoint after 10 minutes"
        time.sleep(0.02)
    victim.send_signal(signal.SIGKILL)
    assert victim.wait(60) == -signal.SIGKILL
    record = json.loads((_checkpoint_dir(crashed) / "run.json").read_text())
    assert record["status"] == "RUNNING", "the run finished before it could be killed"
    latest = tf_latest_step(_checkpoint_dir(crashed))
    assert CHECKPOINT_EVERY <= latest < STEPS  # killed while saving: the one before

    resumed = _launch(crashed, ["trainer.resume=true"])
    assert resumed.wait(900) == 0, (crashed / "train-1.log").read_text()[-3000:]
    assert reference.wait(900) == 0, (straight / "train-0.log").read_text()[-3000:]
    log = (crashed / "train-1.log").read_text()
    assert f"resumed from {_checkpoint_dir(crashed)}/ckpt-{latest} at step {latest}" in log

    # One MLflow run, continued; every logged step once, log_every apart, none missing.
    run, history = _metric(crashed, "train/critic_loss")
    assert run.info.run_id == record["run_id"] and run.info.status == "FINISHED"
    assert run.data.tags["resumed.from_step"] == str(latest)
    steps = [m.step for m in history]
    assert steps == list(range(LOG_EVERY, STEPS + 1, LOG_EVERY))
    _, straight_history = _metric(straight, "train/critic_loss")
    np.testing.assert_array_equal([m.value for m in history], [m.value for m in straight_history])
    (output,) = [p.parent for p in (crashed / "outputs").glob("*/*/metrics.csv")]
    assert (np.loadtxt(output / "metrics.csv", delimiter=",", skiprows=1, usecols=0)).tolist() == [
        float(s) for s in range(1, STEPS + 1)
    ]

    # Same weights and optimizer state as the uninterrupted run, bit for bit.
    resumed_vars, straight_vars = (
        _variables(_checkpoint_dir(crashed)),
        _variables(_checkpoint_dir(straight)),
    )
    assert resumed_vars.keys() == straight_vars.keys()
    assert any("generator_optimizer/_variables" in name for name in resumed_vars)  # Adam slots
    for name, value in straight_vars.items():
        np.testing.assert_array_equal(resumed_vars[name], value, err_msg=name)


# --- a resume never mixes runs: same settings and table, newest intact checkpoint -------------


def test_logging_cadence_is_not_part_of_the_checkpoint_identity() -> None:
    base = to_config(compose(COMMAND))
    assert config_key(base) == config_key(to_config(compose([*COMMAND, "tracking.log_every=7"])))


def test_a_resume_with_other_training_settings_is_refused_naming_the_keys(
    tmp_path: Path,
) -> None:
    """With an explicit trainer.checkpoint_dir, another latent size or data file would land in
    the same directory: the resume names what differs instead of mixing the two."""
    from wgangp.training.checkpoints import trajectory_params

    first = to_config(compose([*COMMAND, "trainer.checkpoint_dir=ck"]))
    directory, _, _ = open_checkpoint_dir(first, tmp_path)
    params = trajectory_params(first)
    directory.write_record(RunRecord(run_id="abc", status="KILLED", step=50, params=params))
    (directory.path / "checkpoint").write_text("")
    directory.release()
    changed = [*COMMAND, "trainer.checkpoint_dir=ck", "trainer.resume=true"]
    with pytest.raises(ConfigError) as caught:
        open_checkpoint_dir(to_config(compose([*changed, "model.latent_dim=4"])), tmp_path)
    assert str(caught.value) == (
        f"trainer.resume=true, but the checkpoints in {directory.path} were trained with other "
        "settings: model.latent_dim (8 there, 4 now); resume with the same settings, or to start "
        f"fresh, delete {directory.path} or set another trainer.checkpoint_dir=..., and drop "
        "trainer.resume=true"
    )
    with pytest.raises(ConfigError, match=r"settings: data.name \(simulated there, creditcard"):
        open_checkpoint_dir(to_config(compose([*changed, "data=creditcard"])), tmp_path)
    again, previous, _ = open_checkpoint_dir(
        to_config(compose([*changed, "tracking.log_every=5"])), tmp_path
    )
    assert previous is not None and previous.run_id == "abc"
    again.release()


def test_a_finished_run_is_not_reopened_by_a_resume(tmp_path: Path, caplog) -> None:
    cfg = to_config(compose([*COMMAND, "trainer.resume=true"]))
    directory, _, _ = open_checkpoint_dir(cfg, tmp_path)
    directory.write_record(RunRecord(run_id="abc", status="FINISHED", step=STEPS))
    (directory.path / "checkpoint").write_text("")
    directory.release()
    with caplog.at_level("INFO", logger="wgangp.resume"):
        again, previous, stale = open_checkpoint_dir(cfg, tmp_path)
    assert previous is None and stale is None and not again.has_checkpoint()
    assert "finished, nothing to resume; starting a fresh run" in caplog.text
    again.release()


def _interrupt(checkpoint_dir: Path) -> None:
    """Leave the record as a kill -9 would: the run still RUNNING."""
    record = json.loads((checkpoint_dir / "run.json").read_text())
    record["status"] = "RUNNING"
    (checkpoint_dir / "run.json").write_text(json.dumps(record))


@pytest.mark.slow
def test_a_damaged_latest_checkpoint_falls_back_and_an_edited_table_is_refused(
    tmp_path: Path, caplog
) -> None:
    """A truncated newest checkpoint: the one before is used. The table edited in place after
    the first launch: the resume is refused in one line (the split would differ)."""
    from wgangp.data.builtin.simulated import simulate_creditcard
    from wgangp.errors import DataError
    from wgangp.train import train

    table = tmp_path / "table.csv"
    simulate_creditcard(4000, seed=0).to_csv(table, index=False)
    db = f"sqlite:///{tmp_path / 'mlflow.db'}"
    overrides = [
        *COMMAND,
        "data=creditcard",
        f"data.path={table}",
        "trainer.steps=6",
        "trainer.steps_per_call=3",
        "trainer.checkpoint_every=3",
        "tracking.log_every=1",
        "trainer.checkpoint_dir=ck",
        f"tracking.uri={db}",
    ]
    first = train(to_config(compose(overrides)), output_dir=tmp_path / "o1", launch_dir=tmp_path)
    assert first.status == "FINISHED"
    ck = tmp_path / "ck"
    _interrupt(ck)
    (data_file,) = ck.glob("ckpt-6.data-*")
    data_file.write_bytes(data_file.read_bytes()[:100])  # truncated
    resume = [*overrides, "trainer.resume=true"]
    with caplog.at_level("INFO"):
        again = train(to_config(compose(resume)), output_dir=tmp_path / "o2", launch_dir=tmp_path)
    assert again.status == "FINISHED" and again.run_id == first.run_id
    assert "ckpt-6 is damaged" in caplog.text
    assert f"resumed from {ck}/ckpt-3 at step 3" in caplog.text
    steps = np.loadtxt(tmp_path / "o2" / "metrics.csv", delimiter=",", skiprows=1, usecols=0)
    assert steps.tolist() == [1, 2, 3, 4, 5, 6]

    _interrupt(ck)
    frame = simulate_creditcard(4000, seed=0)
    frame.iloc[:-10].to_csv(table, index=False)  # edited in place
    with pytest.raises(DataError) as caught:
        train(to_config(compose(resume)), output_dir=tmp_path / "o3", launch_dir=tmp_path)
    message = str(caught.value)
    assert message.startswith(f"trainer.resume=true, but the table {table} is not the one the ")
    assert "it was edited or replaced; restore it, or to start fresh" in message
    assert json.loads((ck / "run.json").read_text())["status"] == "RUNNING"  # still resumable


def test_an_unreadable_checkpoint_list_is_rebuilt_from_the_files(tmp_path: Path) -> None:
    """TensorFlow ignores a torn ``checkpoint`` file and would start from scratch."""
    import tensorflow as tf

    from wgangp.training.loop import recover_checkpoint_list

    state = tf.train.Checkpoint(v=tf.Variable(1.0))
    manager = tf.train.CheckpointManager(state, str(tmp_path), max_to_keep=3)
    manager.save(3)
    manager.save(6)
    listing = tmp_path / "checkpoint"
    listing.write_text(listing.read_text()[:40])  # torn mid-line
    assert tf.train.CheckpointManager(state, str(tmp_path), max_to_keep=3).checkpoints == []
    recover_checkpoint_list(tmp_path)
    again = tf.train.CheckpointManager(state, str(tmp_path), max_to_keep=3)
    assert [Path(p).name for p in again.checkpoints] == ["ckpt-3", "ckpt-6"]


@pytest.mark.parametrize("damaged", ["best_generator.json", "best_generator.npz"])
def test_a_damaged_kept_best_generator_is_forgotten_not_a_crash(
    tmp_path: Path, damaged: str
) -> None:
    from support.creditcard import FEATURES

    from wgangp.model.networks import build_generator
    from wgangp.synthesis.selection import BestGenerator

    best = BestGenerator(build_generator(4, len(FEATURES), [8]), tmp_path)
    best.offer(10, 0.7)
    best.persist()
    path = tmp_path / damaged
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    again = BestGenerator(best.generator, tmp_path)
    again.restore()
    assert again.selection is None and again.weights is None
    assert not path.exists()


def test_a_torn_metrics_journal_loses_only_its_torn_row_and_says_so(tmp_path: Path, caplog) -> None:
    from wgangp.step.train_step import METRICS
    from wgangp.training.history import MetricHistory

    journal = tmp_path / "history.csv"
    first = MetricHistory(log_every=2)
    first.add(0, np.ones((4, len(METRICS)), np.float32))
    first.persist(journal)
    text = journal.read_text()
    journal.write_text(text[: len(text) - 6])  # the last row cut mid-way
    resumed = MetricHistory(log_every=2)
    with caplog.at_level("WARNING", logger="wgangp.resume"):
        assert resumed.restore(journal, upto_step=4) == 3
    assert "holds 3 of the 4 steps before the checkpoint (damaged)" in caplog.text
    assert not resumed.frame().isna().any().any()


def test_a_checkpoint_folder_on_a_full_disk_is_one_line(tmp_path: Path) -> None:
    """TensorFlow's own write fails (RESOURCE_EXHAUSTED): one line, the run FAILED, no traceback."""
    from mlflow.tracking import MlflowClient

    from wgangp.files import FileWriteError
    from wgangp.train import train

    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    small = tmp_path / "small"
    small.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=40k", "tmpfs", str(small)]).returncode:
        pytest.skip("this container cannot mount a tmpfs")
    db = f"sqlite:///{tmp_path / 'mlflow.db'}"
    overrides = [
        *COMMAND,
        "trainer.steps=6",
        "trainer.steps_per_call=3",
        "trainer.checkpoint_every=3",
        f"trainer.checkpoint_dir={small / 'ck'}",
        f"tracking.uri={db}",
    ]
    try:
        with pytest.raises(FileWriteError) as caught:
            train(to_config(compose(overrides)), output_dir=tmp_path / "o", launch_dir=tmp_path)
        assert str(caught.value) == (
            f"cannot write the checkpoint of step 3 in {small / 'ck'} (no space left on the "
            "device); no earlier checkpoint exists; free space or set trainer.checkpoint_dir=..."
        )
        client = MlflowClient(db)
        (run,) = client.search_runs([client.get_experiment_by_name("wgangp").experiment_id])
        assert run.info.status == "FAILED" and run.data.tags["failure.reason"] == "io"
        assert list(small.glob("ck/ckpt-*")) == []  # no half-written checkpoint left
    finally:
        subprocess.run(["umount", str(small)], check=False)
