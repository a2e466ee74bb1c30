"""uv.lock is the one set of versions: bootstrap, CI and the images install it (docs/installs.md).

These tests fail when pyproject.toml and the lock disagree, when pyproject's lower bounds fall
below what the lock (and so every test) runs, and when the environment running the suite is not
the lock's. The images' copy of the lock is checked in tests/test_dockerfile.py and, built for
real, by scripts/docker_check.sh.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version
from support.configs import REPO

from scripts import lock_versions

LOCK = REPO / "uv.lock"
PYPROJECT = REPO / "pyproject.toml"


def _uv() -> str:
    beside_python = Path(sys.executable).parent / "uv"
    found = str(beside_python) if beside_python.exists() else shutil.which("uv")
    if found is None:
        pytest.skip("uv is not installed (the dev group installs it): the lock cannot be checked")
    return found


@functools.cache
def _lock() -> dict:
    return tomllib.loads(LOCK.read_text())


def _locked(name: str) -> list[Version]:
    return [Version(p["version"]) for p in _lock()["package"] if p["name"] == name]


def test_lock_matches_pyproject() -> None:
    result = subprocess.run(
        [_uv(), "lock", "--check"], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, (
        "uv.lock does not match pyproject.toml: run `uv lock`, the suite, and commit both\n"
        + result.stderr
    )


def test_bootstrap_refuses_a_stale_lock(tmp_path: Path) -> None:
    """A dependency added to pyproject.toml but not locked: bootstrap fails and installs nothing."""
    uv = _uv()
    for name in ("pyproject.toml", "uv.lock", "README.md", "scripts/bootstrap.sh"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, tmp_path / name)
    pyproject = tmp_path / "pyproject.toml"
    text = pyproject.read_text()
    pyproject.write_text(text.replace('"six>=1.17",', '"six>=1.17",\n    "rich>=13",', 1))
    assert pyproject.read_text() != text
    env = {**os.environ, "PATH": f"{Path(uv).parent}{os.pathsep}{os.environ['PATH']}"}
    env.pop("VIRTUAL_ENV", None)
    env["PYTHON"] = sys.executable
    result = subprocess.run(
        ["bash", "scripts/bootstrap.sh"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert result.returncode != 0
    assert "needs to be updated" in result.stderr, result.stderr
    assert not list((tmp_path / ".venv").glob("lib/python*/site-packages/pandas"))


def test_lower_bounds_are_the_locked_releases() -> None:
    """pyproject's lower bound of each runtime dependency is the locked release (major.minor):
    a pip install elsewhere never gets an older library than the one the suite ran. After
    `uv lock --upgrade`, raise the bound this names and run `uv lock` again."""
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    declared = project["dependencies"] + project["optional-dependencies"]["cuda"]
    for line in declared:
        requirement = Requirement(line)
        floors = [
            Version(spec.version.removesuffix(".*"))
            for spec in requirement.specifier
            if spec.operator in (">=", "==", "~=")
        ]
        assert floors, f"{line}: no lower bound"
        locked = min(_locked(requirement.name))
        floor = max(floors)
        assert floor <= locked, f"{line}: the lock has {locked}, below the bound"
        assert floor.release[:2] == locked.release[:2], (
            f"{line}: the lock runs {locked}; raise the lower bound to "
            f"{locked.major}.{locked.minor}"
        )


def test_cpu_and_cuda_builds_are_one_tensorflow_version() -> None:
    """The CPU image's tensorflow-cpu is the locked tensorflow's version, so every image and
    every bootstrap run the same TensorFlow code, built with or without CUDA."""
    (tensorflow,) = _locked("tensorflow")
    (tensorflow_cpu,) = _locked("tensorflow-cpu")
    assert tensorflow_cpu == tensorflow
    nvidia = [p["name"] for p in _lock()["package"] if p["name"].startswith("nvidia-")]
    assert "nvidia-cudnn-cu12" in nvidia  # the cuda extra's wheels are locked too


def test_this_environment_is_the_lock() -> None:
    """The suite runs on the versions the lock pins (bootstrap's .venv); elsewhere: skipped."""
    if Path(sys.prefix).resolve() != (REPO / ".venv").resolve():
        pytest.skip(f"not the repository's .venv ({sys.prefix}): no promise about its versions")
    names = ["tensorflow", "keras", "numpy", "pandas", "scikit-learn", "scipy", "mlflow"]
    names += ["hydra-core", "sdmetrics", "pytest", "ruff"]
    rows = lock_versions.compare(_lock(), names)
    assert [row for row in rows if row[1] != row[2]] == []
