"""End to end: train() in process, the real command in a subprocess, and the real rows."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from mlflow.tracking import MlflowClient
from support.configs import REPO, TINY, compose
from support.creditcard import COLUMNS

from wgangp.cli import nvidia_driver_present
from wgangp.config import to_config
from wgangp.data.prepare import prepare_data
from wgangp.serving.opening import open_synthesizer
from wgangp.step.train_step import METRICS
from wgangp.train import train
from wgangp.training.checkpoints import config_key

#: Every per-step metric of the trainer, plus the host-side throughput: the train section.
CURVES = tuple(f"train/{name}" for name in (*METRICS, "steps_per_sec"))
#: The sections the run page's charts group metrics by (the prefix before the first "/").
SECTIONS = {"train", "run", "val", "selection", "eval", "refit", "phase"}


def _run_of(uri: str, experiment: str = "wgangp"):
    client = MlflowClient(uri)
    exp = client.get_experiment_by_name(experiment)
    assert exp is not None
    runs = client.search_runs([exp.experiment_id])
    assert len(runs) == 1
    return client, runs[0]


def _check_run(client: MlflowClient, run, steps: int, log_every: int) -> None:
    assert run.info.status == "FINISHED"
    unsectioned = [key for key in run.data.metrics if key.split("/")[0] not in SECTIONS]
    assert not unsectioned, f"metrics outside the run page's sections: {unsectioned}"
    for name in CURVES:
        history = client.get_metric_history(run.info.run_id, name)
        assert [m.step for m in history] == list(range(log_every, steps + 1, log_every)), name
        assert all(np.isfinite(m.value) for m in history), name
    assert run.data.params["trainer.steps"] == str(steps)
    assert run.data.params["gp.norm"] == "safe_sqrt"
    tags = run.data.tags
    assert tags["data.source"] == "simulated"
    assert {"git.commit", "tensorflow.version", "device", "experiment"} <= set(tags)
    artifacts = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"synthesizer", "samples.csv", "loss_curves.png", "config"} <= artifacts


def test_train_in_process_logs_a_finished_run(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    cfg = compose(TINY + [f"tracking.uri={uri}", "+experiment=stable_gp", "trainer.steps=6"])
    result = train(cfg, output_dir=tmp_path / "out", launch_dir=tmp_path)
    assert result.status == "FINISHED" and result.steps_completed == 6
    assert all(np.isfinite(v) for v in result.final_metrics.values())
    client, run = _run_of(uri)
    assert run.info.run_id == result.run_id
    _check_run(client, run, steps=6, log_every=2)
    assert run.data.tags["experiment"] == "stable_gp"
    assert run.data.tags["calibration"] == "marginals"
    assert (tmp_path / "out" / "synthesizer" / "calibration.json").is_file()
    assert "copula.share" not in run.data.tags  # ship.copula_share=0: no copula ships
    assert not (tmp_path / "out" / "synthesizer" / "copula.json").exists()
    assert run.data.tags["device"] == "cpu"  # the device the runtime used, tagged once
    key = config_key(to_config(cfg))
    assert run.info.run_name == f"stable_gp-simulated-seed0-{key}"  # tells a list of runs apart
    note = run.data.tags["mlflow.note.content"].split("\n\n")
    assert len(note) == 2, note
    assert note[0].startswith("**Trained on** simulated rows (seed=0, rows=4000)")
    data = prepare_data(to_config(cfg).data, seed=0, launch_dir=tmp_path)
    frauds = int(data.train["Class"].sum())
    assert f": {len(data.train):,} training rows ({frauds} rare-class), 6 steps." in note[0]
    # 1 validation fraud: no probes (tests/synthesis/test_selection.py has a selecting run)
    assert (
        note[1]
        == "**No step selected** (no validation probes): the last step ships; no test evaluation."
    )
    checkpoints = tmp_path / "checkpoints" / f"stable_gp-seed0-{key}"
    assert run.data.tags["checkpoint.dir"] == str(checkpoints)  # in the launch dir, as documented
    assert (checkpoints / "ckpt-6.index").is_file()
    samples = (tmp_path / "out" / "samples.csv").read_text().splitlines()
    assert samples[0].split(",") == list(COLUMNS) and len(samples) == 51
    synthesizer = open_synthesizer(f"runs:/{result.run_id}", uri)
    rows = synthesizer.sample(20, label=1, seed=1)
    assert list(rows.columns) == list(COLUMNS) and len(rows) == 20
    assert (rows["Class"] == 1).all() and (rows["Amount"] >= 0).all()
    assert np.isfinite(rows.drop(columns="Class").to_numpy()).all()


@pytest.mark.slow
def test_fast_trainer_preset_trains_a_finished_run(tmp_path: Path) -> None:
    """``trainer=fast`` (K=100 per call, XLA) runs the pipeline to a finished, logged run.

    A checkpoint boundary (step 5) and the end (step 8) fall inside its first 100-step call.
    """
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    tiny = [o for o in TINY if not o.startswith("trainer.steps_per_call=")]
    cfg = compose(
        [
            *tiny,
            f"tracking.uri={uri}",
            "+experiment=stable_gp",
            "trainer=fast",
            "trainer.steps=8",
            "trainer.checkpoint_every=5",
        ]
    )
    result = train(cfg, output_dir=tmp_path / "out", launch_dir=tmp_path)
    assert result.status == "FINISHED" and result.steps_completed == 8
    assert all(np.isfinite(v) for v in result.final_metrics.values())
    client, run = _run_of(uri)
    _check_run(client, run, steps=8, log_every=2)
    params = run.data.params
    assert (params["trainer.steps_per_call"], params["trainer.jit_compile"]) == ("100", "True")


#: TensorFlow's C++ log lines at ERROR or FATAL level (absl's "E1127 ..." / "E0000 ..."), and the
#: CUDA and CPU-feature notices a CPU-only machine must not show.
TF_NOISE = re.compile(r"^[EF]\d{4} |cuInit|cuda_platform|rebuild TensorFlow")


def _as_a_user(tmp_path: Path) -> dict[str, str]:
    """The environment a user's shell has: no TensorFlow log level (the suite and CI set one),
    no GPU mask, no Kaggle credentials."""
    env = {**os.environ, "KAGGLE_CONFIG_DIR": str(tmp_path / "none")}
    for name in ("TF_CPP_MIN_LOG_LEVEL", "CUDA_VISIBLE_DEVICES", "KAGGLE_USERNAME", "KAGGLE_KEY"):
        env.pop(name, None)
    env.pop("KAGGLE_API_TOKEN", None)
    return env


#: What MLflow prints of its own while a run logs its model, downloads artifacts or creates a
#: store: none of it about the run (wgangp.tracking.quiet).
MLFLOW_NOISE = re.compile(
    r"Failed to resolve installed pip version|uv project|uv export|Downloading artifacts|"
    r"Validating input example|Creating initial MLflow database|Updating database tables"
)


@pytest.mark.slow
def test_main_command_in_a_subprocess(tmp_path: Path) -> None:
    """As a user runs it, from the repository (a uv project, as MLflow sees it): a finished run,
    a log without MLflow's environment inference, bars and store set-up, and on a machine
    without an NVIDIA driver (this one) without TensorFlow's CUDA-initialisation error or
    compiler notices (docs/errors.md)."""
    for name in ("pyproject.toml", "uv.lock"):  # where a newcomer runs it: the repository
        shutil.copy(REPO / name, tmp_path / name)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    overrides = [o for o in TINY if not o.startswith(("trainer.steps=", "data="))]
    cmd = [sys.executable, "-m", "wgangp.train", "+experiment=stable_gp", *overrides]
    cmd += ["trainer.steps=8", f"tracking.uri={uri}", f"hydra.run.dir={tmp_path / 'run'}"]
    env = _as_a_user(tmp_path)
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "SIMULATED" in proc.stderr + proc.stdout
    mlflow_noise = [
        line for line in (proc.stdout + proc.stderr).splitlines() if MLFLOW_NOISE.search(line)
    ]
    assert mlflow_noise == []
    if not nvidia_driver_present():  # trainer.device=auto on a CPU-only machine: not asked
        noise = [line for line in proc.stderr.splitlines() if TF_NOISE.search(line)]
        assert noise == []
    client, run = _run_of(uri)
    assert run.info.run_name.startswith("stable_gp-simulated-seed0-")  # renamed on the fallback
    _check_run(client, run, steps=8, log_every=2)
    synthesizer = open_synthesizer(f"runs:/{run.info.run_id}/synthesizer", uri)
    rows = synthesizer.sample(5)
    assert list(rows.columns) == list(COLUMNS)
    assert (tmp_path / "run" / "synthesizer" / "generator.keras").exists()


@pytest.mark.slow
def test_asking_for_a_missing_gpu_is_one_line_and_exit_2(tmp_path: Path) -> None:
    if nvidia_driver_present():
        pytest.skip("this machine has an NVIDIA driver")
    cmd = [sys.executable, "-m", "wgangp.train", *TINY, "trainer.device=gpu"]
    cmd += [f"tracking.uri=sqlite:///{tmp_path / 'mlflow.db'}", f"hydra.run.dir={tmp_path}/run"]
    env = _as_a_user(tmp_path)
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2
    # TensorFlow's INFO lines (``I0000 ...``: oneDNN's "round-off errors" notice on CPUs that use
    # its custom operations) are no errors; its E and F lines would be (TF_NOISE, below).
    errors = [
        line
        for line in proc.stderr.splitlines()
        if "error" in line.lower() and not re.match(r"I\d{4} ", line)
    ]
    assert errors == [
        "wgangp: error: trainer.device=gpu but TensorFlow sees no GPU; install "
        "tensorflow[and-cuda] and run with --gpus all, or use trainer.device=auto"
    ]
    assert not [line for line in proc.stderr.splitlines() if TF_NOISE.search(line)]


@pytest.mark.slow
def test_real_rows(tmp_path: Path, real_sample: Path) -> None:
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    overrides = [o for o in TINY if not o.startswith(("data=", "data."))]
    extra = [
        f"data.path={real_sample}",
        "data.schema=creditcard",
        f"tracking.uri={uri}",
        "trainer.steps=6",
    ]
    cfg = compose(overrides + extra)
    result = train(cfg, output_dir=tmp_path / "out", launch_dir=tmp_path)
    assert result.status == "FINISHED"
    client, run = _run_of(uri)
    assert run.data.tags["data.source"] == "file"
    assert run.data.tags["data.origin"].endswith("creditcard_real_sample.csv.gz")
    history = client.get_metric_history(run.info.run_id, "train/critic_loss")
    assert len(history) == 3 and all(np.isfinite(m.value) for m in history)


@pytest.mark.slow
def test_a_sweep_with_a_failed_job_runs_every_job_then_exits_non_zero(tmp_path: Path) -> None:
    """Hydra itself exits 0 whatever its jobs did: the sweep's last line names the failed job."""
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    overrides = [o for o in TINY if not o.startswith("trainer.batch_size=")]
    cmd = [sys.executable, "-m", "wgangp.train", "-m", *overrides, f"tracking.uri={uri}"]
    cmd += ["trainer.batch_size=100000,32", "tracking.log_model=false"]
    cmd += [f"hydra.sweep.dir={tmp_path / 'sweep'}"]
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2, proc.stderr[-3000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last == (
        "wgangp: error: 1 of 2 sweep job(s) failed: #0 (trainer.batch_size=100000); each job's "
        "line above says why (its MLflow run is FAILED)"
    )
    runs = MlflowClient(uri).search_runs(
        [MlflowClient(uri).get_experiment_by_name("wgangp").experiment_id]
    )
    assert sorted(r.info.status for r in runs) == ["FAILED", "FINISHED"]  # the second job ran
