"""Peak memory when a system trains from many rows, measured in a fresh process.

``python -m scripts.bench.naive_loop --rss-rows N`` and ``python -m scripts.bench.wgangp_systems
--rss-rows N`` run :func:`main`: nothing else a benchmark run loaded counts, and the RSS sampled
after every call shows whether a loop copies its data per step or holds it once.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any, Protocol

from scripts.bench.machine import current_rss_mb, environment, peak_rss_mb
from scripts.bench.peers.record import SIZES, Record, Size, emit_json
from scripts.bench.peers.rows import Rows, simulated_rows


class Trainable(Protocol):
    """What the measurement needs of a system (the naive loop or a trainer variant)."""

    steps_per_call: int
    settings: dict[str, Any]
    notes: list[str]

    def run(self, steps: int) -> object: ...


Builder = Callable[[Size, Rows], Trainable]


def measure(name: str, build: Builder, n_rows: int, size: Size, steps: int) -> Record:
    """Train the system ``build`` makes on ``n_rows`` simulated rows: one warm-up call, then
    calls until ``steps`` generator steps, the RSS read after each."""
    before_data = current_rss_mb()
    rows = simulated_rows(n_rows)
    system = build(size, rows)
    k = system.steps_per_call
    system.run(k)
    after_warmup = current_rss_mb()
    samples = []
    done = 0
    start = time.perf_counter()
    while done < steps:
        system.run(k)
        done += k
        samples.append(round(current_rss_mb(), 1))
    elapsed = time.perf_counter() - start
    return Record(
        system=name,
        variant=f"peak-rss {n_rows:,} rows",
        size=size.name,
        critic_samples_per_s=size.batch * size.n_critic * done / elapsed,
        gen_steps_per_s=done / elapsed,
        notes=[f"simulated rows: {rows.features.nbytes / 2**20:.0f} MiB float32 on the host"]
        + system.notes,
        settings={
            **size.settings(),
            **system.settings,
            "rows": n_rows,
            "steps_measured": done,
            "repeats": 1,
            **environment(),
        },
        extra={
            "peak_rss_mb": round(peak_rss_mb(), 1),
            "rss_before_data_mb": round(before_data, 1),
            "rss_after_warmup_mb": round(after_warmup, 1),
            "rss_after_steps_mb": samples[-1],
            "rss_growth_mb": round(samples[-1] - after_warmup, 1),
            "rss_samples_mb": samples,
        },
    )


def main(
    argv: list[str] | None,
    *,
    prog: str,
    builders: dict[str, Builder],
    steps: int,
    default: str | None = None,
) -> int:
    """Hold ``--rss-rows`` simulated rows, train system ``--system`` on them, print the record."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument(
        "--system", choices=sorted(builders), default=default or next(iter(builders))
    )
    parser.add_argument("--rss-rows", type=int, default=1_000_000, help="rows to train from")
    parser.add_argument("--steps", type=int, default=steps, help="generator steps after warm-up")
    parser.add_argument("--size", choices=sorted(SIZES), default="default")
    args = parser.parse_args(argv)
    record = measure(
        args.system, builders[args.system], args.rss_rows, SIZES[args.size], args.steps
    )
    emit_json(record)
    return 0
