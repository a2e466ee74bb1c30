"""Peak memory of a system training from many rows, measured in a fresh process.

``--extras`` runs ``python -m scripts.bench.peak_rss --system NAME --rss-rows N`` so that nothing
else the run loaded counts; the RSS read after every call shows whether a loop copies its data
per step or holds it once. Prints one JSON record.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

from scripts.bench.harness import Harness, Plan, environment
from scripts.bench.peers.record import SIZES, Record, Size, emit_json
from scripts.bench.peers.rows import simulated_rows
from scripts.bench.wgangp_systems import SYSTEMS as WGANGP_SYSTEMS


def current_rss_mb() -> float:
    """Resident set size now (VmRSS): what the framework holds before the data, and whether
    memory stays flat while training; NaN where /proc is not readable."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


def measure(name: str, n_rows: int, size: Size, steps: int) -> Record:
    """Train ``name`` (the trainer's ``_k`` variants at their full K) on ``n_rows`` simulated rows:
    one warm-up call, then calls until ``steps`` generator steps, the RSS read after each."""
    before_data = current_rss_mb()
    rows = simulated_rows(n_rows)
    plan = Plan()
    system = Harness(plan, rows).build(name, size, plan.k)
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
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux
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
            "peak_rss_mb": round(peak_mb, 1),
            "rss_before_data_mb": round(before_data, 1),
            "rss_after_warmup_mb": round(after_warmup, 1),
            "rss_after_steps_mb": samples[-1],
            "rss_growth_mb": round(samples[-1] - after_warmup, 1),
            "rss_samples_mb": samples,
        },
    )


def main(argv: list[str] | None = None) -> int:
    """Hold ``--rss-rows`` simulated rows, train ``--system`` on them, print the record."""
    parser = argparse.ArgumentParser(
        prog="python -m scripts.bench.peak_rss", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--system", choices=["naive", *WGANGP_SYSTEMS], default="wgangp_k_xla")
    parser.add_argument("--rss-rows", type=int, default=1_000_000, help="rows to train from")
    parser.add_argument("--steps", type=int, default=100, help="generator steps after warm-up")
    parser.add_argument("--size", choices=sorted(SIZES), default="default")
    args = parser.parse_args(argv)
    emit_json(measure(args.system, args.rss_rows, SIZES[args.size], args.steps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
