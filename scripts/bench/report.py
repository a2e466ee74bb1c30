"""The benchmark's output: records as JSON, and the markdown table read against the naive loop."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from scripts.bench.harness import environment
from scripts.bench.peers.record import Record, json_records


def read_records(path: Path) -> list[Record]:
    """Records from a benchmark JSON file (a list) or a peer's output (one JSON object a line)."""
    text = path.read_text()
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return json_records(text)
    return [Record.from_dict(item) for item in (data if isinstance(data, list) else [data])]


def fmt(value: float | None, digits: int = 0) -> str:
    """A figure with thousands separators, or a dash where there is none."""
    if value is None:
        return "—"
    return f"{value:,.{digits}f}"


def header(mode: str, data_line: str, load_before: float, load_after: float) -> list[str]:
    """What the table's figures depend on: when, which data, which machine and how busy it was."""
    main_env = json.dumps(environment(import_missing=False))
    return [
        f"# Benchmark ({mode}), {time.strftime('%Y-%m-%d %H:%M')}",
        "",
        f"Data: {data_line}. Machine: {os.cpu_count()} CPU cores. Main env: {main_env}.",
        f"Load average (1 min) at start {load_before}, at end {load_after} "
        "(above the core count means other processes shared the CPU).",
        "critic samples/s = batch × n_critic × gen steps/s; × naive = critic samples/s over the "
        "naive loop's at the same size; GFLOP counts matmuls only.",
    ]


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
        details = [*r.notes, *(f"{k}={v}" for k, v in r.extra.items() if k != "shapes")]
        if details:
            notes.append(f"{i}. " + "; ".join(str(d) for d in details))
    if notes:
        lines += ["", "Notes:", "", *notes]
    return "\n".join(lines) + "\n"


def write(out: Path, records: list[Record], header: list[str]) -> str:
    """Write ``out`` (the records as JSON) and ``out`` with suffix .md (the table); return it."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps([r.to_dict() for r in records], indent=2) + "\n")
    table = markdown(records, header)
    out.with_suffix(".md").write_text(table)
    return table
