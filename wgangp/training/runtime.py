"""Process-wide TensorFlow settings (seed, determinism, precision policy, device placement) and
the tags that say where a run ran."""

from __future__ import annotations

import contextlib
import logging
import platform
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import keras
import tensorflow as tf

from wgangp.config import TrainerConfig
from wgangp.errors import ConfigError
from wgangp.training.precision import cpu_info, gpu_capability, resolve_precision

log = logging.getLogger("wgangp.runtime")


def select_device(device: str) -> str:
    """Apply ``trainer.device`` and return the device actually used ("cpu" or "gpu")."""
    gpus = tf.config.list_physical_devices("GPU")
    if device == "gpu" and not gpus:
        raise ConfigError(
            "trainer.device=gpu but TensorFlow sees no GPU; install tensorflow[and-cuda] and run "
            "with --gpus all, or use trainer.device=auto"
        )
    if device == "cpu" and gpus:
        with contextlib.suppress(RuntimeError):  # already initialized: keep going on CPU by scope
            tf.config.set_visible_devices([], "GPU")
        return "cpu"
    for gpu in gpus:
        with contextlib.suppress(RuntimeError):  # must be set before the GPU is initialized
            tf.config.experimental.set_memory_growth(gpu, True)
    return "gpu" if gpus else "cpu"


class Runtime(NamedTuple):
    device: str  # cpu | gpu
    precision: str  # the dtype policy in force (``auto`` resolved)


@contextlib.contextmanager
def training_runtime(tc: TrainerConfig, seed: int) -> Iterator[Runtime]:
    """Seed everything, set determinism and the dtype policy; restore the policy afterwards."""
    device = select_device(tc.device)
    capability = gpu_capability() if device == "gpu" else None
    precision, why = resolve_precision(tc.precision, device, cpu_info(), capability)
    if tc.precision == "auto":
        log.info("precision: auto -> %s (%s)", precision, why)
    keras.utils.set_random_seed(seed)
    if tc.deterministic:
        tf.config.experimental.enable_op_determinism()
    previous = keras.config.dtype_policy().name
    keras.mixed_precision.set_dtype_policy(precision)
    try:
        yield Runtime(device, precision)
    finally:
        keras.mixed_precision.set_dtype_policy(previous)


def environment_tags() -> dict[str, str]:
    """TensorFlow version, host platform, Python version, the CPU (model, bf16 and AMX units) and
    the GPUs TensorFlow sees.

    The ``device`` tag is not here: :func:`training_runtime` reports the device the run used.
    """
    tags = {
        "tensorflow.version": tf.__version__,
        "platform": platform.platform(),
        "python.version": platform.python_version(),
        **cpu_info().tags(),
    }
    gpus = tf.config.list_physical_devices("GPU")
    if gpus:
        details = tf.config.experimental.get_device_details(gpus[0])
        tags["gpu.name"] = str(details.get("device_name", "unknown"))
        tags["gpu.count"] = str(len(gpus))
    return tags


def git_commit(cwd: Path) -> str:
    """The commit of the code a run ran, or ``unknown`` outside a git checkout."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() if out.returncode == 0 else "unknown"
