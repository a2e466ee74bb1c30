"""What every benchmarked system shares: the two sizes, the real rows, timing and the record.

This module imports only numpy, the standard library (pandas lazily) and the stdlib-only
``wgangp.training.precision`` because the peers import it too, from their own virtual
environments where neither TensorFlow 2.21 nor an installed ``wgangp`` exists (both run from the
repository root, so the source tree is importable).
"""

from __future__ import annotations

import importlib.metadata
import json
import math
import os
import platform
import resource
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

REPO = Path(__file__).resolve().parents[2]
DEFAULT_REAL_SAMPLE = REPO.parent / "shared" / "data" / "creditcard_real_sample.csv.gz"
REAL_SAMPLE_ENV = "WGANGP_REAL_SAMPLE"
N_FEATURES = 30
N_CLASSES = 2


@dataclass(frozen=True)
class Size:
    """Network and batch shape of one benchmark size."""

    name: str
    gen_widths: tuple[int, ...]
    critic_widths: tuple[int, ...]
    latent: int
    batch: int
    n_critic: int

    def settings(self) -> dict[str, Any]:
        return {
            "batch": self.batch,
            "gen_widths": list(self.gen_widths),
            "critic_widths": list(self.critic_widths),
            "latent": self.latent,
            "n_critic": self.n_critic,
        }


SIZES: dict[str, Size] = {
    "default": Size("default", (256, 256), (256, 256), latent=128, batch=512, n_critic=5),
    "small": Size("small", (64, 64), (64, 32), latent=32, batch=256, n_critic=5),
}


@dataclass
class Rows:
    """Feature matrix (standardized float32), integer labels, and where they came from."""

    features: np.ndarray
    labels: np.ndarray
    source: str
    simulated: bool

    @property
    def note(self) -> str:
        if self.simulated:
            return f"SIMULATED DATA ({self.source}): real sample not found"
        return f"real rows: {len(self.labels)} ({int(self.labels.sum())} frauds) from {self.source}"


def real_sample_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """``--data``, else ``$WGANGP_REAL_SAMPLE``, else the shared sample beside the repo."""
    if explicit:
        return Path(explicit)
    env = os.environ.get(REAL_SAMPLE_ENV)
    return Path(env) if env else DEFAULT_REAL_SAMPLE


def read_frame(path: Path) -> pd.DataFrame:
    """The raw table (31 columns, Kaggle order) as a DataFrame; pandas is imported lazily."""
    import pandas as pd

    frame = pd.read_csv(path)
    frame.columns = [str(c).strip('"') for c in frame.columns]
    frame["Class"] = frame["Class"].astype(str).str.strip('"').astype(int)
    return frame


def simulated_rows(n_rows: int, seed: int = 0, fraud_rate: float = 0.01) -> Rows:
    """Gaussian stand-in rows with the real table's shape (used only when the sample is absent)."""
    rng = np.random.default_rng(seed)
    labels = (rng.random(n_rows) < fraud_rate).astype(np.int64)
    labels[:2] = (0, 1)
    features = rng.standard_normal((n_rows, N_FEATURES), dtype=np.float32)
    features += labels[:, None].astype(np.float32)
    return Rows(features, labels, f"numpy normal, {n_rows} rows", simulated=True)


def load_rows(explicit: str | os.PathLike[str] | None = None, allow_simulated: bool = True) -> Rows:
    """The real rows, standardized per column; simulated (flagged) rows only if no file."""
    path = real_sample_path(explicit)
    if not path.is_file():
        if explicit or not allow_simulated:
            raise FileNotFoundError(f"real sample not found at {path}")
        return simulated_rows(30_172)
    frame = read_frame(path)
    labels = frame["Class"].to_numpy(np.int64)
    features = frame.drop(columns=["Class"]).to_numpy(np.float64)
    std = features.std(axis=0)
    std[std == 0] = 1.0
    features = ((features - features.mean(axis=0)) / std).astype(np.float32)
    return Rows(features, labels, str(path), simulated=False)


