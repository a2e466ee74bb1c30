"""Training against a real ``mlflow server`` (HTTP, served artifacts), read back through
``MlflowClient``: params, metric histories, artifacts, the NaN tags and the logged model."""

from __future__ import annotations

import io
import math
import os
import subprocess
import sys
from collections.abc import Iterator

import pandas as pd
import pytest
from mlflow import MlflowClient
from support.creditcard import COLUMNS, LABEL
from support.tracked_runs import REGISTERED, ServerRuns

from wgangp.tracking.store import use_tracking_uri

pytestmark = [pytest.mark.slow, pytest.mark.server]


def _artifact_paths(client: MlflowClient, run_id: str, path: str | None = None) -> set[str]:
    """Every artifact file of a run, listed recursively through the server's proxy."""
    found = set()
    for item in client.list_artifacts(run_id, path):
        if item.is_dir:
            found |= _artifact_paths(client, run_id, item.path)
        else:
            found.add(item.path)
    return found


@pytest.fixture
def server_default(server_runs: ServerRuns) -> Iterator[None]:
    """MLflow's default tracking URI is the server for the test, module global included (an
    earlier in-process run may have set it, and it outranks ``$MLFLOW_TRACKING_URI``): listing
    or loading a logged model resolves it with a client on the default URI."""
    with use_tracking_uri(server_runs.url):
        yield


def test_stable_run_params_metrics_artifacts(server_runs: ServerRuns, server_default):
    client = MlflowClient(server_runs.url)
    run = client.get_run(server_runs.run_ids["stable"])
    assert run.info.status == "FINISHED"
    params = run.data.params
    assert params["name"] == "stable_gp"
    assert (params["gp.norm"], params["model.critic.output"]) == ("safe_sqrt", "linear")
    assert (params["trainer.steps"], params["trainer.batch_size"]) == ("60", "64")
    assert run.data.tags["data.source"] == "simulated"

    for name in ("critic_loss", "generator_loss", "wasserstein_estimate", "gradient_penalty"):
        history = client.get_metric_history(run.info.run_id, f"train/{name}")
        assert len(history) == 6, name  # 60 steps, one point per log_every=10
        assert all(math.isfinite(point.value) for point in history), name
    assert run.data.metrics["run/steps_per_sec"] > 0

    artifacts = _artifact_paths(client, run.info.run_id)
    expected = {
        "config/config_resolved.yaml",
        "metrics.csv",
        "loss_curves.png",
        "samples.csv",
        "synthesizer/generator.keras",
        "synthesizer/preprocessing.json",
        "synthesizer/synthesizer.json",
    }
    assert expected <= artifacts, expected - artifacts
    # served artifacts: the files live in the server's artifact store, not beside the client
    stored = {p.name for p in server_runs.server.artifacts_dir.rglob("*") if p.is_file()}
    assert {"generator.keras", "config_resolved.yaml"} <= stored


def test_stable_run_model_loads_and_samples_over_http(server_runs: ServerRuns, server_default):
    import mlflow.pyfunc

    client = MlflowClient(server_runs.url)
    run_id = server_runs.run_ids["stable"]
    model_uri = client.get_run(run_id).data.tags["model.uri"]
    model = client.get_logged_model(model_uri.removeprefix("models:/"))
    assert model.source_run_id == run_id and model.name == "synthesizer"

    rows = mlflow.pyfunc.load_model(model_uri).predict(pd.DataFrame({"n": [7], "label": [1]}))
    assert list(rows.columns) == list(COLUMNS) and len(rows) == 7
    assert (rows[LABEL] == 1).all()


def test_sample_cli_reads_the_model_from_the_server(server_runs: ServerRuns, tmp_path):
    from wgangp.sample import main

    client = MlflowClient(server_runs.url)
    model_uri = client.get_run(server_runs.run_ids["stable"]).data.tags["model.uri"]
    out = tmp_path / "fraud.parquet"
    argv = [f"model_uri={model_uri}", "n=25", f"output={out}", f"tracking_uri={server_runs.url}"]
    assert main(argv) == 0
    rows = pd.read_parquet(out)
    assert list(rows.columns) == list(COLUMNS) and len(rows) == 25


def test_the_registered_champion_samples_through_the_cli(server_runs: ServerRuns):
    """``python -m wgangp.sample model_uri=models:/NAME@champion n=1000 label=1``, as a user types
    it, against the server: 1,000 fraud rows on stdout, the log on stderr."""
    client = MlflowClient(server_runs.url)
    champion = client.get_model_version_by_alias(REGISTERED, "champion")
    assert champion.run_id == server_runs.run_ids["stable"]
    assert client.get_run(champion.run_id).data.tags["registry.champion"] == "true"
    env = {**os.environ, "MLFLOW_TRACKING_URI": server_runs.url, "TF_CPP_MIN_LOG_LEVEL": "3"}
    command = [sys.executable, "-m", "wgangp.sample", f"model_uri=models:/{REGISTERED}@champion"]
    done = subprocess.run(
        [*command, "n=1000", "label=1"], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = pd.read_csv(io.StringIO(done.stdout))
    assert list(rows.columns) == list(COLUMNS) and len(rows) == 1000
    assert (rows[LABEL] == 1).all()


def test_nan_run_is_failed_tagged_with_forensics(server_runs: ServerRuns):
    client = MlflowClient(server_runs.url)
    run = client.get_run(server_runs.run_ids["nan"])
    assert run.info.status == "FAILED"
    assert (run.data.params["gp.norm"], run.data.params["model.critic.output"]) == (
        "tf_norm",
        "tanh",
    )
    nan_step = int(run.data.tags["nan.step"])
    assert 0 <= nan_step < 60
    assert run.data.tags["nan.source"]
    assert run.data.tags["failure.reason"] == "nan"
    assert "model.uri" not in run.data.tags  # no model from a failed run
    assert "nan_forensics.json" in _artifact_paths(client, run.info.run_id)
    # The curves stop at the failure and stay finite: points are labelled by steps completed,
    # and the last window closes with the failing step's row (its update was not applied).
    history = client.get_metric_history(run.info.run_id, "train/critic_loss")
    assert history and max(point.step for point in history) == nan_step + 1
    assert all(math.isfinite(point.value) for point in history)
