"""The project's trainer as benchmark systems: plain, the default config, XLA, K steps per call,
K steps + XLA.

The harness asks ``build(name, size, rows, steps_per_call)`` for an object with:
- ``run(steps: int) -> object``: complete ``steps`` generator steps (each = ``size.n_critic``
  critic updates + 1 generator update) and return only when the work is done (read a value back);
- ``steps_per_call: int``: ``run`` is only asked for multiples of it (K for the ``_k`` variants);
- ``flops_per_gen_step() -> float``: matmul FLOPs of one generator step, counted by
  ``scripts.bench.flops.count_flops`` on the traced graph of ``WGANGPTrainer.generator_step``
  (the body of the ``tf.range`` loop, traced alone so every shape is static);
- ``notes: list[str]``, ``settings: dict`` and ``variant: str`` copied into the record.

Run alone for the peak-memory extra (one JSON record on stdout):
``python -m scripts.bench.wgangp_systems --rss-rows 1000000`` (peak memory from 1M rows). The
batch sweep is ``python -m scripts.bench --extras`` (timed round-robin with the naive loop).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from scripts.bench.common import Record, Rows, Size

if TYPE_CHECKING:
    from scripts.bench.flops import FlopCount
    from wgangp.config import Config
    from wgangp.step.train_step import WGANGPTrainer


def product_defaults(preset: str = "default") -> tuple[int, bool]:
    """``trainer.steps_per_call`` and ``trainer.jit_compile`` as a user's run gets them: read
    from ``conf/trainer/<preset>.yaml``, the Hydra group ``python -m wgangp.train`` composes
    (``default``, or ``trainer=fast``; both presets set these two keys themselves)."""
    from omegaconf import OmegaConf

    path = Path(__file__).resolve().parents[2] / f"conf/trainer/{preset}.yaml"
    trainer = OmegaConf.load(path)
    return int(trainer.steps_per_call), bool(trainer.jit_compile)


#: name -> what it is (shown in the docs and in the harness's --help).
SYSTEMS: dict[str, str] = {
    "wgangp": "the project's trainer, one generator step per tf.function call",
    "wgangp_default": "the project's trainer as conf/trainer/default.yaml configures it "
    "(steps_per_call and jit_compile), what `python -m wgangp.train` runs",
    "wgangp_xla": "the project's trainer compiled with XLA (jit_compile=True)",
    "wgangp_k": "the project's trainer, K generator steps per call in one tf.range loop",
    "wgangp_k_xla": "K steps per call, XLA-compiled",
}
#: Generator steps per call for the ``_k`` variants (the harness times multiples of it): the
#: ``trainer=fast`` preset's K, so ``wgangp_k_xla`` is what that preset runs. Each call has a
#: fixed cost besides its steps (dispatch, allocation, thread-pool scheduling), which K spreads
#: over its steps; it weighs most at the small size, where a step is short. The measurements
#: behind the preset's K are in docs/benchmark.md.
K_STEPS = product_defaults("fast")[0]


class BenchSystem(Protocol):
    """What the harness needs of a trainer system (see the module docstring)."""

    steps_per_call: int
    variant: str
    notes: list[str]
    settings: dict[str, Any]

    def run(self, steps: int) -> object: ...

    def flops_per_gen_step(self) -> float | None: ...


def trainer_config(size: Size, steps_per_call: int, jit_compile: bool, seed: int = 0) -> Config:
    """The project's typed config at a benchmark size (float32, in-graph balanced sampling)."""
    from wgangp.config import Config

    cfg = Config(seed=seed)
    cfg.model.latent_dim = size.latent
    cfg.model.generator.hidden = list(size.gen_widths)
    cfg.model.critic.hidden = list(size.critic_widths)
    cfg.trainer.batch_size = size.batch
    cfg.trainer.n_critic = size.n_critic
    cfg.trainer.steps_per_call = steps_per_call
    cfg.trainer.jit_compile = jit_compile
    return cfg


