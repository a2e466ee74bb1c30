"""The tf_norm_nan / tf_norm_fix pair at the CI's reduced size, and a sweep that a NaN can't abort.

The reduced size only shrinks the data and the networks; the experiments' own settings (tanh
critic, the norm) are untouched. The failure step asserted is the one this reduced config
really produces with seed 0 on CPU (deterministic: stateless batches, op determinism).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support.cli import run_train_cli
from support.configs import SMALL_MODEL, compose

from wgangp.step.guard import NORM_GRADIENT

REDUCED = [
    *SMALL_MODEL,
    "trainer.progress=false",
    "trainer.sample_rows=0",
    "tracking.log_every=10",
    "tracking.log_model=false",
]
#: First non-finite step of +experiment=tf_norm_nan at REDUCED size, seed 0 (critic iteration 2).
REDUCED_NAN_STEP = 52


def _runs(uri: str, experiment: str = "wgangp") -> list:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    found = client.get_experiment_by_name(experiment)
    return client.search_runs([found.experiment_id]) if found else []


@pytest.mark.slow
def test_tf_norm_nan_fails_at_its_step_and_the_fix_runs_five_times_longer(tmp_path: Path) -> None:
    import tensorflow as tf

    from wgangp.train import train

    uri = f"sqlite:///{tmp_path}/mlflow.db"
    common = [*REDUCED, f"tracking.uri={uri}", "trainer.checkpoint_every=100"]

    failed = train(
        compose(["+experiment=tf_norm_nan", *common, "trainer.on_nan=stop"]),
        output_dir=tmp_path / "nan",
        launch_dir=tmp_path,
    )
    assert failed.status == "FAILED"
    assert (failed.nan_step, failed.nan_source) == (REDUCED_NAN_STEP, NORM_GRADIENT)
    assert failed.steps_completed == REDUCED_NAN_STEP

    fix_steps = 5 * (REDUCED_NAN_STEP + 1)
    fixed = train(
        compose(
            [
                "+experiment=tf_norm_fix",
                *common,
                f"trainer.steps={fix_steps}",
                f"trainer.checkpoint_dir={tmp_path}/fix_checkpoints",
            ]
        ),
        output_dir=tmp_path / "fix",
        launch_dir=tmp_path,
    )
    assert fixed.status == "FINISHED" and fixed.nan_step is None
    assert fixed.steps_completed == fix_steps
    metrics = pd.read_csv(tmp_path / "fix" / "metrics.csv")
    assert len(metrics) == fix_steps
    assert np.isfinite(metrics.drop(columns="step").to_numpy()).all()  # every loss, every step
    checkpoint = tf.train.latest_checkpoint(str(tmp_path / "fix_checkpoints"))
    reader = tf.train.load_checkpoint(checkpoint)
    floats = [
        reader.get_tensor(name)
        for name, dtype in reader.get_variable_to_dtype_map().items()
        if dtype.is_floating
    ]
    assert floats and all(np.isfinite(t).all() for t in floats)  # every weight and slot

    statuses = {r.data.tags["experiment"]: r.info.status for r in _runs(uri)}
    assert statuses == {"tf_norm_nan": "FAILED", "tf_norm_fix": "FINISHED"}


@pytest.mark.slow
def test_a_nan_job_does_not_abort_the_multirun(tmp_path: Path) -> None:
    """Default on_nan=raise: the failing job is recorded, the next job still runs, and the sweep
    ends non-zero with one line naming the failed job."""
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    done = run_train_cli(
        [
            "-m",
            "+experiment=tf_norm_nan",
            *REDUCED,
            "gp.norm=tf_norm,safe_sqrt",
            "trainer.steps=60",
            f"tracking.uri={uri}",
            f"hydra.sweep.dir={tmp_path}/multirun",
        ],
        cwd=tmp_path,
    )
    assert done.returncode == 2, done.stderr[-3000:]
    assert f"non-finite {NORM_GRADIENT} at generator step {REDUCED_NAN_STEP}" in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "wgangp: error: 1 of 2 sweep job(s) failed: #0 (gp.norm=tf_norm); each job's line above "
        "says why (its MLflow run is FAILED)"
    )
    runs = {r.data.params["gp.norm"]: r for r in _runs(uri)}
    assert runs["tf_norm"].info.status == "FAILED"
    assert runs["tf_norm"].data.tags["nan.step"] == str(REDUCED_NAN_STEP)
    assert runs["safe_sqrt"].info.status == "FINISHED"
    assert "nan.step" not in runs["safe_sqrt"].data.tags