class BalancedSampler:
    """Host-side sampling of class-balanced batches (the naive loop's and Keras example's way)."""

    def __init__(self, rows: Rows, seed: int = 0) -> None:
        self.features = rows.features
        self.by_class = [np.flatnonzero(rows.labels == c) for c in range(N_CLASSES)]
        self.rng = np.random.default_rng(seed)

    def labels(self, n: int) -> np.ndarray:
        return self.rng.integers(0, N_CLASSES, size=n)

    def batch(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """``n`` rows with labels drawn uniformly over the classes, and their one-hot labels."""
        labels = self.labels(n)
        index = np.empty(n, dtype=np.int64)
        for c, members in enumerate(self.by_class):
            where = labels == c
            index[where] = members[self.rng.integers(0, len(members), size=int(where.sum()))]
        return self.features[index], onehot(labels)


def onehot(labels: np.ndarray) -> np.ndarray:
    return np.eye(N_CLASSES, dtype=np.float32)[labels]


@dataclass
class Timing:
    """Seconds per repeat of ``steps`` generator steps, after warm-up."""

    steps: int
    repeats: list[float]
    warmup_s: float

    @property
    def median_s(self) -> float:
        return statistics.median(self.repeats)

    @property
    def steps_per_s(self) -> float:
        return self.steps / self.median_s

    @property
    def spread(self) -> float:
        """(max - min) / median of the repeats, the run-to-run noise."""
        return (max(self.repeats) - min(self.repeats)) / self.median_s


@dataclass
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


def time_steps(run: Callable[[int], object], steps: int, repeats: int, warmup: int) -> Timing:
    """Call ``run(n)`` (which must finish ``n`` generator steps) once to warm up, then time it."""
    return time_interleaved([Contender(run, steps, warmup)], repeats)[0]


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


def log(message: str) -> None:
    """Progress on stderr, so that stdout carries only the table (or a peer's JSON records)."""
    print(message, file=sys.stderr, flush=True)


def load_average() -> float:
    """1-minute load average: above the core count, other processes shared the CPU."""
    return round(os.getloadavg()[0], 2)


def versions(*modules: str, import_missing: bool = True) -> dict[str, object]:
    """The CPU, and the versions of the named modules that are importable in this interpreter."""
    from wgangp.training.precision import cpu_info

    found: dict[str, object] = {
        "python": platform.python_version(),
        "load_avg_1m": load_average(),
        **cpu_info().tags(),  # whether bf16 matrix units were there to use
    }
    for name in modules:
        module = sys.modules.get(name)
        if module is None and not import_missing:
            continue
        if module is None:
            try:
                module = __import__(name)
            except Exception:  # noqa: BLE001 - a missing module is simply not reported
                continue
        version = getattr(module, "__version__", None)
        if version is None:
            try:
                version = importlib.metadata.version(name.replace("_", "-"))
            except importlib.metadata.PackageNotFoundError:
                version = "?"
        found[name] = str(version)
    return found


@dataclass
class Record:
    """One row of the benchmark: a system at a size, its figures and its settings."""

    system: str
    variant: str
    size: str
    critic_samples_per_s: float | None = None
    gen_steps_per_s: float | None = None
    gflops_per_s: float | None = None
    flops_per_gen_step: float | None = None
    notes: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    status: str = "ok"  # ok | skipped | failed
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for key in (
            "critic_samples_per_s",
            "gen_steps_per_s",
            "gflops_per_s",
            "flops_per_gen_step",
        ):
            value = data[key]
            if value is not None and not math.isfinite(value):
                data[key] = None
                data["notes"].append(f"{key} was not finite")
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Record:
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**known)


def timing_record(
    system: str,
    variant: str,
    size: str,
    timing: Timing,
    batch: int,
    n_critic: int,
    flops_per_gen_step: float | None,
    settings: dict[str, Any],
    notes: list[str],
) -> Record:
    """A record from a timing: critic samples/s = batch x n_critic x generator steps/s."""
    steps_per_s = timing.steps_per_s
    gflops = flops_per_gen_step * steps_per_s / 1e9 if flops_per_gen_step else None
    settings = {
        **settings,
        "batch": batch,
        "n_critic": n_critic,
        "steps_measured": timing.steps,
        "repeats": len(timing.repeats),
        "repeat_seconds": [round(s, 4) for s in timing.repeats],
        "warmup_s": round(timing.warmup_s, 3),
        "spread": round(timing.spread, 3),
    }
    return Record(
        system=system,
        variant=variant,
        size=size,
        critic_samples_per_s=batch * n_critic * steps_per_s,
        gen_steps_per_s=steps_per_s,
        gflops_per_s=gflops,
        flops_per_gen_step=flops_per_gen_step,
        notes=notes,
        settings=settings,
    )


def emit_json(record: Record | list[Record]) -> None:
    """Print the record(s) as the last stdout line (what the harness reads from a peer)."""
    payload = [r.to_dict() for r in record] if isinstance(record, list) else record.to_dict()
    sys.stdout.write(json.dumps(payload) + "\n")
    sys.stdout.flush()
