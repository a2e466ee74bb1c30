"""The project's trainer as benchmark systems (``harness.System``): plain, the default config,
XLA, K steps per call, K steps + XLA. Their FLOPs are those of ``TrainStep.generator_step`` (the
body of the ``tf.range`` loop, traced alone so every shape is static).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from scripts.bench.peers.record import Size
from scripts.bench.peers.rows import Rows

if TYPE_CHECKING:
    from scripts.bench.peers.flops import FlopCount
    from wgangp.step.train_step import TrainStep


def product_defaults(preset: str = "default") -> tuple[int, bool]:
    """``trainer.steps_per_call`` and ``trainer.jit_compile`` as a user's run gets them: read
    from ``conf/trainer/<preset>.yaml``, the Hydra group ``python -m wgangp.train`` composes
    (``default``, or ``trainer=fast``; both presets set these two keys themselves)."""
    from omegaconf import OmegaConf

    trainer = OmegaConf.load(Path(__file__).resolve().parents[2] / f"conf/trainer/{preset}.yaml")
    return int(trainer.steps_per_call), bool(trainer.jit_compile)


#: name -> what it is (the first note of its records).
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


class TrainerSystem:
    """``TrainStep`` at a benchmark size (float32, in-graph balanced sampling), driven the way
    the host loop drives it: ``advance(K)`` per call."""

    def __init__(
        self, name: str, size: Size, rows: Rows, *, steps_per_call: int, jit_compile: bool
    ) -> None:
        import keras

        from wgangp.config import Config
        from wgangp.step.batch import ClassBalancedRows
        from wgangp.step.train_step import build_train_step

        keras.utils.set_random_seed(0)
        cfg = Config(seed=0)
        cfg.model.latent_dim = size.latent
        cfg.model.generator.hidden = list(size.gen_widths)
        cfg.model.critic.hidden = list(size.critic_widths)
        cfg.trainer.batch_size = size.batch
        cfg.trainer.n_critic = size.n_critic
        cfg.trainer.steps_per_call = steps_per_call
        cfg.trainer.jit_compile = jit_compile
        self.steps_per_call, self.jit_compile = steps_per_call, jit_compile
        self.trainer = build_train_step(
            cfg, ClassBalancedRows(rows.features, rows.labels, rare_share=0.5)
        )
        mode = "XLA" if jit_compile else "plain"
        if steps_per_call > 1:
            mode = f"K={steps_per_call}" + (" XLA" if jit_compile else "")
        self.variant = f"default config ({mode})" if name == "wgangp_default" else mode
        self.settings: dict[str, Any] = {
            "steps_per_call": steps_per_call,
            "jit_compile": jit_compile,
            "precision": cfg.trainer.precision,
            "deterministic_ops": False,
            "sampling": "in-graph stateless, class-balanced (rare share 0.5), rows on device",
        }
        self.notes = [
            SYSTEMS[name],
            "op determinism off here: it is process-wide and would bind the naive loop too",
        ]

    def run(self, steps: int) -> None:
        """``steps`` generator steps in calls of ``steps_per_call``; a non-finite step raises."""
        while steps > 0:
            result = self.trainer.advance(min(steps, self.steps_per_call))
            if result.bad_step >= 0:
                raise RuntimeError(f"non-finite at step {result.bad_step}: {result.bad_source}")
            steps -= result.completed

    def flops_per_gen_step(self) -> float:
        return float(count_step_flops(self.trainer).flops)


def count_step_flops(trainer: TrainStep) -> FlopCount:
    """Matmul FLOPs of one generator step (``n_critic`` critic updates + 1 generator update)."""
    import tensorflow as tf

    from scripts.bench.peers.flops import count_flops

    def one_step(step: tf.Tensor) -> tf.Tensor:
        return trainer.generator_step(step, trainer.batches.draw(step))[1]

    return count_flops(tf.function(one_step).get_concrete_function(tf.TensorSpec((), tf.int64)))


def build(name: str, size: Size, rows: Rows, steps_per_call: int | None = None) -> TrainerSystem:
    """The system ``name`` at ``size`` on ``rows``; the ``_k`` variants run ``steps_per_call``
    (default :data:`K_STEPS`) generator steps per call, ``wgangp_default`` the config's K
    (:func:`product_defaults`), the others one."""
    if name == "wgangp_default":
        k, jit = product_defaults()
        return TrainerSystem(name, size, rows, steps_per_call=k, jit_compile=jit)
    k = (steps_per_call or K_STEPS) if name.startswith("wgangp_k") else 1
    return TrainerSystem(name, size, rows, steps_per_call=k, jit_compile=name.endswith("xla"))
