"""The harness: times the chosen systems at the chosen sizes and collects their records.

The naive loop, the trainer's variants and the matmul probe run in this process, timed
round-robin at each size (``time_interleaved``) so that the VM's drift hits them alike; the
peers run in their own environments (``peers.launch``); ``--extras`` adds ``extras``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

from scripts.bench import extras
from scripts.bench.common import (
    SIZES,
    Contender,
    Record,
    Rows,
    Timing,
    log,
    time_interleaved,
    timing_record,
    versions,
)
from scripts.bench.peers.launch import PEERS, peer_sizes, run_peer
from scripts.bench.wgangp_systems import K_STEPS, SYSTEMS

if TYPE_CHECKING:
    from scripts.bench.flops import FlopCount
    from scripts.bench.naive_loop import NaiveLoop

WGANGP_SYSTEMS = tuple(SYSTEMS)
#: Timed in this process, round-robin at each size.
IN_PROCESS_SYSTEMS = ("naive", *WGANGP_SYSTEMS, "matmul")
ALL_SYSTEMS = ("naive", *WGANGP_SYSTEMS, *PEERS, "matmul")

#: A system to time and how its timing becomes a record.
Prepared = tuple[Contender, Callable[[Timing], Record]]


class Plan:
    """Steps, repeats and time budgets; ``--quick`` only keeps the harness exercised."""

    def __init__(self, quick: bool, steps: int | None, repeats: int | None) -> None:
        self.quick = quick
        self.steps = steps or (3 if quick else 40)
        self.repeats = repeats or (2 if quick else 5)
        self.warmup = 1 if quick else 5
        self.peer_timeout = 100 if quick else 1800
        # Generator steps per call of the ``_k`` variants; --quick keeps its few steps few.
        self.k = 2 if quick else K_STEPS


class Harness:
    """Runs the chosen systems at the chosen sizes and collects the records."""

    def __init__(self, args: argparse.Namespace, rows: Rows | None) -> None:
        self.args = args
        self.plan = Plan(args.quick, args.steps, args.repeats)
        self.rows = rows
        self.records: list[Record] = []
        self.naive_flops: dict[str, FlopCount] = {}  # size -> matmuls of the naive step

    def add(self, record: Record) -> None:
        """Keep ``record`` (flagged if it trained on simulated rows) and log its figure."""
        if self.rows and self.rows.simulated and record.system not in PEERS:
            record.notes.insert(0, self.rows.note)
        self.records.append(record)
        figure = record.critic_samples_per_s
        shown = f"{figure:,.0f} critic samples/s" if figure else record.status
        log(f"  {record.system:<13} {record.variant:<26} {record.size:<8} {shown}")

    def common_settings(self) -> dict[str, object]:
        return {**versions("tensorflow", "keras", "numpy"), "quick": self.plan.quick}

    # -- the naive loop --------------------------------------------------------------------
    def naive_loop(self, size_name: str) -> NaiveLoop:
        """The naive loop at one size; its step's matmuls go to ``naive_flops``."""
        from scripts.bench.flops import count_flops
        from scripts.bench.naive_loop import NaiveLoop

        loop = NaiveLoop(SIZES[size_name], self.rows)
        self.naive_flops[size_name] = count_flops(loop.concrete_step())
        return loop

    def naive_contender(self, size_name: str) -> Prepared:
        """The naive loop to time, and how its timing becomes a record."""
        size = SIZES[size_name]
        loop = self.naive_loop(size_name)
        plan = self.plan
        flops = self.naive_flops[size_name]

        def record(timing: Timing) -> Record:
            return timing_record(
                "naive",
                "keras-style loop",
                size_name,
                timing,
                size.batch,
                size.n_critic,
                float(flops.flops),
                {**size.settings(), **self.common_settings(), "matmuls_per_step": flops.matmuls},
                ["baseline: one tf.function per generator step, host numpy batches"],
            )

        return Contender(loop.run, plan.steps, plan.warmup), record

    # -- the project's trainer ------------------------------------------------------------
    def wgangp_contender(self, name: str, size_name: str) -> Prepared | None:
        """The trainer variant to time and its record maker; None (recorded) if it cannot run."""
        import scripts.bench.wgangp_systems as registry

        size = SIZES[size_name]
        try:
            system = registry.build(name, size, self.rows, self.plan.k)
        except NotImplementedError as err:
            self.add(
                Record(
                    name,
                    "trainer",
                    size_name,
                    status="skipped",
                    notes=[str(err)],
                    settings=size.settings(),
                )
            )
            return None
        except Exception as err:  # noqa: BLE001 - one broken system must not stop the run
            self.add(
                Record(
                    name,
                    "trainer",
                    size_name,
                    status="failed",
                    notes=[f"{type(err).__name__}: {err}"[:300]],
                    settings=size.settings(),
                )
            )
            return None
        k = max(1, int(getattr(system, "steps_per_call", 1)))
        steps = max(k, (self.plan.steps // k) * k)
        warmup = max(k, (self.plan.warmup // k) * k)

        def record(timing: Timing) -> Record:
            return timing_record(
                name,
                getattr(system, "variant", "trainer"),
                size_name,
                timing,
                size.batch,
                size.n_critic,
                system.flops_per_gen_step(),
                {
                    **size.settings(),
                    **self.common_settings(),
                    "steps_per_call": k,
                    **dict(getattr(system, "settings", {})),
                },
                list(getattr(system, "notes", [])),
            )

        return Contender(system.run, steps, warmup), record

    # -- the matmul probe ------------------------------------------------------------------
    def probe_contender(self, size_name: str) -> Prepared:
        """The naive step's matmuls alone (``scripts.bench.matmul_probe.ProbeStep``) at one
        size, to time round-robin with the steps it bounds, and how its timing becomes a record."""
        from scripts.bench.matmul_probe import ProbeStep

        size = SIZES[size_name]
        if size_name not in self.naive_flops:
            self.naive_loop(size_name)  # traces the step for its shapes; nothing is trained
        probe = ProbeStep(self.naive_flops[size_name].shapes)
        k = probe.steps_per_call
        steps = max(k, -(-self.plan.steps // k) * k)  # a multiple of k, at least plan.steps

        def record(timing: Timing) -> Record:
            return timing_record(
                "matmul",
                f"probe ({probe.shapes} shapes)",
                size_name,
                timing,
                size.batch,
                size.n_critic,
                float(probe.flops_per_step),
                {**size.settings(), **self.common_settings(), "shapes": probe.shapes},
                [
                    "matmul-only step: every matmul shape of the naive step (fwd, bwd, GP "
                    "double-bwd) as often as the step runs it, each in a tight tf.range loop, "
                    "timed round-robin with the steps it bounds; its steps/s are a step's if "
                    "nothing but matmuls cost time (the real step can overlap two small "
                    "matmuls on 2 cores, so this is not a strict bound)"
                ],
            )

        return Contender(probe.run, steps, k), record

    # -- driver ----------------------------------------------------------------------------
    def run_in_process(self, size_name: str, systems: list[str]) -> None:
        """Time the naive loop, the trainer's variants and the matmul probe at one size,
        repeats interleaved."""
        prepared = []
        if "naive" in systems:
            prepared.append(self.naive_contender(size_name))
        for name in WGANGP_SYSTEMS:
            if name in systems and (found := self.wgangp_contender(name, size_name)):
                prepared.append(found)
        if "matmul" in systems:
            prepared.append(self.probe_contender(size_name))
        if not prepared:
            return
        timings = time_interleaved([c for c, _ in prepared], self.plan.repeats)
        for (_, record), timing in zip(prepared, timings, strict=True):
            self.add(record(timing))

    def run(self) -> list[Record]:
        """Every size in this process, then the peers, then (full mode) the extras."""
        systems = self.args.systems
        in_process = [s for s in systems if s in IN_PROCESS_SYSTEMS]
        for size_name in self.args.sizes if in_process else []:
            log(f"size {size_name}:")
            self.run_in_process(size_name, systems)
        peers = [p for p in PEERS if p in systems]
        if peers:
            log("peers:")
            sizes = peer_sizes(self.plan.quick, self.args.sizes)
            for name in peers:
                for record in run_peer(name, sizes, self.args.data, self.plan):
                    self.add(record)
        if self.args.extras and not self.plan.quick:
            log("extras:")
            extras.run_extras(self, systems)
        return self.records
