"""The real-server harness: data logged over HTTP survives a SIGKILL and a restart, same port."""

from __future__ import annotations

import os
import signal
import socket
from pathlib import Path

import pytest
from mlflow import MlflowClient
from support.mlflow_server import MlflowServer, MlflowServerError, live_processes_in_group


def _port_answers(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _read_back(client: MlflowClient, run_id: str, download_dir: Path) -> None:
    run = client.get_run(run_id)
    assert run.info.run_name == "stable_gp"
    assert run.data.params == {"gp_weight": "10.0", "critic_steps": "5"}
    history = client.get_metric_history(run_id, "critic_loss")
    assert [(m.step, m.value) for m in history] == [(0, -1.5), (1, -0.75), (2, -0.25)]
    assert run.info.artifact_uri.startswith("mlflow-artifacts:")
    local = client.download_artifacts(run_id, "notes/summary.txt", str(download_dir))
    assert Path(local).read_text() == "wasserstein estimate went down\n"


@pytest.mark.slow
@pytest.mark.server
def test_logged_data_survives_kill_and_restart(
    mlflow_server: MlflowServer,
    tmp_path: Path,
) -> None:
    client = MlflowClient(mlflow_server.url)
    experiment_id = client.create_experiment("wgangp")
    run = client.create_run(experiment_id, run_name="stable_gp")
    client.log_param(run.info.run_id, "gp_weight", 10.0)
    client.log_param(run.info.run_id, "critic_steps", 5)
    for step, value in enumerate([-1.5, -0.75, -0.25]):
        client.log_metric(run.info.run_id, "critic_loss", value, step=step)
    note = tmp_path / "summary.txt"
    note.write_text("wasserstein estimate went down\n")
    client.log_artifact(run.info.run_id, str(note), "notes")
    client.set_terminated(run.info.run_id)
    _read_back(client, run.info.run_id, tmp_path / "first")
    # Artifacts went through the server's proxy into its own destination directory.
    assert list(mlflow_server.artifacts_dir.rglob("summary.txt"))

    pgid = mlflow_server.pgid
    assert pgid is not None and len(live_processes_in_group(pgid)) >= 2  # CLI + uvicorn
    mlflow_server.kill()
    assert not mlflow_server.is_running
    assert not _port_answers(mlflow_server.port)
    assert live_processes_in_group(pgid) == [], "SIGKILL left server processes behind"

    port = mlflow_server.port
    mlflow_server.restart()
    assert mlflow_server.port == port
    _read_back(MlflowClient(mlflow_server.url), run.info.run_id, tmp_path / "second")

    # stop() takes the whole group even when the CLI parent died first, orphaning uvicorn.
    pgid = mlflow_server.pgid
    assert pgid is not None
    os.kill(pgid, signal.SIGKILL)
    assert _port_answers(port)
    mlflow_server.stop()
    assert live_processes_in_group(pgid) == []
    assert not _port_answers(port)


@pytest.mark.slow
@pytest.mark.server
def test_server_that_cannot_start_fails_with_its_log_tail(tmp_path: Path) -> None:
    """A server that exits during start-up fails fast, naming the URL and quoting its log."""
    server = MlflowServer(tmp_path, backend_store_uri="nosuchscheme://store")
    try:
        with pytest.raises(MlflowServerError, match=r"exited with code \d+ .*log tail:") as err:
            server.start()
    finally:
        server.stop()
    assert server.url in str(err.value)
    assert "nosuchscheme" in str(err.value)  # the tail shows mlflow's own complaint
    assert not server.is_running
