"""A sweep through Hydra's submitit launcher, run locally: what a SLURM cluster runs, one job per
process (docs/performance.md, "Beyond one machine")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient
from support.configs import REPO, TINY


@pytest.mark.slow
def test_a_two_job_sweep_runs_through_submitit_local(tmp_path: Path) -> None:
    pytest.importorskip("hydra_plugins.hydra_submitit_launcher")
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    cmd = [sys.executable, "-m", "wgangp.train", "-m", "hydra/launcher=submitit_local"]
    cmd += ["hydra.launcher.timeout_min=20", f"hydra.sweep.dir={tmp_path / 'sweep'}"]
    cmd += [*TINY, "tracking.log_model=false", "select.every=0", f"tracking.uri={uri}"]
    cmd += ["seed=0,1"]
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONPATH": str(REPO)}
    env.pop("MLFLOW_TRACKING_URI", None)
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(list((tmp_path / "sweep" / ".submitit").glob("*/*_result.pkl"))) == 2
    client = MlflowClient(uri)
    runs = client.search_runs([client.get_experiment_by_name("wgangp").experiment_id])
    assert sorted((r.data.params["seed"], r.info.status) for r in runs) == [
        ("0", "FINISHED"),
        ("1", "FINISHED"),
    ]
