"""The suite's own fixtures and markers (registered by tests/conftest.py as a pytest plugin).

Markers beside ``slow``: ``server`` (starts a real ``mlflow server`` or scoring server),
``browser`` (drives headless Chromium), ``gpu`` (needs a GPU TensorFlow can see: skipped here).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from support.configs import TINY, real_sample_path


@pytest.fixture
def real_sample() -> Path:
    path = real_sample_path()
    if not path.exists():
        pytest.skip(f"real-rows sample not found at {path} (set WGANGP_REAL_SAMPLE to its path)")
    return path


@pytest.fixture
def tiny_overrides() -> list[str]:
    return list(TINY)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    gpu_tests = [item for item in items if item.get_closest_marker("gpu")]
    if not gpu_tests:
        return
    import tensorflow as tf

    if not tf.config.list_physical_devices("GPU"):
        skip = pytest.mark.skip(reason="needs a GPU that TensorFlow can see")
        for item in gpu_tests:
            item.add_marker(skip)
