"""Training-throughput benchmark: the naive Keras-style loop, the project's trainer, the peers.

    .venv/bin/python -m scripts.benchmark --out benchmarks/out/bench.json            # full
    .venv/bin/python -m scripts.benchmark --quick --systems naive,matmul --out tmp/x.json  # CI
    .venv/bin/python -m scripts.benchmark --extras --systems naive,wgangp_k --sizes default

Figures are steady-state (after warm-up, median of repeats) critic samples/s (= batch x n_critic
x generator steps/s) and generator steps/s, on the real rows, at the sizes of bench/common.py.
Writes FILE.json (a list of records) and FILE.md (the table, ratios to the naive loop of the
same size). See docs/benchmark.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from scripts.bench.common import (
    SIZES,
    Contender,
    Record,
    Rows,
    Size,
    Timing,
    load_average,
    load_rows,
    real_sample_path,
    time_interleaved,
    timing_record,
    versions,
)
from scripts.bench.wgangp_systems import K_STEPS
from wgangp.errors import ConfigError, DataError, WgangpError

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
REPO = Path(__file__).resolve().parents[1]

WGANGP_SYSTEMS = ("wgangp", "wgangp_default", "wgangp_xla", "wgangp_k", "wgangp_k_xla")
PEERS = {
    "ydata": ("scripts.bench.peers.ydata_cwgangp", "ydata-synthetic 1.4.0 CWGAN-GP (TF 2.15)"),
    "ctgan": ("scripts.bench.peers.ctgan_bench", "CTGAN 0.12.1 (PyTorch CPU)"),
}
ALL_SYSTEMS = ("naive", *WGANGP_SYSTEMS, "ydata", "ctgan", "matmul")
ENVS = Path(os.environ.get("WGANGP_BENCH_ENVS", REPO / ".bench-envs"))  # as setup_envs.sh
SWEEP_BATCHES = (64, 128, 256, 512, 1024, 2048, 4096)
RSS_ROWS = 1_000_000
#: The trainer's extras (batch sweep, peak memory) use the first of these asked for.
EXTRAS_PREFERENCE = ("wgangp_k_xla", "wgangp_k", "wgangp", "wgangp_xla")


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


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--systems",
        default=",".join(ALL_SYSTEMS),
        help=f"comma-separated, from: {', '.join(ALL_SYSTEMS)}",
    )
    parser.add_argument("--sizes", default="default,small", help="comma-separated: default,small")
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "out" / "benchmark.json"))
    parser.add_argument(
        "--data",
        default=None,
        help="real rows CSV (default: $WGANGP_REAL_SAMPLE, then the shared sample)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="few steps, tiny repeats; peers only if their envs exist (CI)",
    )
    parser.add_argument(
        "--extras",
        action="store_true",
        help="also: time per step over batch 64..4096 and peak RSS on 1M rows, for the naive "
        "loop and the trainer's fastest mode asked for",
    )
    parser.add_argument(
        "--include",
        action="append",
        default=[],
        help="add records measured elsewhere (a JSON list, or JSON lines as a peer prints); "
        "with --systems '' only renders the table",
    )
    parser.add_argument("--steps", type=int, default=None, help="generator steps per repeat")
    parser.add_argument("--repeats", type=int, default=None)
    args = parser.parse_args(argv)
    args.systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    args.sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
    unknown = [s for s in args.systems if s not in ALL_SYSTEMS]
    if unknown:
        raise ConfigError(
            f"unknown system(s) {', '.join(unknown)}; choose from {', '.join(ALL_SYSTEMS)}"
        )
    bad_sizes = [s for s in args.sizes if s not in SIZES]
    if bad_sizes:
        raise ConfigError(f"unknown size(s) {', '.join(bad_sizes)}; choose from {', '.join(SIZES)}")
    missing = [p for p in args.include if not Path(p).is_file()]
    if missing:
        raise ConfigError(f"--include {missing[0]} does not exist; pass a benchmark JSON file")
    if args.data and not Path(args.data).is_file():
        raise DataError(f"--data {args.data} does not exist; pass the real rows CSV(.gz)")
    return args


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class Harness:
    """Runs the chosen systems at the chosen sizes and collects the records."""

    def __init__(self, args: argparse.Namespace, rows: Rows | None) -> None:
        self.args = args
        self.plan = Plan(args.quick, args.steps, args.repeats)
        self.rows = rows
        self.records: list[Record] = []
        self.naive_flops: dict[str, object] = {}  # size -> FlopCount of the naive step
        self.data_notes = [rows.note] if rows else []

    def add(self, record: Record) -> None:
        if self.rows and self.rows.simulated and record.system not in PEERS:
            record.notes.insert(0, self.rows.note)
        self.records.append(record)
        figure = record.critic_samples_per_s
        shown = f"{figure:,.0f} critic samples/s" if figure else record.status
        log(f"  {record.system:<13} {record.variant:<26} {record.size:<8} {shown}")

    def common_settings(self) -> dict[str, object]:
        return {**versions("tensorflow", "keras", "numpy"), "quick": self.plan.quick}

    # -- the naive loop --------------------------------------------------------------------
    def naive_loop(self, size_name: str):
        from scripts.bench.flops import count_flops
        from scripts.bench.naive_loop import NaiveLoop

        loop = NaiveLoop(SIZES[size_name], self.rows)
        self.naive_flops[size_name] = count_flops(loop.concrete_step())
        return loop

    def naive_contender(self, size_name: str) -> tuple[Contender, Callable[[Timing], Record]]:
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
    def wgangp_contender(
        self, name: str, size_name: str
    ) -> tuple[Contender, Callable[[Timing], Record]] | None:
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

    # -- the matmul probe ------------------------------------------------------------------
    def probe_contender(self, size_name: str) -> tuple[Contender, Callable[[Timing], Record]]:
        """The naive step's matmuls alone (``scripts.bench.matmul_probe.ProbeStep``) at one size, to
        time round-robin with the steps it bounds, and how its timing becomes a record."""
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

    # -- the peers -------------------------------------------------------------------------
    def run_peer(self, name: str, sizes: list[str]) -> None:
        """One subprocess in the peer's own env, one JSON record line per size."""
        module, title = PEERS[name]
        python = ENVS / name / "bin" / "python"
        if not (ENVS / name / ".ready").is_file() or not python.exists():
            for size_name in sizes:
                self.add(
                    Record(
                        name,
                        title,
                        size_name,
                        status="skipped",
                        notes=[
                            f"env {ENVS / name} missing: create it with "
                            f"`bash scripts/bench/peers/setup_envs.sh {name}`"
                        ],
                    )
                )
            return
        command = [
            str(python),
            "-m",
            module,
            "--json",
            "--size",
            ",".join(sizes),
        ]
        data = real_sample_path(self.args.data)
        if data.is_file():
            command += ["--data", str(data)]
        command += self.peer_budget(name)
        log(f"  running {' '.join(command[1:])}")

        def failed(note: str) -> None:
            for size_name in sizes:
                self.add(Record(name, title, size_name, status="failed", notes=[note]))

        try:
            done = subprocess.run(
                command,
                capture_output=True,
                text=True,
                timeout=self.plan.peer_timeout,
                cwd=str(REPO),
            )
        except subprocess.TimeoutExpired as err:
            partial = err.stdout.decode() if isinstance(err.stdout, bytes) else err.stdout or ""
            done = subprocess.CompletedProcess(command, -9, partial, "")
            lines = [line for line in partial.splitlines() if line.startswith("{")]
            got = {json.loads(line).get("size") for line in lines}
            sizes_left = [s for s in sizes if s not in got]
            for size_name in sizes_left:
                self.add(
                    Record(
                        name,
                        title,
                        size_name,
                        status="failed",
                        notes=[f"timed out after {self.plan.peer_timeout}s"],
                    )
                )
            if not lines:
                return
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        if not lines:
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            failed(f"exit {done.returncode}, no JSON record: " + " | ".join(tail))
            return
        for line in lines:
            record = Record.from_dict(json.loads(line))
            if self.plan.quick:
                record.notes.append("quick mode: tiny budget, not a measurement")
            self.add(record)

    def peer_budget(self, name: str) -> list[str]:
        if name == "ydata":
            if self.plan.quick:
                return ["--steps", "3", "--repeats", "1", "--warmup", "1"]
            return ["--steps", str(max(self.plan.steps, 60)), "--repeats", str(self.plan.repeats)]
        if self.plan.quick:
            return ["--epochs", "1", "--repeats", "1", "--max-rows", "1500", "--no-flops"]
        return ["--epochs", "2", "--repeats", str(min(self.plan.repeats, 3))]

    def peer_sizes(self) -> list[str]:
        """Peers: their native settings plus the chosen sizes (quick: the smallest only)."""
        if self.plan.quick:
            return ["small"] if "small" in self.args.sizes else self.args.sizes[:1]
        return ["native", *self.args.sizes]

    # -- extras ----------------------------------------------------------------------------
    def run_batch_sweep(self, systems: list[str]) -> None:
        """ms per generator step at the default widths across batch sizes, for ``systems``
        (the naive loop and/or one trainer variant); at each batch size they are timed
        round-robin (:func:`time_interleaved`), so the VM's drift hits them alike."""
        for batch in SWEEP_BATCHES:
            size = replace(SIZES["default"], batch=batch)
            note = "extras: default widths at another batch size, timed round-robin with " + (
                ", ".join(systems)
            )
            prepared = [
                self.extra_contender(name, size, f"batch sweep b={batch}", note) for name in systems
            ]
            timings = time_interleaved([c for c, _ in prepared], 3)
            for (_, record), timing in zip(prepared, timings, strict=True):
                self.add(record(timing))

    def extra_contender(
        self,
        name: str,
        size: Size,
        variant: str,
        note: str,
    ) -> tuple[Contender, Callable[[Timing], Record]]:
        """System ``name`` (the naive loop or a trainer variant) at a ``size`` of the extras,
        and how its timing becomes a record (``ms_per_gen_step`` in its extra).

        A ``_k`` variant runs the plan's K steps a call, capped at the repeat's step budget
        (about the same time per repeat at every batch size: K=100 at batch 4096 would make a
        repeat 100 steps of about 0.3 s).
        """
        from scripts.bench.naive_loop import NaiveLoop
        from scripts.bench.wgangp_systems import build

        budget = max(10, int(40 * 512 / size.batch))  # about the same time per repeat
        if name == "naive":
            system, k, flops = NaiveLoop(size, self.rows), 1, None
        else:
            system = build(name, size, self.rows, min(self.plan.k, budget))
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
                    **self.common_settings(),
                    **dict(getattr(system, "settings", {})),
                },
                [note],
            )
            made.extra = {"ms_per_gen_step": round(1000 * timing.median_s / steps, 3)}
            return made

        return Contender(system.run, steps, max(3, k)), record

    def run_peak_rss(self) -> None:
        """Peak memory of the naive loop holding 1M simulated rows (a fresh process)."""
        command = ["-m", "scripts.bench.naive_loop", "--rss-rows", str(RSS_ROWS), "--steps", "20"]
        self.run_peak_rss_process("naive", command)

    def run_wgangp_peak_rss(self, name: str) -> None:
        """System ``name``'s peak memory from 1M rows (a fresh process)."""
        command = [
            "-m",
            "scripts.bench.wgangp_systems",
            "--system",
            name,
            "--rss-rows",
            str(RSS_ROWS),
            "--steps",
            "100",
        ]
        self.run_peak_rss_process(name, command)

    def run_peak_rss_process(self, system: str, command: list[str]) -> None:
        """Run a peak-RSS ``command`` under this Python in a fresh process; its last JSON line is
        the record (a failed record for ``system`` if it printed none)."""
        command = [sys.executable, *command]
        log(f"  running {' '.join(command[1:])}")
        done = subprocess.run(command, capture_output=True, text=True, cwd=str(REPO), timeout=1800)
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        if not lines:
            self.add(
                Record(
                    system,
                    f"peak-rss {RSS_ROWS:,} rows",
                    "default",
                    status="failed",
                    notes=[f"exit {done.returncode}: {done.stderr.strip()[-300:]}"],
                )
            )
            return
        self.add(Record.from_dict(json.loads(lines[-1])))

    # -- driver ----------------------------------------------------------------------------
    def run(self) -> list[Record]:
        systems = self.args.systems
        in_process = [s for s in systems if s in ("naive", "matmul", *WGANGP_SYSTEMS)]
        for size_name in self.args.sizes if in_process else []:
            log(f"size {size_name}:")
            self.run_in_process(size_name, systems)
        peers = [p for p in PEERS if p in systems]
        if peers:
            log("peers:")
            for name in peers:
                self.run_peer(name, self.peer_sizes())
        if self.args.extras and not self.plan.quick:
            log("extras:")
            chosen = [s for s in EXTRAS_PREFERENCE if s in systems][:1]
            swept = [s for s in systems if s == "naive"] + chosen
            if swept:
                self.run_batch_sweep(swept)
            if "naive" in systems:
                self.run_peak_rss()
            if chosen:
                self.run_wgangp_peak_rss(chosen[0])
        return self.records


