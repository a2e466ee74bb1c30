"""The WGAN-GP training step, compiled: K generator steps per call, every update guarded.

One call of the compiled function runs up to ``steps_per_call`` generator steps in a ``tf.range``
loop; each generator step does ``n_critic`` critic updates then one generator update. Batches are
drawn in the graph (:mod:`wgangp.step.batch`), metrics come back once per call as a [K, M]
tensor. A step's random inputs depend on its number alone, never on the weights, so the loop
draws step s+1's while step s trains: the same numbers, off the critical path (except with one
step per call, where there is no next step to draw). Before every update the NaN guard
(:mod:`wgangp.step.guard`) decides whether it may be applied.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import keras
import numpy as np
import tensorflow as tf

from wgangp.config import GPConfig, ModelConfig, OptimizerConfig, TrainerConfig
from wgangp.model import losses
from wgangp.model.networks import build_critic, build_generator, pack_rows
from wgangp.model.optimizers import FusedAdam
from wgangp.step.batch import (
    BatchDrawer,
    ClassBalancedRows,
    CriticBatch,
    GeneratorBatch,
    StepBatches,
)
from wgangp.step.guard import NanGuard, finite, norm_gradient_singular_at_zero


class StepMetrics(NamedTuple):
    """What one generator step reports, in the order of a metrics row (one column each)."""

    critic_loss: float
    generator_loss: float
    gradient_penalty: float
    wasserstein_estimate: float
    grad_norm_mean: float
    grad_norm_min: float
    zero_grad_rows: float


#: The metric names, in the column order of every metrics row and of ``metrics.csv``.
METRICS: tuple[str, ...] = StepMetrics._fields


class CriticInputs(NamedTuple):
    """One critic iteration's batch and the generator's fake rows for it."""

    real: tf.Tensor
    onehot: tf.Tensor
    z: tf.Tensor
    alpha: tf.Tensor
    fake: tf.Tensor


class CriticQuantities(NamedTuple):
    """A critic update computed but not applied (the step applies it; forensics inspect it)."""

    real: tf.Tensor
    onehot: tf.Tensor
    loss: tf.Tensor
    penalty: losses.Penalty
    norm_gradient_finite: tf.Tensor
    grads: list  # unscaled: what the guard and forensics judge
    scaled_grads: list  # what the optimizer applies (loss-scaled under mixed_float16)
    wasserstein: tf.Tensor


class GeneratorQuantities(NamedTuple):
    """The generator update computed but not applied."""

    loss: tf.Tensor
    grads: list
    scaled_grads: list


@dataclass
class ChunkResult:
    """What one compiled call reports back."""

    start_step: int
    completed: int  # generator steps completed (updates applied or skipped)
    metrics: np.ndarray  # [completed, len(METRICS)], plus the failing step's row after a break
    bad_step: int  # first step with a non-finite quantity, -1 if none
    bad_source: str | None  # its name
    skipped: int  # updates skipped so far (on_nan=skip)
    consecutive_skips: int
    bad_update: int = -1  # critic iteration of the first bad update; n_critic: the generator's
    scale_skips: int = 0  # loss-scale overflows handed to LossScaleOptimizer (mixed_float16)
    loss_scale: float | None = None  # the critic's current loss scale (mixed_float16)

    def last(self) -> StepMetrics | None:
        """The last reported step's metrics, by name."""
        return StepMetrics(*self.metrics[-1].tolist()) if len(self.metrics) else None


