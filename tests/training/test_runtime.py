"""The runtime: which device a run uses, and the tags that say where it ran."""

from __future__ import annotations

import platform

import pytest
import tensorflow as tf

from wgangp.cli import quiet_tensorflow
from wgangp.errors import ConfigError
from wgangp.training.runtime import environment_tags, git_commit, select_device


def test_environment_tags_leave_the_device_to_the_runtime() -> None:
    tags = environment_tags()
    assert tags["tensorflow.version"] == tf.__version__
    assert tags["python.version"] == platform.python_version()
    assert "device" not in tags  # one source for it: select_device, the device actually used


def test_cpu_is_chosen_here_and_a_missing_gpu_is_one_line() -> None:
    if tf.config.list_physical_devices("GPU"):
        pytest.skip("this machine has a GPU")
    assert select_device("auto") == "cpu"
    assert select_device("cpu") == "cpu"
    with pytest.raises(ConfigError, match="trainer.device=gpu but TensorFlow sees no GPU"):
        select_device("gpu")


def test_git_commit_outside_a_checkout_is_unknown(tmp_path) -> None:
    assert git_commit(tmp_path) == "unknown"


def test_tensorflow_is_quiet_where_no_gpu_can_be_found_and_the_users_level_is_kept() -> None:
    environ: dict[str, str] = {}
    assert quiet_tensorflow(environ, driver=False) == "3" and environ == {
        "TF_CPP_MIN_LOG_LEVEL": "3"
    }
    environ = {}
    assert quiet_tensorflow(environ, driver=True) == "1"  # a GPU host: its warnings and errors
    environ = {"TF_CPP_MIN_LOG_LEVEL": "0"}
    assert (
        quiet_tensorflow(environ, driver=False) is None and environ["TF_CPP_MIN_LOG_LEVEL"] == "0"
    )
    assert "CUDA_VISIBLE_DEVICES" not in environ  # never hides a GPU: auto still finds it