@dataclass
class TrainerSystem:
    """``WGANGPTrainer`` driven the way the host loop drives it: ``run(K)`` per call."""

    name: str
    size: Size
    rows: Rows
    steps_per_call: int
    jit_compile: bool
    notes: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    label: str | None = None  # the variant's name in the table, when not its K and XLA

    def __post_init__(self) -> None:
        import keras

        from wgangp.step.batch import ClassBalancedRows
        from wgangp.step.replicas import make_trainer

        keras.utils.set_random_seed(0)
        cfg = trainer_config(self.size, self.steps_per_call, self.jit_compile)
        rows = ClassBalancedRows(self.rows.features, self.rows.labels, fraud_share=0.5)
        self.trainer = make_trainer(cfg, rows)
        mode = (
            f"K={self.steps_per_call}" + (" XLA" if self.jit_compile else "")
            if self.steps_per_call > 1
            else ("XLA" if self.jit_compile else "plain")
        )
        self.variant = f"{self.label} ({mode})" if self.label else mode
        self.settings = {
            "steps_per_call": self.steps_per_call,
            "jit_compile": self.jit_compile,
            "precision": cfg.trainer.precision,
            "deterministic_ops": False,
            "sampling": "in-graph stateless, class-balanced (fraud share 0.5), rows on device",
        }
        self.notes = [
            SYSTEMS[self.name],
            "op determinism off here: it is process-wide and would bind the naive loop too",
        ]
        self._flops: float | None = None

    def run(self, steps: int) -> object:
        result = None
        remaining = steps
        while remaining > 0:
            result = self.trainer.run(min(remaining, self.steps_per_call))
            if result.bad_step >= 0:
                raise RuntimeError(f"non-finite at step {result.bad_step}: {result.bad_source}")
            remaining -= result.completed
        return result

    def flops_per_gen_step(self) -> float | None:
        if self._flops is None:
            self._flops = float(count_step_flops(self.trainer).flops)
        return self._flops

    def tracing_count(self) -> int:
        return self.trainer.tracing_count()


def count_step_flops(trainer: WGANGPTrainer) -> FlopCount:
    """Matmul FLOPs of one generator step (``n_critic`` critic updates + 1 generator update)."""
    import tensorflow as tf

    from scripts.bench.flops import count_flops

    def one_step(step: tf.Tensor) -> tf.Tensor:
        return trainer.generator_step(step)[1]

    traced = tf.function(one_step).get_concrete_function(tf.TensorSpec((), tf.int64))
    return count_flops(traced)


def build(name: str, size: Size, rows: Rows, steps_per_call: int | None = None) -> BenchSystem:
    """The system ``name`` at ``size`` on ``rows``; the ``_k`` variants run ``steps_per_call``
    (default :data:`K_STEPS`) generator steps per call, ``wgangp_default`` the config's K
    (:func:`product_defaults`), the others one."""
    if name not in SYSTEMS:
        raise KeyError(f"unknown wgangp system {name!r}; choose from {', '.join(SYSTEMS)}")
    if name == "wgangp_default":
        k, jit = product_defaults()
        return TrainerSystem(name, size, rows, k, jit, label="default config")
    k = (steps_per_call or K_STEPS) if name.startswith("wgangp_k") else 1
    return TrainerSystem(name, size, rows, steps_per_call=k, jit_compile=name.endswith("xla"))


# -- extras: peak memory ---------------------------------------------------------------------


def peak_rss(n_rows: int, name: str = "wgangp_k_xla", steps: int = 200) -> Record:
    """Train from ``n_rows`` simulated rows; RSS after warm-up and after ``steps`` more steps."""
    from scripts.bench.common import (
        SIZES,
        current_rss_mb,
        peak_rss_mb,
        simulated_rows,
        versions,
    )

    size = SIZES["default"]
    before = peak_rss_mb()
    rows = simulated_rows(n_rows)
    system = build(name, size, rows)
    system.run(system.steps_per_call)
    after_warmup = current_rss_mb()
    start = time.perf_counter()
    done = 0
    samples = []
    while done < steps:
        system.run(system.steps_per_call)
        done += system.steps_per_call
        samples.append(round(current_rss_mb(), 1))
    elapsed = time.perf_counter() - start
    return Record(
        system=name,
        variant=f"peak-rss {n_rows:,} rows",
        size=size.name,
        critic_samples_per_s=size.batch * size.n_critic * done / elapsed,
        gen_steps_per_s=done / elapsed,
        notes=[
            f"simulated rows: {rows.features.nbytes / 2**20:.0f} MiB float32 on the host, "
            "one more copy as device variables; batches gathered in the graph"
        ],
        settings={
            **size.settings(),
            **system.settings,
            "rows": n_rows,
            "steps_measured": done,
            **versions("tensorflow", "keras", "numpy"),
        },  # fmt: skip
        extra={
            "peak_rss_mb": round(peak_rss_mb(), 1),
            "peak_rss_before_data_mb": round(before, 1),
            "rss_after_warmup_mb": round(after_warmup, 1),
            "rss_after_steps_mb": samples[-1],
            "rss_growth_mb": round(samples[-1] - after_warmup, 1),
            "rss_samples_mb": samples,
        },
    )


def main(argv: list[str] | None = None) -> int:
    from scripts.bench.common import emit_json

    parser = argparse.ArgumentParser(
        prog="python -m scripts.bench.wgangp_systems",
        description="wgangp benchmark extras (JSON on stdout)",
    )
    parser.add_argument("--system", choices=sorted(SYSTEMS), default="wgangp_k_xla")
    parser.add_argument("--rss-rows", type=int, default=0, help="peak memory from N rows")
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args(argv)
    if args.rss_rows:
        emit_json(peak_rss(args.rss_rows, args.system, args.steps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
