"""A real ``mlflow server`` on a free loopback port, for tests that need HTTP tracking.

Tests against a real server catch what a sqlite URI hides: the REST client, proxied artifact
upload/download, Host-header checks, and what happens when the server dies mid-run. Each server
gets its own sqlite store and artifact directory under the given temporary directory, runs in its
own process group (the CLI forks uvicorn), and is always torn down as a group.

Usage (the fixtures are registered by tests/conftest.py)::

    def test_x(mlflow_server):                   # started, stopped after the test
        MlflowClient(mlflow_server.url).create_experiment("wgangp")

    with MlflowServer(tmp_path) as server:       # or by hand; .kill() / .restart() for outages
        ...
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

#: Start-up imports mlflow twice (CLI, then the uvicorn app), ~20 s of CPU: measured 40 s at load 4
#: and 135 s at load 12 on a 2-core machine. The bound is for a wedged server, not a slow one.
DEFAULT_STARTUP_TIMEOUT_S = 300.0


class MlflowServerError(RuntimeError):
    """The server did not come up (or went away); the message carries its log tail."""


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port the OS says is free right now on ``host``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def mlflow_command() -> list[str]:
    """The ``mlflow`` CLI of the running interpreter's environment (the project venv)."""
    beside_python = Path(sys.executable).parent / "mlflow"
    if beside_python.exists():
        return [str(beside_python)]
    on_path = shutil.which("mlflow")
    return [on_path] if on_path else [sys.executable, "-m", "mlflow"]


def live_processes_in_group(pgid: int) -> list[int]:
    """Pids in process group ``pgid`` that are not zombies.

    Orphaned workers are re-parented to an init that may never reap them, so a plain
    ``killpg(pgid, 0)`` would still see their zombies; /proc shows the real state.
    """
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        state, group = fields[0], int(fields[2])
        if group == pgid and state not in ("Z", "X"):
            alive.append(int(stat.parent.name))
    return alive


class MlflowServer:
    """One ``mlflow server`` process group with a sqlite store and served artifacts.

    ``enable_job_execution`` is off by default: the server's job runner (a tree of huey
    consumers for GenAI jobs) is not needed for tracking and doubles start-up time.
    """

    def __init__(
        self,
        tmp_dir: Path,
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT_S,
        allowed_hosts: str | None = None,
        enable_job_execution: bool = False,
        backend_store_uri: str | None = None,
    ) -> None:
        self.root = Path(tmp_dir)
        self.host = host
        self.port = port or free_port(host)
        self.startup_timeout = startup_timeout
        self.allowed_hosts = allowed_hosts
        self.enable_job_execution = enable_job_execution
        self.db_path = self.root / "mlflow.db"
        self._backend_store_uri = backend_store_uri
        self.artifacts_dir = self.root / "artifacts"
        self.log_path = self.root / "mlflow-server.log"
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The tracking URI to hand to ``MlflowClient`` or ``MLFLOW_TRACKING_URI``."""
        return f"http://{self.host}:{self.port}"

    @property
    def backend_store_uri(self) -> str:
        """The given store URI, else a sqlite file in the server's directory."""
        return self._backend_store_uri or f"sqlite:///{self.db_path}"

    @property
    def pgid(self) -> int | None:
        """Process group of the running server (the CLI is its session leader)."""
        return self._process.pid if self._process is not None else None

    @property
    def is_running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def command(self) -> list[str]:
        command = [
            *mlflow_command(),
            "server",
            "--backend-store-uri",
            self.backend_store_uri,
            "--artifacts-destination",
            str(self.artifacts_dir),
            "--serve-artifacts",
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--workers",
            "1",
        ]
        if self.allowed_hosts:
            command += ["--allowed-hosts", self.allowed_hosts]
        return command

    def start(self) -> MlflowServer:
        """Launch the server and block until ``/health`` answers (or fail with the log tail)."""
        if self.is_running:
            return self
        self.root.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        env.pop("MLFLOW_TRACKING_URI", None)
        env["PYTHONUNBUFFERED"] = "1"
        env["MLFLOW_SERVER_ENABLE_JOB_EXECUTION"] = str(self.enable_job_execution).lower()
        with self.log_path.open("ab") as log:
            log.write(f"\n=== start: {' '.join(self.command())}\n".encode())
            log.flush()
            self._process = subprocess.Popen(
                self.command(),
                cwd=self.root,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            self._wait_healthy()
        except BaseException:
            self.kill()
            raise
        return self

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        last_error = "no answer yet"
        while time.monotonic() < deadline:
            assert self._process is not None
            if self._process.poll() is not None:
                raise MlflowServerError(
                    f"mlflow server exited with code {self._process.returncode} before "
                    f"answering {self.url}/health; log tail:\n{self.log_tail()}"
                )
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=2) as response:
                    if response.status == 200:
                        return
                    last_error = f"HTTP {response.status}"
            except (urllib.error.URLError, OSError) as err:
                last_error = str(getattr(err, "reason", err))
            time.sleep(0.25)
        raise MlflowServerError(
            f"mlflow server at {self.url} not healthy after {self.startup_timeout:.0f} s "
            f"({last_error}); log tail:\n{self.log_tail()}"
        )

    def _signal_group(self, sig: signal.Signals) -> None:
        if self._process is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._process.pid, sig)

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM the process group, wait, then SIGKILL whatever is left."""
        if self._process is None:
            return
        self._signal_group(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(timeout=timeout)
        self._reap()

    def kill(self) -> None:
        """SIGKILL the whole process group at once: an abrupt outage, no graceful shutdown."""
        if self._process is None:
            return
        self._reap()

    def _reap(self) -> None:
        # Always SIGKILL the group, even after the leader exited: forked workers may linger.
        self._signal_group(signal.SIGKILL)
        assert self._process is not None
        pgid = self._process.pid
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(timeout=10)
        self._process = None
        deadline = time.monotonic() + 10
        while live_processes_in_group(pgid) and time.monotonic() < deadline:
            time.sleep(0.1)
        self._wait_port_released()

    def _wait_port_released(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                try:
                    sock.bind((self.host, self.port))
                    return
                except OSError:
                    time.sleep(0.1)

    def restart(self) -> MlflowServer:
        """Stop (if running) and start again on the same port with the same store."""
        self.stop()
        return self.start()

    def log_tail(self, lines: int = 40) -> str:
        if not self.log_path.exists():
            return "(no log)"
        text = self.log_path.read_text(errors="replace").splitlines()
        return "\n".join(text[-lines:])

    def __enter__(self) -> MlflowServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


@pytest.fixture
def mlflow_server(tmp_path: Path) -> Iterator[MlflowServer]:
    """A fresh server per test (own store under ``tmp_path``); safe to ``kill``/``restart``."""
    server = MlflowServer(tmp_path / "mlflow-server")
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.fixture(scope="session")
def shared_mlflow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MlflowServer]:
    """One server for the whole session, to pay start-up once. Never kill or restart it;
    give each test its own experiment name."""
    server = MlflowServer(tmp_path_factory.mktemp("shared-mlflow-server"))
    try:
        yield server.start()
    finally:
        server.stop()
