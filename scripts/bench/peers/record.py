"""The benchmark's record and what every measurement shares: sizes, timing, versions, a peer's
entry point. The standard library only: the peers import it in their own environments (an older
TensorFlow, PyTorch, no ``wgangp``) and the harness reads their records back with it.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, NoReturn


@dataclass(frozen=True)
class Size:
    """Network and batch shape of one benchmark size (or of a peer's own settings)."""

    name: str
    gen_widths: tuple[int, ...]
    critic_widths: tuple[int, ...]
    latent: int
    batch: int
    n_critic: int

    def settings(self) -> dict[str, Any]:
        widths = {"gen_widths": list(self.gen_widths), "critic_widths": list(self.critic_widths)}
        return {"batch": self.batch, **widths, "latent": self.latent, "n_critic": self.n_critic}


SIZES: dict[str, Size] = {
    "default": Size("default", (256, 256), (256, 256), latent=128, batch=512, n_critic=5),
    "small": Size("small", (64, 64), (64, 32), latent=32, batch=256, n_critic=5),
}


@dataclass(frozen=True)
class Timing:
    """Seconds per repeat of ``steps`` generator steps, after warm-up."""

    steps: int
    repeats: list[float]
    warmup_s: float

    @property
    def steps_per_s(self) -> float:
        return self.steps / statistics.median(self.repeats)

    @property
    def spread(self) -> float:
        """(max - min) / median of the repeats, the run-to-run noise."""
        return (max(self.repeats) - min(self.repeats)) / statistics.median(self.repeats)


@dataclass(frozen=True)
class Contender:
    """One system of a timing: ``run(n)`` must finish ``n`` generator steps."""

    run: Callable[[int], object]
    steps: int
    warmup: int


def time_interleaved(contenders: list[Contender], repeats: int) -> list[Timing]:
    """Warm every system up, then time repeat r of each before repeat r+1 of any: this VM's
    speed drifts over minutes, and round-robin repeats put the slow minutes on every system
    alike, so ratios stay fair (docs/benchmark.md has the drift measured)."""
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


FIGURES = ("critic_samples_per_s", "gen_steps_per_s", "gflops_per_s", "flops_per_gen_step")


@dataclass(kw_only=True)
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

    @classmethod
    def measured(
        cls,
        timing: Timing,
        size: Size,
        *,
        system: str,
        variant: str,
        flops_per_gen_step: float | None = None,
        settings: dict[str, Any] | None = None,
        notes: list[str] | None = None,
    ) -> Record:
        """A timed record: critic samples/s = batch x n_critic x generator steps/s."""
        steps_per_s = timing.steps_per_s
        return cls(
            system=system,
            variant=variant,
            size=size.name,
            critic_samples_per_s=size.batch * size.n_critic * steps_per_s,
            gen_steps_per_s=steps_per_s,
            gflops_per_s=flops_per_gen_step * steps_per_s / 1e9 if flops_per_gen_step else None,
            flops_per_gen_step=flops_per_gen_step,
            notes=list(notes or []),
            settings={
                **size.settings(),
                **(settings or {}),
                "steps_measured": timing.steps,
                "repeats": len(timing.repeats),
                "repeat_seconds": [round(s, 4) for s in timing.repeats],
                "warmup_s": round(timing.warmup_s, 3),
                "spread": round(timing.spread, 3),
            },
        )

    @classmethod
    def unmeasured(cls, system: str, variant: str, size: str, status: str, note: str) -> Record:
        """A ``skipped`` or ``failed`` record: no figures, the reason as its note."""
        return cls(system=system, variant=variant, size=size, status=status, notes=[note])

    @classmethod
    def failed(cls, system: str, variant: str, size: str, error: BaseException) -> Record:
        """The record of a system that raised ``error`` instead of a figure."""
        note = f"{type(error).__name__}: {error}"[:500]
        return cls.unmeasured(system, variant, size, "failed", note)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for key in FIGURES:
            value = data[key]
            if value is not None and not math.isfinite(value):
                data[key] = None
                data["notes"].append(f"{key} was not finite")
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Record:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


def json_records(text: str) -> list[Record]:
    """The records printed as JSON lines in ``text`` (anything else a process printed is not)."""
    return [Record.from_dict(json.loads(line)) for line in text.splitlines() if line[:1] == "{"]


def emit_json(record: Record) -> None:
    """Print the record as one stdout line (what the harness reads back from a fresh process)."""
    sys.stdout.write(json.dumps(record.to_dict()) + "\n")
    sys.stdout.flush()


def load_average() -> float:
    """1-minute load average: above the core count, other processes shared the CPU."""
    return round(os.getloadavg()[0], 2)


def versions(*modules: str, import_missing: bool = True) -> dict[str, object]:
    """Python, the load, and the versions of the named modules importable in this interpreter."""
    found: dict[str, object] = {"python": platform.python_version(), "load_avg_1m": load_average()}
    for name in modules:
        try:
            module = sys.modules.get(name) or (__import__(name) if import_missing else None)
        except Exception:  # noqa: BLE001 - a missing module is simply not reported
            continue
        if module is not None:
            version = getattr(module, "__version__", None)
            try:
                version = version or importlib.metadata.version(name.replace("_", "-"))
            except importlib.metadata.PackageNotFoundError:
                version = "?"
            found[name] = str(version)
    return found


def log(message: str) -> None:
    """Progress on stderr, so that stdout carries only the table (or a peer's JSON records)."""
    print(message, file=sys.stderr, flush=True)


def peer_parser(prog: str, description: str) -> argparse.ArgumentParser:
    """A peer's options as the harness passes them: ``--json --size a,b --data PATH``."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--json", action="store_true", help="print JSON records (the default)")
    parser.add_argument(
        "--size", default="native", help="comma-separated: native, default, small (a record each)"
    )
    parser.add_argument("--data", default=None)
    return parser


def peer_main(
    system: str,
    variant: str,
    parser: argparse.ArgumentParser,
    prepare: Callable[[argparse.Namespace], Callable[[str], Record]],
) -> NoReturn:
    """A peer's entry point: ``prepare`` (loads the rows, patches the library) returns what
    measures one size; one JSON record per ``--size``, failed where it raised, and a failed
    record instead of a traceback if ``prepare`` did (the harness needs a record). Exit 1 if
    any failed."""
    args = parser.parse_args()
    sizes = [s for s in args.size.split(",") if s]
    unknown = [s for s in sizes if s not in ("native", *SIZES)]
    if unknown:
        parser.error(f"unknown size(s) {unknown}")
    try:
        measure = prepare(args)
    except Exception as err:  # noqa: BLE001 - the harness needs a record, not a traceback
        emit_json(Record.failed(system, variant, "?", err))
        sys.exit(1)
    status = 0
    for size in sizes:
        try:
            record = measure(size)
        except Exception as err:  # noqa: BLE001 - the harness needs a record, not a traceback
            record, status = Record.failed(system, variant, size, err), 1
        emit_json(record)
    sys.exit(status)