def read_records(path: Path) -> list[Record]:
    """Records from a benchmark JSON file (a list) or a peer's output (one JSON object a line)."""
    text = path.read_text()
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    items = data if isinstance(data, list) else [data]
    return [Record.from_dict(item) for item in items]


def fmt(value: float | None, digits: int = 0) -> str:
    if value is None:
        return "—"
    return f"{value:,.{digits}f}"


def markdown(records: list[Record], header: list[str]) -> str:
    """The table: one row per record, ratio = critic samples/s over the naive loop's, same size."""
    naive = {
        r.size: r.critic_samples_per_s
        for r in records
        if r.system == "naive" and r.variant == "keras-style loop" and r.status == "ok"
    }
    lines = [
        *header,
        "",
        "| # | system | variant | size | critic samples/s | gen steps/s | GFLOP/s "
        "| GFLOP/step | × naive | status |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---|",
    ]
    notes = []
    for i, r in enumerate(records, 1):
        base = naive.get(r.size)
        ratio = f"{r.critic_samples_per_s / base:.2f}" if base and r.critic_samples_per_s else "—"
        per_step = r.flops_per_gen_step / 1e9 if r.flops_per_gen_step else None
        lines.append(
            f"| {i} | {r.system} | {r.variant} | {r.size} | {fmt(r.critic_samples_per_s)} "
            f"| {fmt(r.gen_steps_per_s, 1)} | {fmt(r.gflops_per_s, 1)} | {fmt(per_step, 3)} "
            f"| {ratio} | {r.status} |"
        )
        extra = [f"{k}={v}" for k, v in r.extra.items() if k != "shapes"]
        details = [*r.notes, *extra]
        if details:
            notes.append(f"{i}. " + "; ".join(str(d) for d in details))
    if notes:
        lines += ["", "Notes:", "", *notes]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    started = time.perf_counter()
    try:
        args = parse_args(argv)
        needs_rows = any(s in args.systems for s in ("naive", "matmul", *WGANGP_SYSTEMS))
        rows = load_rows(args.data) if needs_rows else None
    except WgangpError as err:
        print(f"benchmark: {err}", file=sys.stderr)
        return err.exit_code
    except FileNotFoundError as err:
        print(f"benchmark: {err}; pass --data PATH or set WGANGP_REAL_SAMPLE", file=sys.stderr)
        return DataError.exit_code
    if rows is not None and rows.simulated:
        log("!" * 78)
        log(f"!!! {rows.note}: set WGANGP_REAL_SAMPLE or --data; figures are NOT comparable")
        log("!" * 78)
    mode = "quick (harness check only)" if args.quick else "full"
    log(f"benchmark ({mode}): systems {','.join(args.systems)}; sizes {','.join(args.sizes)}")
    load_before = load_average()
    if load_before > (os.cpu_count() or 1):
        log(f"warning: load average {load_before} > {os.cpu_count()} cores: figures will be low")
    harness = Harness(args, rows)
    records = harness.run()
    for path in args.include:
        records += read_records(Path(path))
    load_after = load_average()

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps([r.to_dict() for r in records], indent=2) + "\n")
    data_line = rows.note if rows else f"peers read {real_sample_path(args.data)}"
    header = [
        f"# Benchmark ({mode}), {time.strftime('%Y-%m-%d %H:%M')}",
        "",
        f"Data: {data_line}. Machine: {os.cpu_count()} CPU cores. "
        "Main env: "
        f"{json.dumps(versions('tensorflow', 'keras', 'numpy', import_missing=False))}.",
        f"Load average (1 min) at start {load_before}, at end {load_after} "
        "(above the core count means other processes shared the CPU).",
        "critic samples/s = batch × n_critic × gen steps/s; × naive = critic samples/s over the "
        "naive loop's at the same size; GFLOP counts matmuls only.",
    ]
    table = markdown(records, header)
    out.with_suffix(".md").write_text(table)
    print(table)
    log(f"wrote {out} and {out.with_suffix('.md')} in {time.perf_counter() - started:.0f}s")
    failed = [r for r in records if r.status == "failed"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
