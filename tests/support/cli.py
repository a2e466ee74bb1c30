"""The real commands in a subprocess, as a user runs them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support.configs import REPO


def run_train_cli(args: list[str], cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess:
    """``python -m wgangp.train ARGS`` in a subprocess, untouched by the caller's tracking URI."""
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(REPO)}
    env.pop("MLFLOW_TRACKING_URI", None)
    return subprocess.run(
        [sys.executable, "-m", "wgangp.train", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_schema_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``python -m wgangp.schema ARGS`` in a subprocess."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "wgangp.schema", *args], cwd=cwd, env=env, capture_output=True,
        text=True, timeout=300,
    )  # fmt: skip
