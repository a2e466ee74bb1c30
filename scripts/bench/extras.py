"""``--extras``: step time over batch sizes, and peak memory when training from 1M rows.

Both run for the naive loop and the trainer's fastest mode asked for. The batch sweep shows how
each loop's cost per step scales with the batch (fixed costs per step weigh most at small
batches, the matmuls at large ones); the memory runs show whether a loop copies its data per
step or holds it once.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from typing import TYPE_CHECKING

from scripts.bench.common import (
    REPO,
    SIZES,
    Contender,
    Record,
    Size,
    Timing,
    log,
    time_interleaved,
    timing_record,
)

if TYPE_CHECKING:
    from scripts.bench.harness import Harness, Prepared

SWEEP_BATCHES = (64, 128, 256, 512, 1024, 2048, 4096)
RSS_ROWS = 1_000_000
#: The trainer's extras use the first of these asked for.
EXTRAS_PREFERENCE = ("wgangp_k_xla", "wgangp_k", "wgangp", "wgangp_xla")


def run_extras(harness: Harness, systems: list[str]) -> None:
    """The batch sweep and peak memory, for the naive loop and/or the trainer's chosen mode."""
    chosen = [s for s in EXTRAS_PREFERENCE if s in systems][:1]
    swept = [s for s in systems if s == "naive"] + chosen
    if swept:
        run_batch_sweep(harness, swept)
    if "naive" in systems:
        harness.add(peak_rss_record("naive", ["--steps", "20"]))
    if chosen:
        harness.add(peak_rss_record(chosen[0], ["--system", chosen[0], "--steps", "100"]))


def run_batch_sweep(harness: Harness, systems: list[str]) -> None:
    """ms per generator step at the default widths across batch sizes, for ``systems`` (the
    naive loop and/or one trainer variant); at each batch size they are timed round-robin
    (:func:`time_interleaved`), so the VM's drift hits them alike."""
    for batch in SWEEP_BATCHES:
        size = replace(SIZES["default"], batch=batch)
        note = "extras: default widths at another batch size, timed round-robin with " + (
            ", ".join(systems)
        )
        prepared = [
            sweep_contender(harness, name, size, f"batch sweep b={batch}", note) for name in systems
        ]
        timings = time_interleaved([c for c, _ in prepared], 3)
        for (_, record), timing in zip(prepared, timings, strict=True):
            harness.add(record(timing))


def sweep_contender(harness: Harness, name: str, size: Size, variant: str, note: str) -> Prepared:
    """System ``name`` (the naive loop or a trainer variant) at one batch size of the sweep,
    and how its timing becomes a record (``ms_per_gen_step`` in its extra).

    A ``_k`` variant runs the plan's K steps a call, capped at the repeat's step budget: a
    repeat takes about the same time at every batch size, and a call of K steps at the largest
    batches would be longer than a whole repeat.
    """
    from scripts.bench.naive_loop import NaiveLoop
    from scripts.bench.wgangp_systems import build

    budget = max(10, int(40 * 512 / size.batch))  # about the same time per repeat
    if name == "naive":
        system, k, flops = NaiveLoop(size, harness.rows), 1, None
    else:
        system = build(name, size, harness.rows, min(harness.plan.k, budget))
        k, flops = system.steps_per_call, system.flops_per_gen_step()
    steps = max(k, (budget // k) * k)

    def record(timing: Timing) -> Record:
        made = timing_record(
            name,
            variant,
            "default",
            timing,
            size.batch,
            size.n_critic,
            flops,
            {
                **size.settings(),
                **harness.common_settings(),
                **dict(getattr(system, "settings", {})),
            },
            [note],
        )
        made.extra = {"ms_per_gen_step": round(1000 * timing.median_s / steps, 3)}
        return made

    return Contender(system.run, steps, max(3, k)), record


def peak_rss_command(system: str, options: list[str]) -> list[str]:
    """The fresh process that trains ``system`` from :data:`RSS_ROWS` simulated rows."""
    module = "scripts.bench.naive_loop" if system == "naive" else "scripts.bench.wgangp_systems"
    return [sys.executable, "-m", module, "--rss-rows", str(RSS_ROWS), *options]


def peak_rss_record(system: str, options: list[str]) -> Record:
    """Peak memory of ``system`` in a fresh process (so nothing else this run loaded counts);
    its last JSON line is the record, a failed record if it printed none."""
    command = peak_rss_command(system, options)
    log(f"  running {' '.join(command[1:])}")
    done = subprocess.run(command, capture_output=True, text=True, cwd=str(REPO), timeout=1800)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        return Record(
            system,
            f"peak-rss {RSS_ROWS:,} rows",
            "default",
            status="failed",
            notes=[f"exit {done.returncode}: {done.stderr.strip()[-300:]}"],
        )
    return Record.from_dict(json.loads(lines[-1]))
