"""Starts a peer in its own virtual environment and reads back its records.

Each peer needs libraries that cannot share the project's environment (an older TensorFlow,
PyTorch), so it runs as ``<env>/bin/python -m scripts.bench.peers.<module>`` with the repo root
as working directory, which puts this checkout's ``scripts`` package on its path. It prints one
JSON record per size on stdout.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from scripts.bench.machine import cpu_tags
from scripts.bench.peers.record import Record, log
from scripts.bench.peers.rows import REPO, real_sample_path
from scripts.bench.plan import Plan

#: name -> (module run in the peer's env, title of its records)
PEERS = {
    "ydata": ("scripts.bench.peers.ydata_cwgangp", "ydata-synthetic 1.4.0 CWGAN-GP (TF 2.15)"),
    "ctgan": ("scripts.bench.peers.ctgan_bench", "CTGAN 0.12.1 (PyTorch CPU)"),
}
ENVS_VARIABLE = "WGANGP_BENCH_ENVS"  # as setup_envs.sh reads it


def envs_dir() -> Path:
    """Where ``setup_envs.sh`` puts the peers' environments."""
    return Path(os.environ.get(ENVS_VARIABLE, REPO / ".bench-envs"))


def peer_sizes(plan: Plan) -> list[str]:
    """Peers: their native settings plus the chosen sizes (quick: the smallest only)."""
    if plan.quick:
        return ["small"] if "small" in plan.sizes else list(plan.sizes[:1])
    return ["native", *plan.sizes]


def peer_budget(name: str, plan: Plan) -> list[str]:
    """The peer's own options for how long it trains (``--quick`` keeps it to seconds)."""
    if name == "ydata":
        if plan.quick:
            return ["--steps", "3", "--repeats", "1", "--warmup", "1"]
        return ["--steps", str(max(plan.steps, 60)), "--repeats", str(plan.repeats)]
    if plan.quick:
        return ["--epochs", "1", "--repeats", "1", "--max-rows", "1500", "--no-flops"]
    return ["--epochs", "2", "--repeats", str(min(plan.repeats, 3))]


def peer_command(name: str, sizes: list[str], plan: Plan) -> list[str]:
    """The command line that runs peer ``name`` in its env (run it with cwd = the repo root)."""
    module, _ = PEERS[name]
    python = envs_dir() / name / "bin" / "python"
    command = [str(python), "-m", module, "--json", "--size", ",".join(sizes)]
    path = real_sample_path(plan.data)
    if path.is_file():
        command += ["--data", str(path)]
    return command + peer_budget(name, plan)


def run_peer(name: str, sizes: list[str], plan: Plan) -> list[Record]:
    """One subprocess in the peer's own env, one record per size: skipped if the env is missing;
    failed for every size if it printed no record, for each size it did not reach if it timed
    out (a peer that fails on its own prints a failed record itself)."""
    _, title = PEERS[name]
    env = envs_dir() / name
    if not (env / ".ready").is_file() or not (env / "bin" / "python").exists():
        note = f"env {env} missing: create it with `bash scripts/bench/peers/setup_envs.sh {name}`"
        return [Record.unmeasured(name, title, size, "skipped", note) for size in sizes]
    command = peer_command(name, sizes, plan)
    log(f"  running {' '.join(command[1:])}")
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=plan.peer_timeout, cwd=str(REPO)
        )
        stdout, timed_out = done.stdout, False
        tail = (done.stderr or stdout).strip().splitlines()[-3:]
        missing_note = f"exit {done.returncode}, no JSON record: " + " | ".join(tail)
    except subprocess.TimeoutExpired as err:
        stdout = err.stdout.decode() if isinstance(err.stdout, bytes) else err.stdout or ""
        timed_out, missing_note = True, f"timed out after {plan.peer_timeout}s"
    reported = [Record.from_dict(json.loads(line)) for line in json_lines(stdout)]
    for record in reported:
        if record.settings:  # measured on this machine, in another environment
            record.settings.update(cpu_tags())
        if plan.quick:
            record.notes.append("quick mode: tiny budget, not a measurement")
    got = {record.size for record in reported} if timed_out or not reported else set(sizes)
    failed = [
        Record.unmeasured(name, title, size, "failed", missing_note)
        for size in sizes
        if size not in got
    ]
    return failed + reported


def json_lines(stdout: str) -> list[str]:
    """The record lines of a peer's output (anything else it prints is ignored)."""
    return [line for line in stdout.splitlines() if line.startswith("{")]
