"""Tracking outages: fail fast at start, keep going mid-run, lose nothing, sync later.

The slow test runs training against a real ``mlflow server``, kills the server mid-run, checks
that training finished with all its files and kept the calls in the outbox, restarts the server
and replays the outbox with ``python -m wgangp.sync``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient
from support.configs import TINY_MODEL
from support.mlflow_server import MlflowServer, free_port

from wgangp.errors import TrackingError
from wgangp.tracking.outbox import OUTBOX_FILE, Outbox, replay, sync_outbox
from wgangp.tracking.store import open_tracking_uri
from wgangp.tracking.tracker import Tracker


class _DownClient:
    """Stands for a client whose store went away: every call fails like a refused connection."""

    def __getattr__(self, name: str):
        def fail(*args, **kwargs):
            raise MlflowException("API request failed with exception Connection refused")

        return fail


def test_unreachable_server_fails_fast_unless_not_required(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    started = time.monotonic()
    with pytest.raises(TrackingError, match="tracking.required=false to log locally") as caught:
        open_tracking_uri(url, tmp_path, tmp_path / "out", required=True)
    assert time.monotonic() - started < 10 and "\n" not in str(caught.value)
    local = open_tracking_uri(url, tmp_path, tmp_path / "out", required=False)
    assert local == f"sqlite:///{(tmp_path / 'out' / 'mlflow.db').resolve()}"


def test_calls_the_store_misses_are_kept_in_order_and_replayed(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    tracker = Tracker(uri, "outage", outbox=tmp_path / OUTBOX_FILE, retry_interval_s=3600)
    run_id = tracker.start("r", {"a": "1"})
    tracker.log_metrics({"loss": 1.0}, 1)
    assert tracker.flush(60)
    real = tracker._client
    tracker._client = _DownClient()  # the store goes away
    for step in (2, 3, 4):
        tracker.log_metrics({"loss": float(step)}, step)
    (tmp_path / "samples.csv").write_text("x\n1\n")
    tracker.log_artifact(tmp_path / "samples.csv")
    tracker.set_tags({"done": "yes"})
    tracker.end("FINISHED")  # must not raise
    assert tracker.outage is not None
    kept = list(Outbox(tmp_path / OUTBOX_FILE).entries())
    assert [e["op"] for e in kept] == ["metrics"] * 3 + ["artifact", "tags", "terminate"]
    assert [e["metrics"][0][3] for e in kept[:3]] == [2, 3, 4]

    assert real.get_run(run_id).info.status == "RUNNING"

    assert sync_outbox(tmp_path, uri) == 6
    assert sync_outbox(tmp_path, uri) == 0  # the outbox is gone; nothing sent twice
    run = real.get_run(run_id)
    assert run.info.status == "FINISHED" and run.data.tags["done"] == "yes"
    assert [m.step for m in real.get_metric_history(run_id, "loss")] == [1, 2, 3, 4]
    assert [a.path for a in real.list_artifacts(run_id)] == ["samples.csv"]


def test_replay_skips_points_already_logged(tmp_path: Path) -> None:

    uri = f"sqlite:///{tmp_path}/mlflow.db"
    client = MlflowClient(uri)
    run_id = client.create_run(client.create_experiment("e")).info.run_id
    client.log_metric(run_id, "loss", 1.0, step=1)
    outbox = Outbox(tmp_path / OUTBOX_FILE)
    outbox.append({"op": "metrics", "run_id": run_id, "metrics": [["loss", 1.0, 0, 1]]})
    outbox.append({"op": "metrics", "run_id": run_id, "metrics": [["loss", 2.0, 0, 2]]})
    assert replay(outbox, client, uri) == (2, [])
    assert sorted(m.step for m in client.get_metric_history(run_id, "loss")) == [1, 2]


TRAIN = [
    *TINY_MODEL,
    "trainer.steps=1500",
    "trainer.steps_per_call=10",
    "trainer.checkpoint_every=100",
    "trainer.progress=false",
    "trainer.sample_rows=20",
    "tracking.log_every=10",
    "evaluate.enabled=false",
]


@pytest.mark.slow
@pytest.mark.server
def test_server_killed_mid_run_training_finishes_and_sync_replays(tmp_path: Path) -> None:
    server = MlflowServer(tmp_path / "server").start()
    try:
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "WGANGP_TRACKING_RETRY_S": "3600"}
        env.pop("MLFLOW_TRACKING_URI", None)
        out = tmp_path / "out"
        log_path = tmp_path / "train.log"
        with log_path.open("w") as log:
            training = subprocess.Popen(
                [sys.executable, "-m", "wgangp.train", *TRAIN, f"tracking.uri={server.url}",
                 f"hydra.run.dir={out}"],
                cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip
        client = MlflowClient(server.url)
        deadline = time.monotonic() + 600
        run_id = None
        while True:  # wait for the first metric points to reach the server
            assert training.poll() is None, log_path.read_text()[-3000:]
            assert time.monotonic() < deadline, "no metrics after 10 minutes"
            experiment = client.get_experiment_by_name("wgangp")
            runs = client.search_runs([experiment.experiment_id]) if experiment else []
            if runs and client.get_metric_history(runs[0].info.run_id, "train/critic_loss"):
                run_id = runs[0].info.run_id
                break
            time.sleep(0.5)
        server.kill()
        killed_at = time.monotonic()
        assert training.poll() is None, "training ended before the outage"
        assert training.wait(900) == 0, log_path.read_text()[-3000:]
        output = log_path.read_text()
        assert time.monotonic() - killed_at < 600

        # Nothing local was lost, and the user was told how to sync.
        for name in ("metrics.csv", "samples.csv", "synthesizer/generator.keras"):
            assert (out / name).is_file(), name
        assert list((tmp_path / "checkpoints").glob("*/ckpt-1500.index"))
        assert f"python -m wgangp.sync {out}" in output
        kept = list(Outbox(out / OUTBOX_FILE).entries())
        assert kept and kept[-1]["op"] == "terminate" and kept[-1]["run_id"] == run_id

        server.start()
        done = subprocess.run(
            [sys.executable, "-m", "wgangp.sync", str(out)],
            env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        assert not (out / OUTBOX_FILE).exists()
        run = client.get_run(run_id)
        assert run.info.status == "FINISHED"
        steps = [m.step for m in client.get_metric_history(run_id, "train/critic_loss")]
        assert sorted(steps) == list(range(10, 1501, 10))
        artifacts = {a.path for a in client.list_artifacts(run_id)}
        assert {"metrics.csv", "samples.csv", "synthesizer"} <= artifacts
        assert run.data.tags["model.uri"].startswith("models:/")
    finally:
        server.stop()