class WGANGPTrainer:
    """Owns the networks, optimizers, step counter and the compiled training function."""

    #: Devices the batch is split over (the mirrored trainer's replicas).
    replicas = 1

    def __init__(
        self,
        model: ModelConfig,
        gp: GPConfig,
        trainer: TrainerConfig,
        *,
        seed: int,
        rows: ClassBalancedRows,
    ) -> None:
        self.gp = gp
        self.tc = trainer
        n_features = rows.n_features
        self.generator = build_generator(
            model.latent_dim, n_features, model.generator.hidden, model.generator.negative_slope
        )
        critic = model.critic
        self.pac = critic.pac
        self.critic = build_critic(
            n_features, critic.hidden, critic.negative_slope, critic.output, critic.pac
        )
        self.loss_scaling = trainer.precision == "mixed_float16"
        self.generator_optimizer = self._optimizer(trainer.generator_optimizer, "generator_adam")
        self.critic_optimizer = self._optimizer(trainer.critic_optimizer, "critic_adam")
        # Build the optimizers' slots now: no variable may be created inside the loop or a cond.
        self.generator_optimizer.build(self.generator.trainable_variables)
        self.critic_optimizer.build(self.critic.trainable_variables)

        self.step = tf.Variable(0, dtype=tf.int64, trainable=False, name="step")
        self.skipped = tf.Variable(0, dtype=tf.int64, trainable=False, name="skipped")
        self.consecutive_skips = tf.Variable(0, dtype=tf.int64, trainable=False)
        self.batches = BatchDrawer(rows, trainer, latent_dim=model.latent_dim, seed=seed)
        self.penalty_dtype = (
            tf.float32
            if gp.dtype == "float32"
            else tf.as_dtype(keras.config.dtype_policy().compute_dtype)
        )
        self.guard = NanGuard(
            self.critic.trainable_variables,
            self.generator.trainable_variables,
            norm_singular_at_zero=norm_gradient_singular_at_zero(
                gp.norm, gp.eps, self.penalty_dtype
            ),
            per_tensor=trainer.jit_compile,
        )
        self.train_chunk = tf.function(
            self._train_chunk,
            input_signature=[
                tf.TensorSpec((), tf.int64, name="start_step"),
                tf.TensorSpec((), tf.int32, name="num_steps"),
            ],
            jit_compile=trainer.jit_compile,
        )

    # -- building blocks -------------------------------------------------------------------

    def _optimizer(self, oc: OptimizerConfig, name: str) -> keras.optimizers.Optimizer:
        opt = FusedAdam(learning_rate=oc.lr, beta_1=oc.beta1, beta_2=oc.beta2, name=name)
        if self.loss_scaling:
            opt = keras.optimizers.LossScaleOptimizer(opt, name=f"{name}_loss_scale")
        return opt

    def _scaled(self, opt: keras.optimizers.Optimizer, loss: tf.Tensor) -> tf.Tensor:
        return (
            opt.scale_loss(loss) if isinstance(opt, keras.optimizers.LossScaleOptimizer) else loss
        )

    def _unscaled(self, opt: keras.optimizers.Optimizer, grads: list[tf.Tensor]) -> list[tf.Tensor]:
        """The true gradients, for checks and forensics (``apply`` takes the scaled ones)."""
        if isinstance(opt, keras.optimizers.LossScaleOptimizer):
            scale = tf.cast(opt.dynamic_scale, tf.float32)
            return [g / tf.cast(scale, g.dtype) for g in grads]
        return grads

    @staticmethod
    def _watch_only(tape: tf.GradientTape, variables: list) -> None:
        """Watch ``variables`` alone: no gradient work for weights this update does not change."""
        tape.watch([v.value for v in variables])  # the tf.Variable under each Keras variable

    def _apply_if(self, ok: tf.Tensor, opt, grads, variables) -> None:
        def apply() -> tf.Tensor:
            opt.apply(grads, variables)
            return tf.constant(True)

        tf.cond(ok, apply, lambda: tf.constant(False))

    # -- one critic update, one generator update -----------------------------------------

    def critic_inputs(self, drawn: tuple[CriticBatch, ...]) -> list[CriticInputs]:
        """A step's critic batches with their fake rows, from ONE generator call.

        G does not change during the critic iterations, so its rows for every iteration come
        from one batched call (same math, rows are independent; fewer, larger matmuls).
        """
        z = tf.concat([d.z for d in drawn], 0)
        onehot = tf.concat([d.onehot for d in drawn], 0)
        fakes = tf.split(self.generator([z, onehot], training=True), len(drawn))
        return [CriticInputs(*d, fake) for d, fake in zip(drawn, fakes, strict=True)]

    def critic_quantities(
        self, step: tf.Tensor, i: int, inputs: CriticInputs | None = None
    ) -> CriticQuantities:
        """Critic iteration ``i`` at ``step`` computed but not applied (also used by forensics).

        ``inputs`` are the iteration's batch and fake rows when already drawn (by the step).
        """
        if inputs is None:
            batch = self.batches.critic_batch(step, i)
            fake = self.generator([batch.z, batch.onehot], training=True)
            inputs = CriticInputs(*batch, fake)
        pac = self.pac
        real, onehot, fake = (pack_rows(t, pac) for t in (inputs.real, inputs.onehot, inputs.fake))
        # One alpha per pack: x_hat lies on the line between a real pack and a fake pack.
        alpha = inputs.alpha[::pac]
        variables = self.critic.trainable_variables
        # G runs outside the tape: the critic loss's gradient must not flow back into G's weights.
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            self._watch_only(tape, variables)
            # Real and fake rows through the critic in one batched call (rows are independent).
            scores = self.critic(
                [tf.concat([real, fake], 0), tf.concat([onehot, onehot], 0)], training=True
            )
            d_real, d_fake = tf.split(scores, 2)
            x_hat = losses.interpolate(real, fake, alpha)
            penalty = losses.gradient_penalty(
                lambda x: self.critic([x, onehot], training=True),
                x_hat,
                norm=self.gp.norm,
                eps=self.gp.eps,
                dtype=self.penalty_dtype,
            )
            loss = losses.critic_loss(d_real, d_fake, penalty.value, self.gp.weight)
            scaled = self._scaled(self.critic_optimizer, loss)
        scaled_grads = tape.gradient(scaled, variables)
        return CriticQuantities(
            real=inputs.real,
            onehot=inputs.onehot,
            loss=loss,
            penalty=penalty,
            norm_gradient_finite=self.guard.norm_gradient_finite(penalty.norms),
            grads=self._unscaled(self.critic_optimizer, scaled_grads),
            scaled_grads=scaled_grads,
            wasserstein=losses.wasserstein_estimate(d_real, d_fake),
        )

    def replay_critic_iteration(self, step: int, i: int) -> CriticQuantities:
        """Critic iteration ``i`` of ``step`` recomputed by the kernels training used (forensics).

        An XLA-compiled run draws with Threefry (:func:`~.random_streams.random_alg`), which TF's
        own kernels lack, so its batch is drawn again under XLA; otherwise eagerly (same kernels).
        Run on the weights the guard kept, it sees what the failing iteration saw.
        """
        step_t = tf.constant(step, tf.int64)
        if not self.tc.jit_compile:
            return self.critic_quantities(step_t, i)
        return tf.function(lambda s: self.critic_quantities(s, i), jit_compile=True)(step_t)

    def critic_update(
        self, step: tf.Tensor, i: int, allowed: tf.Tensor, inputs: CriticInputs | None = None
    ) -> tuple[tf.Tensor, CriticQuantities]:
        """Critic iteration ``i``, applied if the guard and ``allowed`` agree: (ok, quantities)."""
        q = self.critic_quantities(step, i, inputs)
        head = [finite(q.penalty.value), finite(q.loss), q.norm_gradient_finite]
        ok = self.guard.judge(self.critic_optimizer, head, q.grads, 0, step, i)
        variables = self.critic.trainable_variables
        opt = self.critic_optimizer
        self._apply_if(tf.logical_and(ok, allowed), opt, q.scaled_grads, variables)
        return ok, q

    def generator_quantities(self, batch: GeneratorBatch) -> GeneratorQuantities:
        """The generator update on ``batch``, computed but not applied."""
        variables = self.generator.trainable_variables
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            self._watch_only(tape, variables)  # G only: no gradients for the critic's weights
            fake = self.generator([batch.z, batch.onehot], training=True)
            packed = [pack_rows(fake, self.pac), pack_rows(batch.onehot, self.pac)]
            loss = losses.generator_loss(self.critic(packed, training=True))
            scaled = self._scaled(self.generator_optimizer, loss)
        scaled_grads = tape.gradient(scaled, variables)
        grads = self._unscaled(self.generator_optimizer, scaled_grads)
        return GeneratorQuantities(loss, grads, scaled_grads)

    def generator_update(
        self, step: tf.Tensor, allowed: tf.Tensor, batch: GeneratorBatch
    ) -> tuple[tf.Tensor, tf.Tensor]:
        """The generator update, applied when the guard and ``allowed`` agree; (ok, loss)."""
        q = self.generator_quantities(batch)
        opt, variables = self.generator_optimizer, self.generator.trainable_variables
        offset, update = self.guard.generator_offset, self.tc.n_critic
        ok = self.guard.judge(opt, [finite(q.loss)], q.grads, offset, step, update)
        self._apply_if(tf.logical_and(ok, allowed), opt, q.scaled_grads, variables)
        return ok, q.loss

    def generator_step(
        self, step: tf.Tensor, batches: StepBatches | None = None
    ) -> tuple[tf.Tensor, tf.Tensor]:
        """n_critic critic updates then one generator update; returns (all finite, metrics [M]).

        ``batches`` are the step's random inputs when drawn ahead; else they are drawn here.
        """
        if batches is None:
            batches = self.batches.draw_step(step)
        skip = self.tc.on_nan == "skip"
        healthy = tf.constant(True)
        critic: list[CriticQuantities] = []
        norm_sum, norm_min = tf.constant(0.0), tf.constant(np.inf, tf.float32)
        for i, inputs in enumerate(self.critic_inputs(batches.critic)):
            # After a bad update (raise/stop), later updates of this step are not applied.
            ok, q = self.critic_update(step, i, tf.constant(True) if skip else healthy, inputs)
            healthy = tf.logical_and(healthy, ok)
            critic.append(q)
            norm_sum += tf.reduce_mean(q.penalty.norms)
            norm_min = tf.minimum(norm_min, tf.reduce_min(q.penalty.norms))
        allowed = tf.constant(True) if skip else healthy
        g_ok, g_loss = self.generator_update(step, allowed, batches.generator)
        healthy = tf.logical_and(healthy, g_ok)
        metrics = StepMetrics(
            critic_loss=tf.reduce_mean(tf.stack([q.loss for q in critic])),
            generator_loss=g_loss,
            gradient_penalty=tf.reduce_mean(tf.stack([q.penalty.value for q in critic])),
            wasserstein_estimate=tf.reduce_mean(tf.stack([q.wasserstein for q in critic])),
            grad_norm_mean=norm_sum / len(critic),
            grad_norm_min=norm_min,
            zero_grad_rows=tf.cast(tf.add_n([q.penalty.zero_rows for q in critic]), tf.float32),
        )
        return healthy, tf.stack(list(metrics))

    def _train_chunk(self, start_step: tf.Tensor, num_steps: tf.Tensor) -> tuple[tf.Tensor, ...]:
        capacity = self.tc.steps_per_call
        skip = self.tc.on_nan == "skip"
        max_skips = tf.constant(self.tc.max_consecutive_skips, tf.int64)
        buffer = tf.zeros([capacity, len(METRICS)], tf.float32)
        completed = tf.constant(0, tf.int32)
        # With one step per call there is no next step: a step drawn ahead would be thrown away.
        # Longer calls draw one step more than they train; skipping that last draw with a
        # tf.cond costs more under XLA than the draw (docs/performance.md).
        draw_ahead = capacity > 1
        drawn = self.batches.draw_step(start_step)
        for i in tf.range(num_steps):
            step = start_step + tf.cast(i, tf.int64)
            healthy, metrics = self.generator_step(step, drawn)
            if draw_ahead:
                drawn = self.batches.draw_step(step + 1)  # independent of this step: overlaps it
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
        num_steps = min(int(num_steps), self.tc.steps_per_call)
        buffer, completed = self.train_chunk(
            tf.constant(start, tf.int64), tf.constant(num_steps, tf.int32)
        )
        completed = int(completed)
        bad, source, update = self.guard.first_bad()
        scale = float(self.critic_optimizer.dynamic_scale.numpy()) if self.loss_scaling else None
        # On a break (raise/stop), the failing step's metrics row is kept: it shows what went
        # non-finite. Under skip every executed step, skipped or not, is already counted.
        broke = self.tc.on_nan != "skip" and bad >= start and completed < num_steps
        rows = completed + (1 if broke else 0)
        return ChunkResult(
            start_step=start,
            completed=completed,
            metrics=buffer.numpy()[:rows],
            bad_step=bad,
            bad_source=source,
            skipped=int(self.skipped.numpy()),
            consecutive_skips=int(self.consecutive_skips.numpy()),
            bad_update=update,
            scale_skips=int(self.guard.scale_skips.numpy()),
            loss_scale=scale,
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
            scale_skips=self.guard.scale_skips,
        )

    def tracing_count(self) -> int:
        """How many times the training function was traced (1 after any number of calls)."""
        return int(self.train_chunk.experimental_get_tracing_count())
