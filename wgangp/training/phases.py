"""Where a run's time and memory go, phase by phase: read, train, select, assemble, export,
evaluate.

Each phase records its wall and CPU seconds (its worker processes' included) and the process's
peak resident memory when it ended (the peak so far: the phase that raised it is the one where it
grew). The run logs one line, logs the figures as ``phase/<name>_s``, ``phase/<name>_cpu_s`` and
``phase/<name>_peak_rss_mb``, and writes ``phases.json`` beside its other outputs, which
``python -m scripts.main_timing`` and ``python -m scripts.bench.scale`` read.
"""

from __future__ import annotations

import json
import resource
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PHASES_FILE = "phases.json"


def cpu_seconds() -> float:
    """CPU seconds of this process and of the child processes it has waited for (the
    evaluation's workers, joined when it ends)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def peak_rss_mb() -> float:
    """The process's peak resident set size so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


class PhaseClock:
    """Wall and CPU seconds and the peak memory at the end of each named phase, in order."""

    def __init__(self) -> None:
        self.phases: dict[str, dict[str, float]] = {}

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        wall, cpu = time.perf_counter(), cpu_seconds()
        try:
            yield
        finally:
            self.phases[name] = {
                "wall_s": round(time.perf_counter() - wall, 3),
                "cpu_s": round(cpu_seconds() - cpu, 3),
                "peak_rss_mb": round(peak_rss_mb(), 1),
            }

    def describe(self) -> str:
        """``read 4.1 s (CPU 3.9 s), train 61.0 s (...); peak RSS 1712 MiB, reached in train``."""
        if not self.phases:
            return "no phase timed"
        parts = ", ".join(
            f"{name} {p['wall_s']:.1f} s (CPU {p['cpu_s']:.1f} s)"
            for name, p in self.phases.items()
        )
        peak = max(p["peak_rss_mb"] for p in self.phases.values())
        where = next(n for n, p in self.phases.items() if p["peak_rss_mb"] == peak)
        return f"{parts}; peak RSS {peak:.0f} MiB, reached in {where}"

    def metrics(self) -> dict[str, float]:
        found: dict[str, float] = {}
        for name, p in self.phases.items():
            found[f"phase/{name}_s"] = p["wall_s"]
            found[f"phase/{name}_cpu_s"] = p["cpu_s"]
            found[f"phase/{name}_peak_rss_mb"] = p["peak_rss_mb"]
        return found

    def to_json(self) -> str:
        return json.dumps(self.phases, indent=1)

    @staticmethod
    def read(path: Path) -> dict[str, dict[str, float]]:
        return json.loads(Path(path).read_text())
