"""Secrets never reach params, tags, artifacts, files or logs; nothing unpickles user files.

The slow test plants fake Kaggle and MLflow credentials in the environment (and a password inside
``MLFLOW_TRACKING_URI``; typed into ``tracking.uri=`` it is refused before Hydra writes it down),
trains through the CLI (the server is down, so
``tracking.required=false`` falls back to a local store), and greps every byte the run wrote:
output and checkpoint dirs, the sqlite store, artifacts, stdout and stderr.
"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from support.configs import REPO
from support.mlflow_server import free_port

from wgangp.tracking.secrets import redact


def test_redact_masks_secret_values_and_uri_passwords(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAGGLE_KEY", "k-5ecret-value")
    assert redact("key=k-5ecret-value;") == "key=***;"
    assert redact("http://bob:pa55@host:5000/x") == "http://bob:***@host:5000/x"
    assert redact("http://host:5000") == "http://host:5000"


def test_no_unpickling_and_keras_safe_mode_in_the_package() -> None:
    """Static guard: no pickle-based loader and no Keras unsafe loading anywhere in wgangp/."""
    forbidden = re.compile(
        r"\bpickle\.loads?\(|\bcloudpickle\b|joblib\.load\(|allow_pickle\s*=\s*True|"
        r"safe_mode\s*=\s*False|pd\.read_pickle|torch\.load\("
    )
    offenders = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path in (REPO / "wgangp").rglob("*.py")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if forbidden.search(line)
    ]
    assert offenders == []


@pytest.mark.slow
def test_planted_secrets_appear_nowhere(tmp_path: Path) -> None:
    planted = {
        "KAGGLE_USERNAME": f"kaggle-user-{secrets.token_hex(6)}",
        "KAGGLE_KEY": secrets.token_hex(16),
        "MLFLOW_TRACKING_TOKEN": f"tok-{secrets.token_hex(12)}",
        "MLFLOW_TRACKING_PASSWORD": f"pw-{secrets.token_hex(12)}",
    }
    uri = f"http://wgangp:{planted['MLFLOW_TRACKING_PASSWORD']}@127.0.0.1:{free_port()}"
    env = {**os.environ, **planted, "TF_CPP_MIN_LOG_LEVEL": "3", "MLFLOW_TRACKING_URI": uri}
    done = subprocess.run(
        [
            sys.executable, "-m", "wgangp.train", "data=simulated", "data.simulated_rows=4000",
            "model.latent_dim=8", "model.generator.hidden=[16]", "model.critic.hidden=[16]",
            "trainer.batch_size=32", "trainer.steps=4", "trainer.steps_per_call=2",
            "trainer.checkpoint_every=2", "trainer.progress=false", "trainer.sample_rows=20",
            "tracking.log_every=2", "evaluate.enabled=false",
            "tracking.required=false", f"hydra.run.dir={tmp_path}/out",
        ],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    said = done.stdout + done.stderr  # Hydra's log handler writes to stdout
    assert "tracking.required=false: logging to the local store sqlite:///" in said
    local = tmp_path / "out" / "mlflow.db"
    assert local.is_file() and (tmp_path / "out" / "mlartifacts").is_dir()

    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(written) > 20  # outputs, hydra files, checkpoints, store, artifacts
    blobs = {str(p): p.read_bytes() for p in written}
    blobs["stdout"], blobs["stderr"] = done.stdout.encode(), done.stderr.encode()
    leaks = [
        f"{name} in {where}"
        for name, value in planted.items()
        for where, blob in blobs.items()
        if value.encode() in blob
    ]
    assert leaks == []


def test_a_password_in_tracking_uri_is_refused_before_hydra_writes_it(tmp_path: Path) -> None:
    """Hydra writes the overrides into ``.hydra/`` as typed: the password never gets there."""
    secret = secrets.token_hex(8)
    uri = f"http://user:{secret}@127.0.0.1:{free_port()}"
    command = [sys.executable, "-m", "wgangp.train", f"tracking.uri={uri}"]
    proc = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert (
        proc.stderr.strip()
        .splitlines()[-1]
        .startswith("wgangp: error: tracking.uri carries a password (http://user:***@127.0.0.1:")
    )
    assert "set MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD" in proc.stderr
    assert secret not in proc.stderr + proc.stdout
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert all(secret not in p.read_text(errors="replace") for p in written)


def test_the_reachability_check_sends_credentials_from_the_uri() -> None:
    """``MLFLOW_TRACKING_URI=http://user:password@host`` works: the check authenticates."""
    import base64
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    from wgangp.errors import TrackingError
    from wgangp.tracking.store import check_reachable

    expected = "Basic " + base64.b64encode(b"user:p@ss").decode()

    class Health(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the handler's name
            ok = self.path == "/health" and self.headers.get("Authorization") == expected
            self.send_response(200 if ok else 401)
            self.end_headers()
            self.wfile.write(b"OK")

        def log_message(self, *args) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = server.server_address[1]
        check_reachable(f"http://user:p%40ss@127.0.0.1:{port}")
        with pytest.raises(TrackingError) as err:
            check_reachable(f"http://user:wrong@127.0.0.1:{port}")
        assert "wrong" not in str(err.value)
    finally:
        server.shutdown()
