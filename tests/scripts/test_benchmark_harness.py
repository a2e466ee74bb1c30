"""The benchmark harness keeps working: quick run's JSON and table, FLOP counting, the extras."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from support.configs import REPO, compose

REQUIRED = {
    "system",
    "variant",
    "size",
    "critic_samples_per_s",
    "gen_steps_per_s",
    "gflops_per_s",
    "flops_per_gen_step",
    "notes",
    "settings",
}


@pytest.mark.slow
def test_quick_run_writes_records_and_table(tmp_path: Path) -> None:
    out = tmp_path / "x.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "scripts.bench",
            "--quick",
            "--systems",
            "naive,matmul",
            "--sizes",
            "small",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    records = json.loads(out.read_text())
    by_system = {r["system"]: r for r in records}
    assert set(by_system) == {"naive", "matmul"}
    for record in records:
        assert set(record) >= REQUIRED, record
        assert record["size"] == "small"
    for name in ("naive", "matmul"):
        record = by_system[name]
        assert record["status"] == "ok"
        for key in (
            "critic_samples_per_s",
            "gen_steps_per_s",
            "gflops_per_s",
            "flops_per_gen_step",
        ):
            assert math.isfinite(record[key]) and record[key] > 0, (name, key, record[key])
        settings = record["settings"]
        assert settings["batch"] == 256 and settings["n_critic"] == 5 and settings["latent"] == 32
        assert settings["tensorflow"]
    naive = by_system["naive"]
    assert naive["critic_samples_per_s"] == pytest.approx(256 * 5 * naive["gen_steps_per_s"])
    assert naive["settings"]["steps_measured"] > 0 and naive["settings"]["repeats"] > 0
    # the probe counts the same matmuls as the naive step it bounds
    assert by_system["matmul"]["flops_per_gen_step"] == naive["flops_per_gen_step"]
    table = out.with_suffix(".md").read_text()
    assert "| naive | keras-style loop | small |" in table
    assert "× naive" in table and "1.00" in table
    assert "real rows" in table or "SIMULATED" in table


def test_unregistered_trainer_is_recorded_as_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    import scripts.bench.wgangp_systems as registry
    from scripts.bench.__main__ import parse_args
    from scripts.bench.harness import Harness
    from scripts.bench.peers.record import SIZES
    from scripts.bench.report import markdown

    def not_yet(name, size, rows, steps_per_call=None):
        raise NotImplementedError("wgangp systems are added by the trainer")

    monkeypatch.setattr(registry, "build", not_yet)
    plan = parse_args(["--systems", "wgangp_xla", "--sizes", "small", "--quick"]).plan
    harness = Harness(plan, rows=None)
    harness.run_size(SIZES["small"])  # nothing left to time
    (record,) = harness.records
    assert (record.system, record.size, record.status) == ("wgangp_xla", "small", "skipped")
    assert record.notes == ["wgangp systems are added by the trainer"]
    assert "skipped" in markdown(harness.records, ["# t"])


def test_unknown_system_is_one_line_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "scripts.bench",
            "--systems",
            "nope",
            "--out",
            str(tmp_path / "x.json"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "benchmark: unknown system(s) nope; choose from "
        "naive, wgangp, wgangp_default, wgangp_xla, wgangp_k, wgangp_k_xla, ydata, ctgan, matmul"
    ]


def test_help_names_the_module_command() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "scripts.bench", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("usage: python -m scripts.bench ")
    text = " ".join(done.stdout.split())  # argparse wraps to the terminal's width
    assert "--extras" in text and "ydata, ctgan, matmul" in text


def test_flops_counts_known_matmuls_in_calls_and_loops() -> None:
    tf = pytest.importorskip("tensorflow")
    from scripts.bench.peers.flops import count_flops

    @tf.function
    def inner(a, b):
        return tf.matmul(a, b, transpose_b=True)  # [8,16] x [4,16]^T: 2*8*16*4 = 1024

    @tf.function
    def step(a, b, c, d):
        x = tf.matmul(a, b)  # 1024
        y = inner(a, tf.transpose(b))  # 1024, in a library function
        z = tf.matmul(c, d)  # batch of 3: 3072
        acc = tf.zeros([8, 4])
        for _ in tf.range(3):
            acc += tf.matmul(a, b)  # 1024 per trip, in a while body
        return x, y, z, acc + tf.reduce_sum(a)

    concrete = step.get_concrete_function(
        tf.TensorSpec([8, 16]),
        tf.TensorSpec([16, 4]),
        tf.TensorSpec([3, 8, 16]),
        tf.TensorSpec([3, 16, 4]),
    )
    once = count_flops(concrete)
    assert (once.flops, once.matmuls, once.unknown_shape_matmuls) == (6144, 4, 0)
    looped = count_flops(concrete, loop_trip_count=3)
    assert (looped.flops, looped.matmuls) == (8192, 6)
    assert looped.shapes[(8, 16, 4, False, True)] == 1
    assert looped.shapes[(8, 16, 4, False, False)] == 1 + 3 + 3


def test_flops_of_dense_layer_gradient() -> None:
    """Forward x@W plus backward dX = dY@W^T and dW = X^T@dY: three equal-cost matmuls."""
    tf = pytest.importorskip("tensorflow")
    from scripts.bench.peers.flops import count_flops

    w = tf.Variable(tf.ones([16, 4]))

    @tf.function
    def grads(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.matmul(x, w))
        return tape.gradient(y, [x, w])

    count = count_flops(grads.get_concrete_function(tf.TensorSpec([8, 16])))
    assert count.matmuls == 3
    assert count.flops == 3 * 2 * 8 * 16 * 4


def test_interleaved_timing_puts_every_system_through_the_same_minutes() -> None:
    """Repeat r of every system runs before repeat r+1 of any (the VM's drift hits all alike)."""
    from scripts.bench.harness import Contender, time_interleaved

    calls: list[tuple[str, int]] = []
    a = Contender(lambda n: calls.append(("a", n)), steps=4, warmup=2)
    b = Contender(lambda n: calls.append(("b", n)), steps=6, warmup=3)
    timings = time_interleaved([a, b], repeats=3)
    assert calls == [("a", 2), ("b", 3), *[("a", 4), ("b", 6)] * 3]
    assert [t.steps for t in timings] == [4, 6]
    assert [len(t.repeats) for t in timings] == [3, 3]


def test_batch_sweep_caps_steps_per_call_at_each_repeats_step_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The sweep runs the plan's K a call where a repeat holds that many steps, and fewer at
    the large batches, whose repeats hold few steps: K=100 at batch 4096 would make every
    repeat 100 slow steps. Each repeat is a whole number of calls."""
    import scripts.bench.wgangp_systems
    from scripts.bench.__main__ import parse_args
    from scripts.bench.harness import Harness

    made: list[tuple[str, int, int]] = []
    asked: list[tuple[int, int, int]] = []  # (batch, steps_per_call, steps asked of one run)

    class Fake:
        variant, notes, settings = "fake", [], {}

        def __init__(self, name: str, size, k: int) -> None:
            made.append((name, size.batch, k))
            self.batch, self.steps_per_call = size.batch, 1 if name == "naive" else k

        def run(self, steps: int) -> None:
            asked.append((self.batch, self.steps_per_call, steps))

        def flops_per_gen_step(self) -> float:
            return 1e9

    monkeypatch.setattr(Harness, "build", lambda self, name, size, k: Fake(name, size, k))
    plan = parse_args(["--systems", "naive,wgangp_k_xla", "--sizes", "default"]).plan
    harness = Harness(plan, rows=None)
    assert harness.plan.k == scripts.bench.wgangp_systems.K_STEPS == 100
    harness.run_batch_sweep(["naive", "wgangp_k_xla"])

    trainer_k = {batch: k for name, batch, k in made if name == "wgangp_k_xla"}
    # step budget max(10, 40 * 512 / batch): 320, 160, 80, 40, 20, 10, 10
    assert trainer_k == {64: 100, 128: 100, 256: 80, 512: 40, 1024: 20, 2048: 10, 4096: 10}
    assert all(steps % k == 0 for _, k, steps in asked)
    assert {steps for batch, k, steps in asked if k > 1 and batch == 64} >= {300}
    records = harness.records
    assert [r.variant for r in records[:2]] == ["batch sweep b=64"] * 2
    for r in records:
        assert r.size == "default"
        assert r.extra == {"ms_per_gen_step": round(1000 / r.gen_steps_per_s, 3)}
    assert {r.settings["batch"] for r in records} == {64, 128, 256, 512, 1024, 2048, 4096}


def test_extras_sweep_then_measure_peak_memory_in_fresh_module_processes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """--extras sweeps the naive loop and the fastest trainer mode asked for, then measures each
    one's peak memory in a fresh ``python -m scripts.bench.peak_rss`` from the repo root; a
    process that prints no record leaves a failed one."""
    from scripts.bench import harness as harness_module
    from scripts.bench.__main__ import parse_args
    from scripts.bench.harness import Harness
    from scripts.bench.peers.record import Record
    from scripts.bench.peers.rows import REPO as BENCH_REPO

    swept: list[list[str]] = []
    runs: list[tuple[list[str], str]] = []
    monkeypatch.setattr(Harness, "run_batch_sweep", lambda self, names: swept.append(names))

    def fake_run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
        runs.append((command, kwargs["cwd"]))
        if command[command.index("--system") + 1] == "naive":
            record = Record(system="naive", variant="peak-rss 1,000,000 rows", size="default")
            line = json.dumps(record.to_dict())
            return subprocess.CompletedProcess(command, 0, f"progress\n{line}\n", "")
        return subprocess.CompletedProcess(command, 1, "", "Traceback ...\nMemoryError")

    monkeypatch.setattr(harness_module.subprocess, "run", fake_run)
    plan = parse_args(["--systems", "wgangp_k,naive,wgangp_k_xla", "--extras"]).plan
    harness = Harness(plan, rows=None)
    harness.run_extras()

    assert swept == [["naive", "wgangp_k_xla"]]
    commands = [command for command, _ in runs]
    assert [c[:3] for c in commands] == [[sys.executable, "-m", "scripts.bench.peak_rss"]] * 2
    assert all(c[c.index("--rss-rows") + 1] == "1000000" for c in commands)
    assert [c[c.index("--system") + 1] for c in commands] == ["naive", "wgangp_k_xla"]
    assert {cwd for _, cwd in runs} == {str(BENCH_REPO)} == {str(REPO)}
    naive, trainer = harness.records
    assert (naive.system, naive.status) == ("naive", "ok")
    assert (trainer.system, trainer.variant, trainer.status) == (
        "wgangp_k_xla",
        "peak-rss 1,000,000 rows",
        "failed",
    )
    assert trainer.notes == ["exit 1: Traceback ...\nMemoryError"]


@pytest.mark.parametrize(
    "options", [["--system", "naive", "--size", "small"], ["--system", "wgangp"]]
)
@pytest.mark.slow
def test_peak_memory_module_runs_alone_and_prints_one_record(options: list) -> None:
    """The extras' fresh processes, at a tiny scale: each prints its record as its last line."""
    command = [sys.executable, "-m", "scripts.bench.peak_rss", "--rss-rows", "3000", "--steps", "2"]
    done = subprocess.run(
        [*command, *options],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    record = json.loads(done.stdout.strip().splitlines()[-1])
    assert record["variant"] == "peak-rss 3,000 rows" and record["status"] == "ok"
    assert record["settings"]["rows"] == 3000 and record["gen_steps_per_s"] > 0
    assert record["extra"]["peak_rss_mb"] > 0


def test_default_config_system_trains_as_a_users_run_is_configured() -> None:
    """``wgangp_default`` is the product as ``python -m wgangp.train`` composes it: its K and
    XLA come from the Hydra config, never from the harness's K for the ``_k`` variants."""
    from scripts.bench.peers.record import SIZES
    from scripts.bench.peers.rows import simulated_rows
    from scripts.bench.wgangp_systems import build, product_defaults

    trainer = compose().trainer
    assert product_defaults() == (trainer.steps_per_call, trainer.jit_compile)
    system = build("wgangp_default", SIZES["small"], simulated_rows(500), steps_per_call=2)
    assert system.steps_per_call == trainer.steps_per_call
    assert system.jit_compile is trainer.jit_compile
    assert system.trainer.tc.steps_per_call == trainer.steps_per_call
    assert system.variant == f"default config (K={trainer.steps_per_call})"
    assert build("wgangp_k", SIZES["small"], simulated_rows(500), 2).steps_per_call == 2


def test_k_xla_system_is_what_the_fast_trainer_preset_runs() -> None:
    """The docs label ``wgangp_k_xla``'s rows ``trainer=fast``: same K per call, XLA on."""
    from scripts.bench.wgangp_systems import K_STEPS

    fast = compose(["trainer=fast"]).trainer
    assert (fast.steps_per_call, fast.jit_compile) == (K_STEPS, True)


def test_probe_step_runs_each_matmul_shape_as_often_as_the_step(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """run(n) makes count * n / UNROLL loop trips per shape; n must be a multiple of UNROLL."""
    tf = pytest.importorskip("tensorflow")
    import scripts.bench.matmul_probe as matmul_probe

    trips: list[tuple[tuple[int, int, int], int]] = []

    def fake_loop(m, k, n, transpose_a, transpose_b):
        def repeat(a, b, iterations):
            trips.append(((m, k, n), int(iterations)))
            return tf.zeros([m, n])

        return repeat

    monkeypatch.setattr(matmul_probe, "_loop", fake_loop)
    shapes = Counter({(4, 3, 2, False, False): 1, (5, 2, 3, True, False): 3})
    probe = matmul_probe.ProbeStep(shapes)
    assert probe.steps_per_call == matmul_probe.UNROLL == 8
    assert probe.shapes == 2
    assert probe.flops_per_step == 2 * 4 * 3 * 2 * 1 + 2 * 5 * 2 * 3 * 3
    probe.run(16)
    assert trips == [((4, 3, 2), 2), ((5, 2, 3), 6)]
    with pytest.raises(ValueError, match="multiples of 8 steps, not 12"):
        probe.run(12)
