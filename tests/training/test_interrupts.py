"""SIGTERM and SIGINT end a run cleanly: one line, exit 143/130, the run KILLED and resumable.

Real processes and real signals: ``docker stop``, Kubernetes and preemption send SIGTERM, Ctrl-C
SIGINT. The Docker image runs Python as PID 1 (exec-form ENTRYPOINT), where the kernel delivers
SIGTERM only to a process that handles it; ``unshare --pid`` reproduces that without Docker.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mlflow import MlflowClient
from support.configs import REPO, TINY_MODEL

pytestmark = pytest.mark.slow

#: A tiny run of a few seconds: checkpoints every 50 steps, metric points every 10.
TINY_RUN = [
    *TINY_MODEL,
    "trainer.steps=400",
    "trainer.steps_per_call=5",
    "trainer.checkpoint_every=50",
    "trainer.progress=false",
    "trainer.sample_rows=20",
    "tracking.log_every=10",
    "evaluate.enabled=false",
]
#: Calls of several seconds each, so a signal lands inside one.
SLOW_CALLS = [
    "data=simulated",
    "data.simulated_rows=20000",
    "model.latent_dim=64",
    "model.generator.hidden=[256,256]",
    "model.critic.hidden=[256,256]",
    "trainer.batch_size=1024",
    "trainer.steps=1000",
    "trainer.steps_per_call=100",
    "trainer.checkpoint_every=100",
    "trainer.progress=false",
    "evaluate.enabled=false",
]
LINE = "; rerun with trainer.resume=true to continue"


def _start(args: list[str], cwd: Path, prefix: list[str] = (), **env: str) -> subprocess.Popen:
    environment = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(REPO), **env}
    environment.pop("MLFLOW_TRACKING_URI", None)
    command = [*prefix, sys.executable, "-m", "wgangp.train", *args, f"hydra.run.dir={cwd}/out"]
    return subprocess.Popen(
        command, cwd=cwd, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _wait_for(path_glob: str, cwd: Path, process: subprocess.Popen, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not list(cwd.glob(path_glob)):
        assert process.poll() is None, process.communicate()[1][-3000:]
        assert time.monotonic() < deadline, f"no {path_glob} after {timeout} s"
        time.sleep(0.05)


def _finish(process: subprocess.Popen) -> tuple[int, str]:
    _, stderr = process.communicate(timeout=300)
    return process.returncode, stderr


def _last_line(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr[-3000:]
    return stderr.strip().splitlines()[-1]


def _runs(cwd: Path) -> list:
    client = MlflowClient(f"sqlite:///{cwd / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("wgangp")
    return client.search_runs([experiment.experiment_id], order_by=["attributes.start_time ASC"])


def _steps(cwd: Path, run_id: str) -> list[int]:
    client = MlflowClient(f"sqlite:///{cwd / 'mlflow.db'}")
    return [m.step for m in client.get_metric_history(run_id, "train/critic_loss")]


def test_sigterm_keeps_a_checkpoint_and_the_resumed_run_finishes_clean(tmp_path: Path) -> None:
    victim = _start(TINY_RUN, tmp_path)
    _wait_for("checkpoints/*/ckpt-50.index", tmp_path, victim)
    victim.send_signal(signal.SIGTERM)
    code, stderr = _finish(victim)
    assert code == 143, stderr[-3000:]
    line = _last_line(stderr)
    assert line.startswith("wgangp: interrupted at step ") and line.endswith(LINE), line
    step = int(line.split("interrupted at step ")[1].split(";")[0])
    (checkpoints,) = (tmp_path / "checkpoints").iterdir()
    assert (checkpoints / f"ckpt-{step}.index").is_file()
    (run,) = _runs(tmp_path)
    assert run.info.status == "KILLED"
    assert run.data.tags["failure.reason"] == "interrupted"
    assert run.data.tags["failure.message"] == line.removeprefix("wgangp: ")

    resumed = _start([*TINY_RUN, "trainer.resume=true"], tmp_path)
    code, stderr = _finish(resumed)
    assert code == 0, stderr[-3000:]
    (run,) = _runs(tmp_path)  # the same MLflow run, continued
    assert run.info.status == "FINISHED"
    assert "failure.reason" not in run.data.tags and "failure.message" not in run.data.tags
    assert run.data.tags["resumed.from_step"] == str(step)
    assert _steps(tmp_path, run.info.run_id) == list(range(10, 401, 10))  # each point once


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs util-linux's unshare")
def test_as_pid_1_a_call_that_outlasts_the_grace_is_abandoned_on_its_last_checkpoint(
    tmp_path: Path,
) -> None:
    """Python is PID 1 of a new PID namespace, as in the Docker image; the signal comes from
    outside, as ``docker stop``'s does. The call in flight takes longer than the grace, so the
    run is closed on the checkpoint before it, at once."""
    prefix = ["unshare", "--fork", "--pid", "--mount-proc"]
    if subprocess.run([*prefix, "true"], capture_output=True).returncode != 0:
        pytest.skip("unshare --pid needs privileges this machine does not give")
    victim = _start(SLOW_CALLS, tmp_path, prefix=prefix, WGANGP_SIGNAL_GRACE_S="0.3")
    _wait_for("checkpoints/*/ckpt-100.index", tmp_path, victim)
    python = int(subprocess.check_output(["pgrep", "-P", str(victim.pid)], text=True).split()[0])
    with open(f"/proc/{python}/status") as status:
        assert [line.split()[-1] for line in status if line.startswith("NSpid")] == ["1"]
    time.sleep(0.5)  # inside the next call
    signalled = time.monotonic()
    os.kill(python, signal.SIGTERM)
    code, stderr = _finish(victim)
    assert time.monotonic() - signalled < 5  # abandoned, not waited for
    assert code == 143, stderr[-3000:]
    (checkpoints,) = (tmp_path / "checkpoints").iterdir()
    assert _last_line(stderr) == (
        f"wgangp: interrupted at step 100; checkpoint kept in {checkpoints}{LINE}"
    )
    (run,) = _runs(tmp_path)
    assert run.info.status == "KILLED" and run.data.tags["failure.reason"] == "interrupted"
    assert '"status": "KILLED"' in (checkpoints / "run.json").read_text()


def test_a_run_killed_before_its_first_checkpoint_starts_over_in_a_new_run(
    tmp_path: Path,
) -> None:
    """kill -9 leaves the run RUNNING with nothing to continue: a relaunch, with or without
    trainer.resume, closes that run as KILLED and starts a new one (no metric step twice)."""
    victim = _start([*TINY_RUN, "trainer.checkpoint_every=100000"], tmp_path)
    deadline = time.monotonic() + 300
    while not _logged_any(tmp_path):
        assert victim.poll() is None and time.monotonic() < deadline
        time.sleep(0.1)
    victim.kill()
    victim.wait()
    relaunch = _start(
        [*TINY_RUN, "trainer.checkpoint_every=100000", "trainer.resume=true"], tmp_path
    )
    code, stderr = _finish(relaunch)
    assert code == 0, stderr[-3000:]
    first, second = _runs(tmp_path)
    assert (first.info.status, second.info.status) == ("KILLED", "FINISHED")
    steps = _steps(tmp_path, second.info.run_id)
    assert steps == list(range(10, 401, 10))


def _logged_any(cwd: Path) -> bool:
    try:
        runs = _runs(cwd)
    except Exception:
        return False
    return bool(runs) and bool(_steps(cwd, runs[0].info.run_id))


def test_in_python_a_second_signal_raises_and_never_exits_the_process() -> None:
    """``wgangp.fit`` in a notebook's kernel: no watchdog exits past the grace, and a second
    Ctrl-C inside the loop's deferred section raises at once (the kernel and its state stay)."""
    from wgangp.training.interrupts import Interrupted, Interruption

    abandoned: list[int] = []
    before = signal.getsignal(signal.SIGINT)  # pytest-xdist's workers ignore SIGINT
    interruption = Interruption(on_abandon=abandoned.append, grace_s=0.05, exits=False)
    with interruption as stop, pytest.raises(Interrupted), stop.deferred():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.3)  # past the grace: a command's watchdog would have exited by now
        assert stop.requested
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)  # the handler raises during the sleep
    assert abandoned == []
    assert signal.getsignal(signal.SIGINT) == before  # the handler restored
