"""``trainer.refit``: after the quality loop selects a step, a second fit on training plus
validation rows for that many steps is what the run ships and evaluates."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import mlflow
import numpy as np
import pytest
from support.configs import TINY_NETWORKS, compose
from support.creditcard import LABEL, SCHEMA
from support.probes import LOOP_DATA, PROBED_RUN, script_probes

from wgangp import evaluate
from wgangp.config import to_config
from wgangp.data.builtin.simulated import simulate_creditcard
from wgangp.data.prepare import PreparedData, prepare_data
from wgangp.data.transform.table_transform import TableTransform
from wgangp.serving.synthesizer import Synthesizer
from wgangp.train import train
from wgangp.training import fit as fit_module
from wgangp.training.refit import RefitRun


def test_the_refit_split_is_training_then_validation_rows() -> None:
    frame = simulate_creditcard(300, seed=0)
    parts = (frame.iloc[:200], frame.iloc[200:250], frame.iloc[250:])
    data = PreparedData("simulated", "t", "simulated", SCHEMA, *parts)
    merged = data.with_validation_rows()
    assert len(merged.train) == 250 and len(merged.val) == 0
    assert list(merged.val.columns) == list(frame.columns)
    assert merged.train[LABEL].sum() == frame.iloc[:250][LABEL].sum()
    assert merged.test is data.test and len(data.train) == 200  # the original is untouched


@pytest.mark.slow
def test_a_refit_run_trains_again_for_the_selected_steps_and_ships_that(
    tmp_path: Path, monkeypatch
) -> None:
    """The probe scores step 4 best: the refit runs 4 steps on training + validation rows,
    logs under ``refit.``, never probes, and its generator (not step 4's) is exported."""
    probed = script_probes(monkeypatch, {2: 0.8, 4: 0.55, 6: 0.9, 8: 0.95})
    db = tmp_path / "mlflow.db"
    overrides = [
        *PROBED_RUN,
        "trainer.refit=true",
        "tracking.log_every=1",
        f"tracking.uri=sqlite:///{db}",
    ]
    cfg = to_config(compose(overrides))
    result = train(cfg, output_dir=tmp_path / "out", launch_dir=tmp_path)
    assert result.status == "FINISHED"
    assert sorted(probed) == [2, 4, 6, 8]  # the first fit's probes only

    client = mlflow.MlflowClient(f"sqlite:///{db}")
    run = client.get_run(result.run_id)
    data = prepare_data(cfg.data, seed=cfg.seed, launch_dir=tmp_path)
    frauds = int(data.train[LABEL].sum() + data.val[LABEL].sum())
    assert run.data.tags["selection.step"] == "4" and run.data.tags["refit.steps"] == "4"
    assert run.data.tags["refit.train_rare"] == str(frauds)
    first = [m.step for m in client.get_metric_history(result.run_id, "train/critic_loss")]
    refit = [m.step for m in client.get_metric_history(result.run_id, "refit/train/critic_loss")]
    assert sorted(first) == list(range(1, 9)) and sorted(refit) == [1, 2, 3, 4]
    assert "refit/run/wall_time_s" in run.data.metrics
    artifacts = {a.path for a in client.list_artifacts(result.run_id, "refit")}
    assert {"refit/metrics.csv", "refit/loss_curves.png"} <= artifacts
    assert len((tmp_path / "out" / "refit" / "metrics.csv").read_text().splitlines()) == 5

    exported = Synthesizer.load(result.synthesizer_dir)
    weights = exported.generator.get_weights()
    assert any(not np.array_equal(a, b) for a, b in zip(probed[4], weights, strict=True))
    # The shipped transform was fitted on the refit's rows, not on the training rows alone.
    merged = data.with_validation_rows()
    refitted, alone = (
        TableTransform.fit(
            rows,
            SCHEMA,
            SCHEMA.classes(rows[LABEL]),
            scaling=cfg.preprocess.scaling,
            per_class=cfg.preprocess.per_class,
            point_masses=cfg.preprocess.point_masses,
            quantile_columns=cfg.preprocess.quantile_columns,
            min_rows=cfg.ship.min_atom_rows,
        )
        for rows in (merged.train, data.train)
    )
    assert exported.transformer.to_json() == refitted.to_json() != alone.to_json()

    # python -m wgangp.evaluate rebuilds the refit's split: baselines and copies see its rows.
    seen: dict[str, int] = {}

    def recording_evaluation(train_rows, test_rows, sample, settings, schema, **_):
        seen["train"], seen["test"] = len(train_rows), len(test_rows)
        raise SystemExit(0)

    monkeypatch.setattr("wgangp.synthesis.held_out.run_evaluation", recording_evaluation)
    with pytest.raises(SystemExit):
        evaluate.main(["--run", result.run_id, "--tracking-uri", f"sqlite:///{db}", "--no-log"])
    assert seen == {"train": len(merged.train), "test": len(data.test)}


@pytest.mark.slow
def test_a_refit_stopped_by_a_nan_fails_the_run_and_exports_nothing(
    tmp_path: Path, monkeypatch
) -> None:
    """``trainer.on_nan=stop`` ending the refit ends the run FAILED with the refit's NaN step,
    before calibration and export. The refit's outcome is marked the way the host loop marks a
    stopped one: a real NaN there needs a config healthy for as many steps in the first fit,
    and tf_norm_nan fails at the same step on either split."""
    script_probes(monkeypatch, {2: 0.8, 4: 0.55, 6: 0.9, 8: 0.95})
    real_fit = fit_module.fit_networks

    def refit_stops(cfg, data, run, loop_run, released=None):
        fit = real_fit(cfg, data, run, loop_run, released)
        if isinstance(loop_run, RefitRun):
            fit.outcome.nan_step, fit.outcome.nan_source = 3, "critic/gradient_penalty"
        return fit

    monkeypatch.setattr(fit_module, "fit_networks", refit_stops)
    db = tmp_path / "mlflow.db"
    overrides = [*PROBED_RUN, "trainer.refit=true", "trainer.on_nan=stop"]
    cfg = to_config(compose([*overrides, f"tracking.uri=sqlite:///{db}"]))
    result = train(cfg, output_dir=tmp_path / "out", launch_dir=tmp_path)
    assert (result.status, result.nan_step, result.steps_completed) == ("FAILED", 3, 4)
    assert result.nan_source == "critic/gradient_penalty" and result.synthesizer_dir is None
    assert not (tmp_path / "out" / "synthesizer").exists()
    run = mlflow.MlflowClient(f"sqlite:///{db}").get_run(result.run_id)
    assert run.info.status == "FAILED" and run.data.tags["refit.steps"] == "4"


@pytest.mark.slow
def test_a_run_killed_during_its_refit_resumes_the_refit(tmp_path: Path) -> None:
    """``kill -9`` after the refit's first checkpoint; the relaunch with ``trainer.resume=true``
    continues the refit from that checkpoint, in the same MLflow run, each step logged once."""
    steps = 300
    command = [
        sys.executable, "-m", "wgangp.train", *LOOP_DATA, *TINY_NETWORKS,
        "trainer.batch_size=32", f"trainer.steps={steps}", "trainer.steps_per_call=10",
        "trainer.checkpoint_every=50", "trainer.progress=false", "trainer.sample_rows=0",
        "trainer.refit=true", "evaluate.enabled=false", "select.every=0",
        "tracking.log_every=10", "tracking.uri=sqlite:///mlflow.db", "tracking.log_model=false",
    ]  # fmt: skip
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONUNBUFFERED": "1"}
    env.pop("MLFLOW_TRACKING_URI", None)

    def launch(extra: list[str], log: str) -> subprocess.Popen:
        out = (tmp_path / log).open("w")
        return subprocess.Popen(
            [*command, *extra], cwd=tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT
        )

    victim = launch([], "first.log")
    deadline = time.monotonic() + 600
    while not list(tmp_path.glob("checkpoints/*/refit/ckpt-100.index")):
        assert victim.poll() is None, (tmp_path / "first.log").read_text()[-3000:]
        assert time.monotonic() < deadline, "no refit checkpoint after 10 minutes"
        time.sleep(0.02)
    victim.send_signal(signal.SIGKILL)
    assert victim.wait(60) == -signal.SIGKILL

    resumed = launch(["trainer.resume=true"], "second.log")
    assert resumed.wait(900) == 0, (tmp_path / "second.log").read_text()[-3000:]
    log = (tmp_path / "second.log").read_text()
    assert "/refit/ckpt-" in log and "resumed from" in log
    client = mlflow.MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    (run,) = client.search_runs([client.get_experiment_by_name("wgangp").experiment_id])
    assert run.info.status == "FINISHED"
    history = client.get_metric_history(run.info.run_id, "refit/train/critic_loss")
    refit = sorted(m.step for m in history)
    assert refit == list(range(10, steps + 1, 10))
