"""The harness: times the chosen systems at the chosen sizes and collects their records.

The naive loop, the trainer's variants and the matmul probe run in this process, timed
round-robin at each size so that the VM's drift hits them alike. A peer's libraries cannot share
the project's environment, so it runs as ``<env>/bin/python -m scripts.bench.peers.<module>``
from the repo root and prints one JSON record a size. ``--extras`` adds a batch sweep and each
system's peak memory in a fresh process (``peak_rss``).
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, replace
from typing import Any, Protocol

from scripts.bench import wgangp_systems
from scripts.bench.peers import envs_dir
from scripts.bench.peers.record import (
    SIZES,
    Contender,
    Record,
    Size,
    json_records,
    log,
    time_interleaved,
    versions,
)
from scripts.bench.peers.rows import REPO, Rows, real_sample_path

#: name -> (module run in the peer's env, title of its records)
PEERS = {
    "ydata": ("scripts.bench.peers.ydata_cwgangp", "ydata-synthetic 1.4.0 CWGAN-GP (TF 2.15)"),
    "ctgan": ("scripts.bench.peers.ctgan_bench", "CTGAN 0.12.1 (PyTorch CPU)"),
}
#: Timed in this process, round-robin at each size.
IN_PROCESS_SYSTEMS = ("naive", *wgangp_systems.SYSTEMS, "matmul")
ALL_SYSTEMS = ("naive", *wgangp_systems.SYSTEMS, *PEERS, "matmul")
SWEEP_BATCHES = (64, 128, 256, 512, 1024, 2048, 4096)
RSS_ROWS = 1_000_000
#: The trainer's extras use the first of these asked for.
EXTRAS_PREFERENCE = ("wgangp_k_xla", "wgangp_k", "wgangp", "wgangp_xla")
QUICK_BUDGETS = {"steps": 3, "repeats": 2, "warmup": 1, "peer_timeout": 100, "k": 2}


@dataclass(frozen=True, kw_only=True)
class Plan:
    """The chosen systems, sizes and data, and the budgets the harness and the peers run with
    (these defaults are a full run's; ``--quick`` only keeps the harness exercised)."""

    systems: tuple[str, ...] = ()
    sizes: tuple[str, ...] = ("default", "small")
    data: str | None = None
    extras: bool = False
    quick: bool = False
    steps: int = 40  # generator steps per timed repeat
    repeats: int = 5
    warmup: int = 5
    peer_timeout: int = 1800  # seconds for one peer's process
    k: int = wgangp_systems.K_STEPS  # generator steps per call of the ``_k`` variants

    @classmethod
    def chosen(
        cls, *, quick: bool = False, steps: int | None = None, repeats: int | None = None, **rest
    ) -> Plan:
        """A full run's budgets, or a quick one's (few steps, K=2); ``steps`` and ``repeats``
        given on the command line win. ``rest``: systems, sizes, data, extras."""
        plan = cls(quick=quick, **(QUICK_BUDGETS if quick else {}), **rest)
        return replace(plan, steps=steps or plan.steps, repeats=repeats or plan.repeats)


def cpu_tags() -> dict[str, str]:
    """The CPU model and whether bf16 matrix units were there to use."""
    from wgangp.training.precision import cpu_info

    return cpu_info().tags()


def environment(import_missing: bool = True) -> dict[str, object]:
    """Python, the load, the CPU and the main environment's TensorFlow, Keras and numpy."""
    return {**versions("tensorflow", "keras", "numpy", import_missing=import_missing), **cpu_tags()}


class System(Protocol):
    """What the harness needs of an in-process system (naive loop, trainer variant, probe)."""

    variant: str
    steps_per_call: int  # ``run`` is only asked for multiples of it
    settings: dict[str, Any]
    notes: list[str]

    def run(self, steps: int) -> object: ...  # ``steps`` generator steps, returns when done
    def flops_per_gen_step(self) -> float | None: ...  # matmul FLOPs of one generator step


def peer_sizes(plan: Plan) -> list[str]:
    """Peers: their native settings plus the chosen sizes (quick: the smallest only)."""
    if plan.quick:
        return ["small"] if "small" in plan.sizes else list(plan.sizes[:1])
    return ["native", *plan.sizes]


def peer_command(name: str, sizes: list[str], plan: Plan) -> list[str]:
    """The command line that runs peer ``name`` in its env (with cwd = the repo root) and the
    peer's own options for how long it trains (``--quick`` keeps it to seconds)."""
    command = [str(envs_dir() / name / "bin" / "python"), "-m", PEERS[name][0], "--json"]
    command += ["--size", ",".join(sizes)]
    path = real_sample_path(plan.data)
    if path.is_file():
        command += ["--data", str(path)]
    if name == "ydata" and plan.quick:
        return command + ["--steps", "3", "--repeats", "1", "--warmup", "1"]
    if name == "ydata":
        return command + ["--steps", str(max(plan.steps, 60)), "--repeats", str(plan.repeats)]
    if plan.quick:
        return command + ["--epochs", "1", "--repeats", "1", "--max-rows", "1500", "--no-flops"]
    return command + ["--epochs", "2", "--repeats", str(min(plan.repeats, 3))]


def run_peer(name: str, sizes: list[str], plan: Plan) -> list[Record]:
    """One subprocess in the peer's own env, one record per size: skipped if the env is missing;
    failed for every size if it printed no record, for each size it did not reach if it timed
    out (a peer that fails on its own prints a failed record itself)."""
    title = PEERS[name][1]
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
    reported = json_records(stdout)
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


class Harness:
    """Runs the plan's systems at its sizes and collects the records."""

    def __init__(self, plan: Plan, rows: Rows | None) -> None:
        self.plan = plan
        self.rows = rows
        self.records: list[Record] = []

    def add(self, record: Record) -> None:
        """Keep ``record`` (flagged if it trained on simulated rows) and log its figure."""
        if self.rows and self.rows.simulated and record.system not in PEERS:
            record.notes.insert(0, self.rows.note)
        self.records.append(record)
        figure = record.critic_samples_per_s
        shown = f"{figure:,.0f} critic samples/s" if figure else record.status
        log(f"  {record.system:<13} {record.variant:<26} {record.size:<8} {shown}")

    def build(self, name: str, size: Size, k: int) -> System:
        """System ``name`` at ``size`` (a ``_k`` variant with ``k`` steps per call)."""
        if name not in ("naive", "matmul"):
            return wgangp_systems.build(name, size, self.rows, k)
        from scripts.bench.matmul_probe import ProbeStep
        from scripts.bench.naive_loop import NaiveLoop

        loop = NaiveLoop(size, self.rows)  # the probe runs its step's matmuls (traced, not run)
        return loop if name == "naive" else ProbeStep(loop.flop_count().shapes)

    def time_round_robin(
        self, names: list[str], size: Size, steps: int, warmup: int, k: int, repeats: int
    ) -> list[Record]:
        """Build ``names`` at ``size`` and time them round-robin, each in whole calls of its
        ``steps_per_call``; their records, not yet added (one that cannot be built is added at
        once, skipped or failed, and the others go on)."""
        built: list[tuple[str, System, Contender]] = []
        for name in names:
            try:
                system = self.build(name, size, k)
            except NotImplementedError as err:
                self.add(Record.unmeasured(name, "not built", size.name, "skipped", str(err)))
                continue
            except Exception as err:  # noqa: BLE001 - one broken system must not stop the run
                self.add(Record.failed(name, "not built", size.name, err))
                continue
            call = max(1, system.steps_per_call)
            whole = [max(call, n // call * call) for n in (steps, warmup)]
            built.append((name, system, Contender(system.run, *whole)))
        timings = time_interleaved([contender for *_, contender in built], repeats)
        return [
            Record.measured(
                timing,
                size,
                system=name,
                variant=system.variant,
                flops_per_gen_step=system.flops_per_gen_step(),
                settings={
                    **environment(),
                    "quick": self.plan.quick,
                    "steps_per_call": system.steps_per_call,
                    **system.settings,
                },
                notes=list(system.notes),
            )
            for (name, system, _), timing in zip(built, timings, strict=True)
        ]

    def run_size(self, size: Size) -> None:
        """The naive loop, the trainer's variants and the matmul probe at one size."""
        plan = self.plan
        names = [name for name in IN_PROCESS_SYSTEMS if name in plan.systems]
        budget = (plan.steps, plan.warmup, plan.k, plan.repeats)
        for record in self.time_round_robin(names, size, *budget):
            self.add(record)

    def run_batch_sweep(self, names: list[str]) -> None:
        """ms per generator step at the default widths across batch sizes, for ``names``, timed
        round-robin at each; a repeat holds about the same time at every batch size, so K is
        capped at its steps (K steps at the largest batches would outlast a whole repeat)."""
        note = "extras: default widths at another batch size, timed round-robin with " + (
            ", ".join(names)
        )
        for batch in SWEEP_BATCHES:
            size = replace(SIZES["default"], batch=batch)
            budget = max(10, int(40 * 512 / batch))
            k = min(self.plan.k, budget)
            for record in self.time_round_robin(names, size, budget, 3, k, 3):
                record.variant, record.notes = f"batch sweep b={batch}", [note]
                record.extra = {"ms_per_gen_step": round(1000 / record.gen_steps_per_s, 3)}
                self.add(record)

    def peak_rss_record(self, name: str, steps: int) -> Record:
        """Peak memory of ``name`` in a fresh process (so nothing else this run loaded counts);
        its last JSON line is the record, a failed record if it printed none."""
        command = [sys.executable, "-m", "scripts.bench.peak_rss", "--system", name]
        command += ["--rss-rows", str(RSS_ROWS), "--steps", str(steps)]
        log(f"  running {' '.join(command[1:])}")
        done = subprocess.run(command, capture_output=True, text=True, cwd=str(REPO), timeout=1800)
        reported = json_records(done.stdout)
        if reported:
            return reported[-1]
        note = f"exit {done.returncode}: {done.stderr.strip()[-300:]}"
        return Record.unmeasured(name, f"peak-rss {RSS_ROWS:,} rows", "default", "failed", note)

    def run_extras(self) -> None:
        """The batch sweep and peak memory, for the naive loop and the trainer's fastest mode
        asked for."""
        systems = self.plan.systems
        chosen = [s for s in EXTRAS_PREFERENCE if s in systems][:1]
        swept = [s for s in systems if s == "naive"] + chosen
        if swept:
            self.run_batch_sweep(swept)
        if "naive" in systems:
            self.add(self.peak_rss_record("naive", 20))
        if chosen:
            self.add(self.peak_rss_record(chosen[0], 100))

    def run(self) -> list[Record]:
        """Every size in this process, then the peers, then (full mode) the extras."""
        plan = self.plan
        if any(s in IN_PROCESS_SYSTEMS for s in plan.systems):
            for name in plan.sizes:
                log(f"size {name}:")
                self.run_size(SIZES[name])
        peers = [p for p in PEERS if p in plan.systems]
        if peers:
            log("peers:")
            for name in peers:
                for record in run_peer(name, peer_sizes(plan), plan):
                    self.add(record)
        if plan.extras and not plan.quick:
            log("extras:")
            self.run_extras()
        return self.records
