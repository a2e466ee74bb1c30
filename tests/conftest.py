"""Shared fixtures: tiny configs, real-sample location, quiet TensorFlow."""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import subprocess  # noqa: E402
import sys  # noqa: E402

import pytest  # noqa: E402
from absl import logging as absl_logging  # noqa: E402

# absl (imported by TensorFlow) builds its log handler on sys.stderr as it is at import time:
# pytest's capture file here. Hydra's in-process main() reconfigures logging, which closes every
# handler, and absl's close() closes its stream unless it is the *current* sys.stderr, which
# killed pytest's capture ("I/O operation on closed file") after any in-process training.
absl_logging.get_absl_handler().python_handler.stream = sys.__stderr__

REPO = Path(__file__).resolve().parents[1]
CONF_DIR = REPO / "conf"


def real_sample_path() -> Path:
    """The real-rows sample beside the repo (or $WGANGP_REAL_SAMPLE)."""
    env = os.environ.get("WGANGP_REAL_SAMPLE")
    return Path(env) if env else REPO.parent / "shared" / "data" / "creditcard_real_sample.csv.gz"


@pytest.fixture
def real_sample() -> Path:
    path = real_sample_path()
    if not path.exists():
        pytest.skip(f"real-rows sample not found at {path} (set WGANGP_REAL_SAMPLE to its path)")
    return path


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


def compose(overrides: list[str] | None = None):
    """Compose the real Hydra config (as the CLI would) with overrides."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    from wgangp.config import register_configs

    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return hydra_compose(config_name="config", overrides=overrides or [])


#: Tiny data and networks: every test that trains starts from these.
TINY_MODEL = [
    "data=simulated",
    "data.simulated_rows=4000",
    "model.latent_dim=8",
    "model.generator.hidden=[16,16]",
    "model.critic.hidden=[16,16]",
    "trainer.batch_size=32",
]
#: The ablation's reduced size: large enough for tf_norm_nan to fail at a known step (52).
SMALL_MODEL = [
    "data=simulated",
    "data.simulated_rows=20000",
    "model.latent_dim=16",
    "model.generator.hidden=[32,32]",
    "model.critic.hidden=[32,32]",
    "trainer.batch_size=64",
]

TINY = [
    *TINY_MODEL,
    "trainer.steps=6",
    "trainer.steps_per_call=3",
    "trainer.checkpoint_every=3",
    "trainer.progress=false",
    "trainer.sample_rows=50",
    "tracking.log_every=2",
    "evaluate.enabled=false",
]


@pytest.fixture
def tiny_overrides() -> list[str]:
    return list(TINY)
