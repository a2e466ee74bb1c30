"""The harness: times the chosen systems at the chosen sizes and collects their records.

The naive loop, the trainer's variants and the matmul probe run in this process, timed
round-robin at each size (:func:`time_interleaved`) so that the VM's drift hits them alike; the
peers run in their own environments (``peer_launch``). ``--extras`` adds a batch sweep (timed
round-robin too) and each system's peak memory in a fresh process (``peak_rss``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from scripts.bench.machine import environment
from scripts.bench.peer_launch import PEERS, peer_sizes, run_peer
from scripts.bench.peers.record import SIZES, Record, Size, Timing, log
from scripts.bench.peers.rows import REPO, Rows
from scripts.bench.plan import Plan
from scripts.bench.wgangp_systems import SYSTEMS as WGANGP_SYSTEMS

#: Timed in this process, round-robin at each size.
IN_PROCESS_SYSTEMS = ("naive", *WGANGP_SYSTEMS, "matmul")
ALL_SYSTEMS = ("naive", *WGANGP_SYSTEMS, *PEERS, "matmul")
SWEEP_BATCHES = (64, 128, 256, 512, 1024, 2048, 4096)
RSS_ROWS = 1_000_000
#: The trainer's extras use the first of these asked for.
EXTRAS_PREFERENCE = ("wgangp_k_xla", "wgangp_k", "wgangp", "wgangp_xla")


class System(Protocol):
    """What the harness needs of an in-process system (naive loop, trainer variant, probe)."""

    variant: str
    steps_per_call: int  # ``run`` is only asked for multiples of it
    settings: dict[str, Any]
    notes: list[str]

    def run(self, steps: int) -> object:
        """Complete ``steps`` generator steps; return only when the work is done."""

    def flops_per_gen_step(self) -> float | None:
        """Matmul FLOPs of one generator step."""


@dataclass(frozen=True)
class Contender:
    """One system of an interleaved timing: ``run(n)`` must finish ``n`` generator steps."""

    run: Callable[[int], object]
    steps: int
    warmup: int


def time_interleaved(contenders: list[Contender], repeats: int) -> list[Timing]:
    """Warm every system up, then time repeat r of each before repeat r+1 of any.

    This VM's speed drifts over minutes: timed in blocks, one after the other, a system's
    figure depends on its place in the run. Round-robin repeats put the slow minutes on every
    system alike, so ratios stay fair (docs/benchmark.md has the drift measured).
    """
    warmups = []
    for c in contenders:
        start = time.perf_counter()
        c.run(c.warmup)
        warmups.append(time.perf_counter() - start)
    durations: list[list[float]] = [[] for _ in contenders]
    for _ in range(repeats):
        for c, seconds in zip(contenders, durations, strict=True):
            start = time.perf_counter()
            c.run(c.steps)
            seconds.append(time.perf_counter() - start)
    return [Timing(c.steps, d, w) for c, d, w in zip(contenders, durations, warmups, strict=True)]


@dataclass(frozen=True)
class Prepared:
    """A system built at one size, and the generator steps of its warm-up and of each repeat
    (whole calls of ``steps_per_call``, at least one)."""

    name: str
    system: System
    size: Size
    steps: int
    warmup: int

    @classmethod
    def whole_calls(
        cls, name: str, system: System, size: Size, steps: int, warmup: int
    ) -> Prepared:
        k = max(1, system.steps_per_call)
        return cls(name, system, size, max(k, steps // k * k), max(k, warmup // k * k))


class Harness:
    """Runs the plan's systems at its sizes and collects the records."""

    def __init__(self, plan: Plan, rows: Rows | None) -> None:
        self.plan = plan
        self.rows = rows
        self.records: list[Record] = []
        self.naive_shapes: dict[Size, Counter] = {}  # the matmuls the probe runs, per size

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
        if name == "matmul":
            from scripts.bench.matmul_probe import ProbeStep

            if size not in self.naive_shapes:
                self.build("naive", size, 1)  # traces the step for its shapes; trains nothing
            return ProbeStep(self.naive_shapes[size])
        if name == "naive":
            from scripts.bench.naive_loop import NaiveLoop

            loop = NaiveLoop(size, self.rows)
            self.naive_shapes[size] = loop.flop_count().shapes
            return loop
        from scripts.bench.wgangp_systems import build

        return build(name, size, self.rows, k)

    def prepare(self, name: str, size: Size, steps: int, warmup: int, k: int) -> Prepared | None:
        """System ``name`` built to time; None, and a skipped or failed record, if it cannot be."""
        try:
            return Prepared.whole_calls(name, self.build(name, size, k), size, steps, warmup)
        except NotImplementedError as err:
            status, note = "skipped", str(err)
        except Exception as err:  # noqa: BLE001 - one broken system must not stop the run
            status, note = "failed", f"{type(err).__name__}: {err}"[:300]
        self.add(Record.unmeasured(name, "not built", size.name, status, note))
        return None

    def time_round_robin(self, prepared: list[Prepared], repeats: int) -> list[Record]:
        """Time the prepared systems round-robin; their records, not yet added."""
        timings = time_interleaved(
            [Contender(p.system.run, p.steps, p.warmup) for p in prepared], repeats
        )
        return [
            Record.measured(
                timing,
                p.size,
                system=p.name,
                variant=p.system.variant,
                flops_per_gen_step=p.system.flops_per_gen_step(),
                settings={
                    **environment(),
                    "quick": self.plan.quick,
                    "steps_per_call": p.system.steps_per_call,
                    **p.system.settings,
                },
                notes=list(p.system.notes),
            )
            for p, timing in zip(prepared, timings, strict=True)
        ]

    def run_size(self, size: Size) -> None:
        """The naive loop, the trainer's variants and the matmul probe at one size."""
        plan = self.plan
        chosen = [name for name in IN_PROCESS_SYSTEMS if name in plan.systems]
        prepared = [self.prepare(name, size, plan.steps, plan.warmup, plan.k) for name in chosen]
        ready = [p for p in prepared if p is not None]
        if ready:
            for record in self.time_round_robin(ready, plan.repeats):
                self.add(record)

    def run_batch_sweep(self, names: list[str]) -> None:
        """ms per generator step at the default widths across batch sizes, for ``names`` (the
        naive loop and/or one trainer variant), timed round-robin at each batch size.

        A repeat holds about the same time at every batch size; a ``_k`` variant runs the plan's
        K steps a call, capped at the repeat's steps (a call of K steps at the largest batches
        would be longer than a whole repeat).
        """
        note = "extras: default widths at another batch size, timed round-robin with " + (
            ", ".join(names)
        )
        for batch in SWEEP_BATCHES:
            size = replace(SIZES["default"], batch=batch)
            budget = max(10, int(40 * 512 / batch))
            k = min(self.plan.k, budget)
            prepared = [self.prepare(name, size, budget, 3, k) for name in names]
            ready = [p for p in prepared if p is not None]
            for record in self.time_round_robin(ready, 3):
                record.variant, record.notes = f"batch sweep b={batch}", [note]
                record.extra = {"ms_per_gen_step": round(1000 / record.gen_steps_per_s, 3)}
                self.add(record)

    def peak_rss_record(self, name: str, options: list[str]) -> Record:
        """Peak memory of ``name`` in a fresh process (so nothing else this run loaded counts);
        its last JSON line is the record, a failed record if it printed none."""
        module = "naive_loop" if name == "naive" else "wgangp_systems"
        command = [sys.executable, "-m", f"scripts.bench.{module}", "--rss-rows", str(RSS_ROWS)]
        command += options
        log(f"  running {' '.join(command[1:])}")
        done = subprocess.run(command, capture_output=True, text=True, cwd=str(REPO), timeout=1800)
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        if lines:
            return Record.from_dict(json.loads(lines[-1]))
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
            self.add(self.peak_rss_record("naive", ["--steps", "20"]))
        if chosen:
            self.add(self.peak_rss_record(chosen[0], ["--system", chosen[0], "--steps", "100"]))

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
