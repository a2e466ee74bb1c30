"""The WGAN-GP training loop: K generator steps per compiled call, guarded against NaN.

One call of the compiled function runs up to ``steps_per_call`` generator steps in a ``tf.range``
loop; each generator step does ``n_critic`` critic updates then one generator update. Batches are
drawn in the graph (:mod:`wgangp.sampler`), metrics come back once per call as a [K, M] tensor.

Before every update the step checks in the graph that the losses and every gradient are finite;
a bad update is never applied, so the weights stay the last good ones. The first bad quantity is
recorded (step and name) for the NaN forensics.
"""

from __future__ import annotations

from dataclasses import dataclass

import keras
import numpy as np
import tensorflow as tf

from wgangp import losses
from wgangp.config import Config
from wgangp.networks import N_CLASSES, build_critic, build_generator
from wgangp.sampler import ClassBalancedSampler, step_seed

METRICS: tuple[str, ...] = (
    "critic_loss",
    "generator_loss",
    "gradient_penalty",
    "wasserstein_estimate",
    "grad_norm_mean",
    "grad_norm_min",
    "zero_grad_rows",
)
_GENERATOR_SLOT = 1000  # random-stream slot of the generator update within a step


@dataclass
class ChunkResult:
    """What one compiled call reports back."""

    start_step: int
    completed: int  # generator steps completed (updates applied or skipped)
    metrics: np.ndarray  # [completed, len(METRICS)]
    bad_step: int  # first step with a non-finite quantity, -1 if none
    bad_source: str | None  # its name
    skipped: int  # updates skipped so far (on_nan=skip)
    consecutive_skips: int


