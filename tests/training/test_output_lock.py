"""One live run per output folder (wgangp/training/output_lock.py): a second run in a folder in
use is refused in one line before it writes there or opens an MLflow run, a run outside Hydra
takes the same lock, Hydra's default (time-stamped) folder in use moves to a free sibling, and of
two runs started together in one folder one trains and the other is refused. Every line a user
sees is in docs/errors.md, word for word.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import mlflow
import pytest
from omegaconf import OmegaConf
from support.configs import REPO, TINY, compose
from support.docs import documented, one_line

from wgangp.errors import ConfigError
from wgangp.train import train
from wgangp.training.output_lock import OutputDirLock, lock_output_dir, unlock_output_dir


def _holder(folder: Path) -> subprocess.Popen:
    """Another process holding ``folder``'s output lock until its stdin closes."""
    code = (
        "import sys; from wgangp.training.output_lock import lock_output_dir; "
        f"lock_output_dir({str(folder)!r}); print('locked', flush=True); sys.stdin.read()"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    assert process.stdout.readline().strip() == "locked"
    return process


def _release(process: subprocess.Popen) -> None:
    process.stdin.close()
    process.wait(timeout=60)


def test_a_second_run_in_a_folder_in_use_is_refused_before_writing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    lock_output_dir(out)  # this test process holds it; the command below is another process
    try:
        env = {**os.environ, "PYTHONPATH": str(REPO), "TF_CPP_MIN_LOG_LEVEL": "3"}
        env.pop("MLFLOW_TRACKING_URI", None)
        result = subprocess.run(
            [sys.executable, "-m", "wgangp.train", *TINY, f"hydra.run.dir={out}",
             f"tracking.uri=sqlite:///{tmp_path / 'mlflow.db'}"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
    finally:
        unlock_output_dir(out)
    line = (
        f"wgangp: error: output directory {out} is in use by pid {os.getpid()}; wait for that "
        "job, or give this one its own hydra.run.dir=..."
    )
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stderr.strip().splitlines() == [line]
    documented(line.removeprefix("wgangp: error: "), dir=out, n=os.getpid())
    # nothing written into the folder, no MLflow store or run opened
    assert sorted(p.name for p in out.iterdir()) == [".wgangp.lock"]
    assert not (tmp_path / "mlflow.db").exists()


def test_a_run_outside_hydra_takes_the_same_lock(tmp_path: Path) -> None:
    out = tmp_path / "out"
    holder = _holder(out)
    try:
        uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
        cfg = compose([*TINY, f"tracking.uri={uri}"])
        with pytest.raises(ConfigError) as err:
            train(cfg, output_dir=out, launch_dir=tmp_path)
    finally:
        _release(holder)
    assert one_line(err).startswith(f"output directory {out} is in use by pid {holder.pid};")
    assert not (tmp_path / "mlflow.db").exists()  # refused before any MLflow run


def test_hydras_default_folder_in_use_moves_to_a_free_sibling(tmp_path: Path, capsys) -> None:
    stamp = tmp_path / "outputs" / "2026-01-01" / "10-00-00"
    holder = _holder(stamp)
    try:
        default = OmegaConf.create(
            {"hydra": {"run": {"dir": str(stamp)}, "overrides": {"hydra": []}}}
        )
        OutputDirLock().on_run_start(default)
        moved = Path(default.hydra.run.dir)
        assert moved == stamp.with_name("10-00-00-1")
        line = capsys.readouterr().err.strip()
        assert line == (
            f"wgangp: output directory {stamp} is in use by pid {holder.pid}; this run writes to "
            f"{moved}"
        )
        documented(line.removeprefix("wgangp: "), dir=stamp, n=holder.pid, moved=moved)
        OutputDirLock().on_run_end(default)  # released when the job ends: another may take it
        _release(_holder(moved))
        chosen = OmegaConf.create(
            {"hydra": {"run": {"dir": str(stamp)},
                       "overrides": {"hydra": [f"hydra.run.dir={stamp}"]}}}
        )  # fmt: skip
        with pytest.raises(SystemExit) as exit_:
            OutputDirLock().on_run_start(chosen)
        assert exit_.value.code == 2
    finally:
        _release(holder)


@pytest.mark.slow
def test_two_runs_started_together_in_one_folder(tmp_path: Path) -> None:
    """Both commands start at once with one hydra.run.dir: one trains, the other is refused in
    one line before writing there or opening an MLflow run."""
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    env = {**os.environ, "PYTHONPATH": str(REPO), "TF_CPP_MIN_LOG_LEVEL": "3"}
    env.pop("MLFLOW_TRACKING_URI", None)
    out = tmp_path / "out"
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "wgangp.train",
                *TINY,
                f"seed={seed}",
                f"hydra.run.dir={out}",
                f"tracking.uri={uri}",
            ],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for seed in (0, 1)
    ]
    started = time.monotonic()
    outcomes = [(p.wait(timeout=1800), p.stderr.read()) for p in processes]
    assert time.monotonic() - started < 1800
    codes = sorted(code for code, _ in outcomes)
    assert codes == [0, 2], [err[-1500:] for _, err in outcomes]
    refused = next(err for code, err in outcomes if code == 2)
    assert refused.strip().splitlines()[-1].startswith(f"wgangp: error: output directory {out}")
    client = mlflow.MlflowClient(uri)
    runs = client.search_runs([e.experiment_id for e in client.search_experiments()])
    assert [r.info.status for r in runs] == ["FINISHED"]
    log = (out / "train.log").read_text()
    assert log.count("MLflow run ") == 1  # one run's log, not two interleaved
