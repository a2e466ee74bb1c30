"""The project's trainer as benchmark systems: plain, the default config, XLA, K steps per call,
K steps + XLA.

``build(name, size, rows, steps_per_call)`` returns a system like the others (``harness.System``):
``run(steps)`` completes ``steps`` generator steps (each = ``size.n_critic`` critic updates + 1
generator update) and returns only when the work is done; it is only asked for multiples of
``steps_per_call`` (K for the ``_k`` variants); ``flops_per_gen_step()`` counts the matmuls of
``TrainStep.generator_step`` (the body of the ``tf.range`` loop, traced alone so every shape
is static).

Run alone for the peak-memory extra (one JSON record on stdout):
``python -m scripts.bench.wgangp_systems --system wgangp_k_xla --rss-rows 1000000``. The batch
sweep is ``python -m scripts.bench --extras`` (timed round-robin with the naive loop).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scripts.bench import peak_rss
from scripts.bench.peers.record import Size
from scripts.bench.peers.rows import Rows

if TYPE_CHECKING:
    from scripts.bench.peers.flops import FlopCount
    from wgangp.config import Config
    from wgangp.step.train_step import TrainStep


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
#: Generator steps per call for the ``_k`` variants: the ``trainer=fast`` preset's K, so
#: ``wgangp_k_xla`` is what that preset runs (why that K: docs/benchmark.md).
K_STEPS = product_defaults("fast")[0]


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


class TrainerSystem:
    """``TrainStep`` driven the way the host loop drives it: ``run(K)`` per call."""

    def __init__(
        self,
        name: str,
        size: Size,
        rows: Rows,
        *,
        steps_per_call: int,
        jit_compile: bool,
        label: str | None = None,
    ) -> None:
        import keras

        from wgangp.step.batch import ClassBalancedRows
        from wgangp.step.train_step import build_train_step

        keras.utils.set_random_seed(0)
        cfg = trainer_config(size, steps_per_call, jit_compile)
        self.steps_per_call, self.jit_compile = steps_per_call, jit_compile
        self.trainer = build_train_step(
            cfg, ClassBalancedRows(rows.features, rows.labels, fraud_share=0.5)
        )
        mode = "XLA" if jit_compile else "plain"
        if steps_per_call > 1:
            mode = f"K={steps_per_call}" + (" XLA" if jit_compile else "")
        self.variant = f"{label} ({mode})" if label else mode
        self.settings: dict[str, Any] = {
            "steps_per_call": steps_per_call,
            "jit_compile": jit_compile,
            "precision": cfg.trainer.precision,
            "deterministic_ops": False,
            "sampling": "in-graph stateless, class-balanced (fraud share 0.5), rows on device",
        }
        self.notes = [
            SYSTEMS[name],
            "op determinism off here: it is process-wide and would bind the naive loop too",
        ]
        self._flops: float | None = None

    def run(self, steps: int) -> object:
        result = None
        remaining = steps
        while remaining > 0:
            result = self.trainer.advance(min(remaining, self.steps_per_call))
            if result.bad_step >= 0:
                raise RuntimeError(f"non-finite at step {result.bad_step}: {result.bad_source}")
            remaining -= result.completed
        return result

    def flops_per_gen_step(self) -> float:
        if self._flops is None:
            self._flops = float(count_step_flops(self.trainer).flops)
        return self._flops


def count_step_flops(trainer: TrainStep) -> FlopCount:
    """Matmul FLOPs of one generator step (``n_critic`` critic updates + 1 generator update)."""
    import tensorflow as tf

    from scripts.bench.peers.flops import count_flops

    def one_step(step: tf.Tensor) -> tf.Tensor:
        return trainer.generator_step(step, trainer.batches.draw(step))[1]

    traced = tf.function(one_step).get_concrete_function(tf.TensorSpec((), tf.int64))
    return count_flops(traced)


def build(name: str, size: Size, rows: Rows, steps_per_call: int | None = None) -> TrainerSystem:
    """The system ``name`` at ``size`` on ``rows``; the ``_k`` variants run ``steps_per_call``
    (default :data:`K_STEPS`) generator steps per call, ``wgangp_default`` the config's K
    (:func:`product_defaults`), the others one."""
    if name not in SYSTEMS:
        raise KeyError(f"unknown wgangp system {name!r}; choose from {', '.join(SYSTEMS)}")
    if name == "wgangp_default":
        k, jit = product_defaults()
        return TrainerSystem(
            name, size, rows, steps_per_call=k, jit_compile=jit, label="default config"
        )
    k = (steps_per_call or K_STEPS) if name.startswith("wgangp_k") else 1
    return TrainerSystem(name, size, rows, steps_per_call=k, jit_compile=name.endswith("xla"))


if __name__ == "__main__":
    sys.exit(
        peak_rss.main(
            None,
            prog="python -m scripts.bench.wgangp_systems",
            builders={name: lambda s, r, name=name: build(name, s, r) for name in SYSTEMS},
            default="wgangp_k_xla",
            steps=200,
        )
    )