class WGANGPTrainer:
    """Owns the networks, optimizers, step counter and the compiled training function."""

    def __init__(self, cfg: Config, sampler: ClassBalancedSampler) -> None:
        self.cfg = cfg
        self.sampler = sampler
        tc, mc = cfg.trainer, cfg.model
        n_features = sampler.n_features
        self.generator = build_generator(
            mc.latent_dim, n_features, mc.generator.hidden, mc.generator.negative_slope
        )
        self.critic = build_critic(
            n_features, mc.critic.hidden, mc.critic.negative_slope, mc.critic.output
        )
        self.generator_optimizer = self._optimizer(tc.generator_optimizer, "generator_adam")
        self.critic_optimizer = self._optimizer(tc.critic_optimizer, "critic_adam")
        # Build the optimizers' slots now: no variable may be created inside the loop or a cond.
        self.generator_optimizer.build(self.generator.trainable_variables)
        self.critic_optimizer.build(self.critic.trainable_variables)

        self.step = tf.Variable(0, dtype=tf.int64, trainable=False, name="step")
        self.bad_step = tf.Variable(-1, dtype=tf.int64, trainable=False, name="bad_step")
        self.bad_source = tf.Variable(-1, dtype=tf.int32, trainable=False, name="bad_source")
        self.skipped = tf.Variable(0, dtype=tf.int64, trainable=False, name="skipped")
        self.consecutive_skips = tf.Variable(0, dtype=tf.int64, trainable=False)
        self.base_seed = tf.constant(cfg.seed, dtype=tf.int64)

        self.sources: list[str] = (
            ["critic/gradient_penalty", "critic/loss"]
            + [f"critic/grad:{v.path}" for v in self.critic.trainable_variables]
            + ["generator/loss"]
            + [f"generator/grad:{v.path}" for v in self.generator.trainable_variables]
        )
        self._generator_offset = 2 + len(self.critic.trainable_variables)
        self.penalty_dtype = (
            tf.float32
            if cfg.gp.dtype == "float32"
            else tf.as_dtype(keras.config.dtype_policy().compute_dtype)
        )
        self.train_chunk = tf.function(
            self._train_chunk,
            input_signature=[
                tf.TensorSpec((), tf.int64, name="start_step"),
                tf.TensorSpec((), tf.int32, name="num_steps"),
            ],
            jit_compile=tc.jit_compile,
        )

    # -- building blocks -------------------------------------------------------------------

    def _optimizer(self, oc, name: str) -> keras.optimizers.Optimizer:
        opt = keras.optimizers.Adam(
            learning_rate=oc.lr, beta_1=oc.beta1, beta_2=oc.beta2, name=name
        )
        if self.cfg.trainer.precision == "mixed_float16":
            opt = keras.optimizers.LossScaleOptimizer(opt, name=f"{name}_loss_scale")
        return opt

    def _scaled(self, opt: keras.optimizers.Optimizer, loss: tf.Tensor) -> tf.Tensor:
        return (
            opt.scale_loss(loss) if isinstance(opt, keras.optimizers.LossScaleOptimizer) else loss
        )

    def _unscaled(self, opt: keras.optimizers.Optimizer, grads: list[tf.Tensor]) -> list[tf.Tensor]:
        if isinstance(opt, keras.optimizers.LossScaleOptimizer):
            scale = tf.cast(opt.dynamic_scale, tf.float32)
            return [g / tf.cast(scale, g.dtype) for g in grads]
        return grads

    def _labels(self, labels: tf.Tensor) -> tf.Tensor:
        return tf.one_hot(labels, N_CLASSES, dtype=tf.float32)

    def _noise(self, step: tf.Tensor, slot: int, batch: int) -> tf.Tensor:
        return tf.random.stateless_normal(
            [batch, self.cfg.model.latent_dim], step_seed(self.base_seed, step, slot)
        )

    def critic_batch(
        self, step: tf.Tensor, i: int
    ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor]:
        """The real rows, onehot labels, noise and alpha of critic iteration ``i`` at ``step``."""
        batch = self.cfg.trainer.batch_size
        real, labels = self.sampler.sample(batch, step_seed(self.base_seed, step, 8 * i))
        z = self._noise(step, 8 * i + 1, batch)
        alpha = tf.random.stateless_uniform([batch, 1], step_seed(self.base_seed, step, 8 * i + 2))
        return real, self._labels(labels), z, alpha

    @staticmethod
    def _finite(t: tf.Tensor) -> tf.Tensor:
        return tf.reduce_all(tf.math.is_finite(t))

    def _apply_if(self, ok: tf.Tensor, opt, grads, variables) -> None:
        def apply() -> tf.Tensor:
            opt.apply(grads, variables)
            return tf.constant(True)

        tf.cond(ok, apply, lambda: tf.constant(False))

    def _record(self, ok: tf.Tensor, flags: tf.Tensor, offset: int, step: tf.Tensor) -> None:
        first = self.bad_step < 0
        record = tf.logical_and(tf.logical_not(ok), first)
        source = tf.cast(tf.argmin(tf.cast(flags, tf.int32)), tf.int32) + offset
        self.bad_step.assign(tf.where(record, step, self.bad_step))
        self.bad_source.assign(tf.where(record, source, self.bad_source))

    # -- one critic update, one generator update -----------------------------------------

    def critic_quantities(self, step: tf.Tensor, i: int) -> dict[str, tf.Tensor | list]:
        """Critic iteration ``i`` at ``step`` computed but not applied (also used by forensics)."""
        gp = self.cfg.gp
        real, onehot, z, alpha = self.critic_batch(step, i)
        variables = self.critic.trainable_variables
        with tf.GradientTape() as tape:
            fake = self.generator([z, onehot], training=True)
            d_real = self.critic([real, onehot], training=True)
            d_fake = self.critic([fake, onehot], training=True)
            x_hat = losses.interpolate(real, fake, alpha)
            penalty = losses.gradient_penalty(
                lambda x: self.critic([x, onehot], training=True),
                x_hat,
                norm=gp.norm,
                eps=gp.eps,
                dtype=self.penalty_dtype,
            )
            loss = losses.critic_loss(d_real, d_fake, penalty.value, gp.weight)
            scaled = self._scaled(self.critic_optimizer, loss)
        grads = self._unscaled(self.critic_optimizer, tape.gradient(scaled, variables))
        return {
            "real": real,
            "labels": onehot,
            "loss": loss,
            "penalty": penalty,
            "grads": grads,
            "wasserstein": losses.wasserstein_estimate(d_real, d_fake),
        }

    def critic_update(self, step: tf.Tensor, i: int, allowed: tf.Tensor) -> tuple[tf.Tensor, ...]:
        q = self.critic_quantities(step, i)
        penalty, loss, grads = q["penalty"], q["loss"], q["grads"]
        flags = tf.stack(
            [self._finite(penalty.value), self._finite(loss)] + [self._finite(g) for g in grads]
        )
        ok = tf.reduce_all(flags)
        self._record(ok, flags, 0, step)
        variables = self.critic.trainable_variables
        self._apply_if(tf.logical_and(ok, allowed), self.critic_optimizer, grads, variables)
        return ok, loss, penalty.value, q["wasserstein"], penalty.norms, penalty.zero_rows

    def generator_update(self, step: tf.Tensor, allowed: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        batch = self.cfg.trainer.batch_size
        _, labels = self.sampler.sample(batch, step_seed(self.base_seed, step, _GENERATOR_SLOT))
        onehot = self._labels(labels)
        z = self._noise(step, _GENERATOR_SLOT + 1, batch)
        variables = self.generator.trainable_variables
        with tf.GradientTape() as tape:
            fake = self.generator([z, onehot], training=True)
            loss = losses.generator_loss(self.critic([fake, onehot], training=True))
            scaled = self._scaled(self.generator_optimizer, loss)
        grads = self._unscaled(self.generator_optimizer, tape.gradient(scaled, variables))
        flags = tf.stack([self._finite(loss)] + [self._finite(g) for g in grads])
        ok = tf.reduce_all(flags)
        self._record(ok, flags, self._generator_offset, step)
        self._apply_if(tf.logical_and(ok, allowed), self.generator_optimizer, grads, variables)
        return ok, loss

    def generator_step(self, step: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """n_critic critic updates then one generator update; returns (all finite, metrics [M])."""
        n_critic = self.cfg.trainer.n_critic
        skip = self.cfg.trainer.on_nan == "skip"
        healthy = tf.constant(True)
        c_loss, pen, w, zero = [], [], [], []
        norm_sum, norm_min = tf.constant(0.0), tf.constant(np.inf, tf.float32)
        for i in range(n_critic):
            # After a bad update (raise/stop), later updates of this step are not applied.
            ok, loss, penalty, west, norms, zero_rows = self.critic_update(
                step, i, tf.constant(True) if skip else healthy
            )
            healthy = tf.logical_and(healthy, ok)
            c_loss.append(loss)
            pen.append(penalty)
            w.append(west)
            zero.append(zero_rows)
            norm_sum += tf.reduce_mean(norms)
            norm_min = tf.minimum(norm_min, tf.reduce_min(norms))
        g_ok, g_loss = self.generator_update(step, tf.constant(True) if skip else healthy)
        healthy = tf.logical_and(healthy, g_ok)
        metrics = tf.stack(
            [
                tf.reduce_mean(tf.stack(c_loss)),
                g_loss,
                tf.reduce_mean(tf.stack(pen)),
                tf.reduce_mean(tf.stack(w)),
                norm_sum / n_critic,
                norm_min,
                tf.cast(tf.add_n(zero), tf.float32),
            ]
        )
        return healthy, metrics

    def _train_chunk(self, start_step: tf.Tensor, num_steps: tf.Tensor) -> tuple[tf.Tensor, ...]:
        capacity = self.cfg.trainer.steps_per_call
        skip = self.cfg.trainer.on_nan == "skip"
        max_skips = tf.constant(self.cfg.trainer.max_consecutive_skips, tf.int64)
        buffer = tf.zeros([capacity, len(METRICS)], tf.float32)
        completed = tf.constant(0, tf.int32)
        for i in tf.range(num_steps):
            step = start_step + tf.cast(i, tf.int64)
            healthy, metrics = self.generator_step(step)
            buffer = tf.tensor_scatter_nd_update(buffer, [[i]], [metrics])
            if healthy:
                completed += 1
                self.step.assign(step + 1)
                self.consecutive_skips.assign(0)
            elif skip:
                completed += 1
                self.step.assign(step + 1)
                self.skipped.assign_add(1)
                self.consecutive_skips.assign_add(1)
                if self.consecutive_skips >= max_skips:
                    break
            else:
                break
        return buffer, completed

    # -- host side -------------------------------------------------------------------------

    def run(self, num_steps: int) -> ChunkResult:
        """Run up to ``num_steps`` (<= steps_per_call) generator steps from the current step."""
        start = int(self.step.numpy())
        num_steps = min(int(num_steps), self.cfg.trainer.steps_per_call)
        buffer, completed = self.train_chunk(
            tf.constant(start, tf.int64), tf.constant(num_steps, tf.int32)
        )
        completed = int(completed)
        bad = int(self.bad_step.numpy())
        source = self.sources[int(self.bad_source.numpy())] if bad >= 0 else None
        # On a break, the failing step's metrics row is kept: it shows what went non-finite.
        rows = completed + (1 if bad >= start and completed < num_steps else 0)
        return ChunkResult(
            start_step=start,
            completed=completed,
            metrics=buffer.numpy()[:rows],
            bad_step=bad,
            bad_source=source,
            skipped=int(self.skipped.numpy()),
            consecutive_skips=int(self.consecutive_skips.numpy()),
        )

    def checkpoint(self) -> tf.train.Checkpoint:
        """Everything a resumed run needs: weights, both optimizers, the step (= RNG state)."""
        return tf.train.Checkpoint(
            generator=self.generator,
            critic=self.critic,
            generator_optimizer=self.generator_optimizer,
            critic_optimizer=self.critic_optimizer,
            step=self.step,
            skipped=self.skipped,
        )

    def tracing_count(self) -> int:
        """How many times the training function was traced (1 after any number of calls)."""
        return int(self.train_chunk.experimental_get_tracing_count())
