"""The machine a figure was measured on: its CPU, its load, the libraries, the memory in use."""

from __future__ import annotations

import resource
from pathlib import Path

from scripts.bench.peers.record import versions


def cpu_tags() -> dict[str, str]:
    """The CPU model and whether bf16 matrix units were there to use."""
    from wgangp.training.precision import cpu_info

    return cpu_info().tags()


def environment(import_missing: bool = True) -> dict[str, object]:
    """Python, the load, the CPU and the main environment's TensorFlow, Keras and numpy."""
    found = versions("tensorflow", "keras", "numpy", import_missing=import_missing)
    return {**found, **cpu_tags()}


def peak_rss_mb() -> float:
    """Peak resident set size of this process (ru_maxrss is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


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
