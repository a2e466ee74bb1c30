"""The benchmark's peers start as modules of this checkout, in environments without the project.

The peers' own environments (``scripts/bench/peers/setup_envs.sh``) take gigabytes to build, so
these tests check the command lines, what the peer modules import, and a peer started through a
stand-in environment whose interpreter lacks the peer's library.
"""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from support.configs import REPO

from scripts.bench.harness import PEERS, Plan, peer_command, run_peer

FULL, QUICK = Plan.chosen(quick=False), Plan.chosen(quick=True)


@pytest.fixture
def envs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty folder of peer environments, as ``WGANGP_BENCH_ENVS`` points setup_envs.sh."""
    folder = tmp_path / "envs"
    folder.mkdir()
    monkeypatch.setenv("WGANGP_BENCH_ENVS", str(folder))
    return folder


def stand_in_env(envs: Path, name: str, script: str) -> None:
    """A ready peer env whose ``bin/python`` is a shell ``script`` (``"$@"``: the arguments)."""
    python = envs / name / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f"#!/bin/sh\n{script}\n")
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    (envs / name / ".ready").touch()


def test_peer_command_runs_the_peer_module_with_its_budget(envs: Path, tmp_path: Path) -> None:
    data = tmp_path / "rows.csv.gz"
    data.write_bytes(b"")
    full = peer_command("ctgan", ["native", "small"], replace(FULL, data=str(data)))
    assert full == [
        str(envs / "ctgan" / "bin" / "python"),
        "-m",
        "scripts.bench.peers.ctgan_bench",
        "--json",
        "--size",
        "native,small",
        "--data",
        str(data),
        "--epochs",
        "2",
        "--repeats",
        "3",
    ]
    quick = peer_command("ydata", ["small"], replace(QUICK, data=str(data)))
    assert quick == [
        str(envs / "ydata" / "bin" / "python"),
        "-m",
        "scripts.bench.peers.ydata_cwgangp",
        "--json",
        "--size",
        "small",
        "--data",
        str(data),
        "--steps",
        "3",
        "--repeats",
        "1",
        "--warmup",
        "1",
    ]
    full_ydata = peer_command("ydata", ["default"], replace(FULL, data=str(data)))
    assert full_ydata[-4:] == ["--steps", "60", "--repeats", "5"]
    # No file there: the peer is not sent to it (it looks for the shared sample itself).
    absent = peer_command("ctgan", ["small"], replace(QUICK, data=str(tmp_path / "absent.csv")))
    assert "--data" not in absent


def test_missing_env_is_recorded_as_skipped_with_the_command_that_creates_it(envs: Path) -> None:
    records = run_peer("ydata", ["native", "small"], FULL)
    assert [(r.system, r.size, r.status) for r in records] == [
        ("ydata", "native", "skipped"),
        ("ydata", "small", "skipped"),
    ]
    assert "bash scripts/bench/peers/setup_envs.sh ydata" in records[0].notes[0]


@pytest.mark.parametrize("name, library", [("ydata", "ydata_synthetic"), ("ctgan", "ctgan")])
def test_peer_module_starts_from_the_repo_root_and_reports_as_json(
    envs: Path, name: str, library: str
) -> None:
    """Started by the harness in an env without its library, the peer module itself (found as
    ``scripts.bench.peers.*`` from the repo root) prints the failure as a JSON record."""
    stand_in_env(envs, name, f'exec "{sys.executable}" "$@"')
    (record,) = run_peer(name, ["small"], QUICK)
    assert (record.system, record.status) == (name, "failed")
    assert record.notes[0] == f"ModuleNotFoundError: No module named '{library}'"
    assert record.notes[-1] == "quick mode: tiny budget, not a measurement"


def test_peer_that_times_out_keeps_the_sizes_it_reported(envs: Path) -> None:
    line = json.dumps({"system": "ctgan", "variant": "ctgan-0.12.1", "size": "native"})
    stand_in_env(envs, "ctgan", f"echo '{line}'\nexec sleep 30")
    records = run_peer("ctgan", ["native", "small"], replace(FULL, peer_timeout=2))
    assert [(r.size, r.status) for r in records] == [("small", "failed"), ("native", "ok")]
    assert records[0].notes == ["timed out after 2s"]


def test_peer_that_prints_no_record_fails_every_size_with_its_last_words(envs: Path) -> None:
    stand_in_env(envs, "ydata", "echo 'Illegal instruction' >&2; exit 132")
    records = run_peer("ydata", ["native", "small"], FULL)
    assert [(r.size, r.status) for r in records] == [("native", "failed"), ("small", "failed")]
    assert records[0].notes == ["exit 132, no JSON record: Illegal instruction"]


def test_peer_modules_need_neither_tensorflow_nor_the_project() -> None:
    """The peers' envs have an older TensorFlow or none, and no ``wgangp``: importing a peer
    module (and ``record``, ``rows``) must load neither, nor pandas until rows are read."""
    shared = ["scripts.bench.peers.record", "scripts.bench.peers.rows"]
    modules = [*shared, *(module for module, _ in PEERS.values())]
    code = (
        f"import sys\nfor m in {modules!r}: __import__(m)\n"
        "print([m for m in ('tensorflow', 'keras', 'torch', 'pandas', 'omegaconf', 'wgangp') "
        "if m in sys.modules])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


def test_peer_main_prints_a_record_per_size_and_fails_only_the_size_that_raised(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Both peers' entry point: a size whose measurement raises is a failed record (exit 1);
    the sizes before and after it are still measured and printed."""
    from scripts.bench.peers.record import Record, peer_main, peer_parser

    def prepare(args) -> object:
        def measure(size: str) -> Record:
            if size == "default":
                raise MemoryError("too big")
            return Record(system="p", variant="v", size=size)

        return measure

    monkeypatch.setattr(sys, "argv", ["peer", "--size", "native,default,small"])
    with pytest.raises(SystemExit) as exited:
        peer_main("p", "v", peer_parser("peer", "a peer"), prepare)
    assert exited.value.code == 1
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["size"], r["status"]) for r in records] == [
        ("native", "ok"),
        ("default", "failed"),
        ("small", "ok"),
    ]
    assert records[1]["notes"] == ["MemoryError: too big"]
