"""The WGAN-GP training step, compiled: K generator steps per call, every update guarded.

One call of the compiled function runs up to ``steps_per_call`` generator steps in a ``tf.range``
loop; each generator step does ``n_critic`` critic updates then one generator update. Batches are
drawn in the graph (:mod:`wgangp.step.batch`), metrics come back once per call as a [K, M]
tensor. A step's batch (:class:`~wgangp.step.batch.StepBatch`) depends on its number alone, never
on the weights, so the loop draws step s+1's while step s trains: the same numbers, off the
critical path (except with one step per call, where there is no next step to draw). Every update
is computed by the replica strategy (:mod:`wgangp.step.replicas`: one device, or the batch split
over several) and, before it is applied, judged by the NaN guard (:mod:`wgangp.step.guard`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

import keras
import numpy as np
import tensorflow as tf

from wgangp.config import Config, GPConfig, ModelConfig, OptimizerConfig, TrainerConfig
from wgangp.model import losses
from wgangp.model.networks import build_critic, build_generator, pack_rows
from wgangp.model.optimizers import FusedAdam
from wgangp.step.batch import BatchDrawer, ClassBalancedRows, StepBatch
from wgangp.step.guard import NanGuard, NanPolicy, finite, norm_gradient_singular_at_zero
from wgangp.step.replicas import Mirrored, Replicas, SingleDevice


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


class CriticUpdate(NamedTuple):
    """A critic update computed but not applied (the step applies it; forensics inspect it)."""

    loss: tf.Tensor
    penalty: losses.Penalty
    norm_gradient_finite: tf.Tensor
    grads: list  # unscaled: what the guard and forensics judge
    scaled_grads: list  # what the optimizer applies (loss-scaled under mixed_float16)
    wasserstein: tf.Tensor


class GeneratorUpdate(NamedTuple):
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


class TrainStep:
    """The compiled training step and what it updates: the networks, both optimizers, the step
    counter and the NaN guard's records."""

    def __init__(
        self,
        model: ModelConfig,
        gp: GPConfig,
        trainer: TrainerConfig,
        *,
        seed: int,
        rows: ClassBalancedRows,
        replicas: Replicas | None = None,
    ) -> None:
        self.gp = gp
        self.tc = trainer
        self.replicas = replicas or SingleDevice()
        self.nan_policy = NanPolicy(trainer.on_nan, trainer.max_consecutive_skips)
        self.seed = seed
        with self.replicas.scope():  # variables mirrored on every replica
            self._build(model, gp, trainer, rows)
        self.batches = BatchDrawer(rows, trainer, latent_dim=model.latent_dim, seed=seed)
        self.train_chunk = tf.function(
            self._train_chunk,
            input_signature=[
                tf.TensorSpec((), tf.int64, name="start_step"),
                tf.TensorSpec((), tf.int32, name="num_steps"),
            ],
            jit_compile=trainer.jit_compile,
        )

    def _build(
        self, model: ModelConfig, gp: GPConfig, trainer: TrainerConfig, rows: ClassBalancedRows
    ) -> None:
        self._build_networks(model, rows)
        self.loss_scaling = trainer.precision == "mixed_float16"
        self.generator_optimizer = self._optimizer(trainer.generator_optimizer, "generator_adam")
        self.critic_optimizer = self._optimizer(trainer.critic_optimizer, "critic_adam")
        # Build the optimizers' slots now: no variable may be created inside the loop or a cond.
        self.generator_optimizer.build(self.generator.trainable_variables)
        self.critic_optimizer.build(self.critic.trainable_variables)
        self.step = tf.Variable(0, dtype=tf.int64, trainable=False, name="step")
        self.skipped = tf.Variable(0, dtype=tf.int64, trainable=False, name="skipped")
        self.consecutive_skips = tf.Variable(0, dtype=tf.int64, trainable=False)
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

    def _build_networks(self, model: ModelConfig, rows: ClassBalancedRows) -> None:
        """The generator, the critic and its pack size (a history step builds its own)."""
        n_features = rows.n_features
        self.generator = build_generator(
            model.latent_dim,
            n_features,
            model.generator.hidden,
            model.generator.negative_slope,
            layout=rows.layout,
            seed=self.seed,
        )
        critic = model.critic
        self.pac = critic.pac
        self.critic = build_critic(
            n_features, critic.hidden, critic.negative_slope, critic.output, critic.pac
        )

    # -- building blocks -------------------------------------------------------------------

    def _optimizer(self, oc: OptimizerConfig, name: str) -> keras.optimizers.Optimizer:
        opt = FusedAdam(learning_rate=oc.lr, beta_1=oc.beta1, beta_2=oc.beta2, name=name)
        if self.loss_scaling:
            opt = keras.optimizers.LossScaleOptimizer(opt, name=f"{name}_loss_scale")
        return opt

    @staticmethod
    def _scaled(opt: keras.optimizers.Optimizer, loss: tf.Tensor, share: float) -> tf.Tensor:
        """The loss to differentiate: this replica's ``share`` of the global mean, loss-scaled
        under mixed_float16."""
        if share != 1.0:
            loss = loss * share
        if isinstance(opt, keras.optimizers.LossScaleOptimizer):
            return opt.scale_loss(loss)
        return loss

    @staticmethod
    def _unscaled(opt: keras.optimizers.Optimizer, grads: list[tf.Tensor]) -> list[tf.Tensor]:
        """The true gradients, for checks and forensics (``apply`` takes the scaled ones)."""
        if isinstance(opt, keras.optimizers.LossScaleOptimizer):
            scale = tf.cast(opt.dynamic_scale, tf.float32)
            return [g / tf.cast(scale, g.dtype) for g in grads]
        return grads

    @staticmethod
    def _watch_only(tape: tf.GradientTape, variables: list) -> None:
        """Watch ``variables`` alone: no gradient work for weights this update does not change."""
        tape.watch([v.value for v in variables])  # the tf.Variable under each Keras variable

    # -- one step, read top to bottom --------------------------------------------------------

    def fake_rows(self, batch: StepBatch) -> tf.Tensor:
        """The generator's rows for every critic iteration [n_critic, batch, features], from ONE
        generator call: G does not change during the critic iterations, and its rows are
        independent (same math, fewer and larger matmuls)."""
        n_critic = batch.z.shape[0]
        z = tf.reshape(batch.z, [-1, batch.z.shape[-1]])
        onehot = tf.reshape(batch.onehot, [-1, batch.onehot.shape[-1]])
        fake = self.generator([z, onehot], training=True)
        return tf.reshape(fake, [n_critic, -1, fake.shape[-1]])

    def critic_update(
        self, batch: StepBatch, i: int, fakes: tf.Tensor, share: float = 1.0
    ) -> CriticUpdate:
        """Critic iteration ``i`` on ``batch`` and its fake rows, computed but not applied.

        ``share`` is this replica's share of the global batch (1 on one device).
        """
        pac = self.pac
        real, onehot, fake = (pack_rows(t, pac) for t in (batch.real[i], batch.onehot[i], fakes[i]))
        # One alpha per pack: x_hat lies on the line between a real pack and a fake pack.
        alpha = batch.alpha[i][::pac]
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
            scaled = self._scaled(self.critic_optimizer, loss, share)
        scaled_grads = tape.gradient(scaled, variables)
        return CriticUpdate(
            loss=loss,
            penalty=penalty,
            norm_gradient_finite=self.guard.norm_gradient_finite(penalty.norms),
            grads=self._unscaled(self.critic_optimizer, scaled_grads),
            scaled_grads=scaled_grads,
            wasserstein=losses.wasserstein_estimate(d_real, d_fake),
        )

    def generator_update(self, batch: StepBatch, share: float = 1.0) -> GeneratorUpdate:
        """The generator update on ``batch``'s generator labels and noise, computed but not
        applied."""
        variables = self.generator.trainable_variables
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            self._watch_only(tape, variables)  # G only: no gradients for the critic's weights
            fake = self.generator([batch.generator_z, batch.generator_onehot], training=True)
            packed = [pack_rows(fake, self.pac), pack_rows(batch.generator_onehot, self.pac)]
            loss = losses.generator_loss(self.critic(packed, training=True))
            scaled = self._scaled(self.generator_optimizer, loss, share)
        scaled_grads = tape.gradient(scaled, variables)
        grads = self._unscaled(self.generator_optimizer, scaled_grads)
        return GeneratorUpdate(loss, grads, scaled_grads)

    def generator_step(self, step: tf.Tensor, batch: StepBatch) -> tuple[tf.Tensor, tf.Tensor]:
        """One generator step on its batch; returns (every update finite, metrics [M]).

        1. The fake rows of all n_critic critic iterations, from one generator call.
        2. n_critic critic updates: each computed (on every replica), judged by the guard and
           applied only if finite (under raise/stop, not after an earlier bad one either).
        3. One generator update, judged and applied the same way.
        4. The step's metrics, averaged over the critic iterations.
        """
        replicas, skip = self.replicas, self.nan_policy.skips
        fakes = replicas.run(self.fake_rows, batch)
        critic_update = partial(self.critic_update, share=replicas.share)
        healthy = tf.constant(True)
        critic: list[CriticUpdate] = []
        norm_sum, norm_min = tf.constant(0.0), tf.constant(np.inf, tf.float32)
        for i in range(self.tc.n_critic):
            q = replicas.combine(replicas.run(critic_update, batch, i, fakes))
            head = [finite(q.penalty.value), finite(q.loss), q.norm_gradient_finite]
            ok = self.guard.judge_critic(self.critic_optimizer, head, q.grads, step, i)
            allowed = ok if skip else tf.logical_and(ok, healthy)
            replicas.apply_if(
                allowed, self.critic_optimizer, q.scaled_grads, self.critic.trainable_variables
            )
            healthy = tf.logical_and(healthy, ok)
            critic.append(q)
            norm_sum += tf.reduce_mean(q.penalty.norms)
            norm_min = tf.minimum(norm_min, tf.reduce_min(q.penalty.norms))
        generator_update = partial(self.generator_update, share=replicas.share)
        g = replicas.combine(replicas.run(generator_update, batch))
        update = self.tc.n_critic  # the generator's place in the guard's records
        g_ok = self.guard.judge_generator(
            self.generator_optimizer, finite(g.loss), g.grads, step, update
        )
        allowed = g_ok if skip else tf.logical_and(g_ok, healthy)
        replicas.apply_if(
            allowed, self.generator_optimizer, g.scaled_grads, self.generator.trainable_variables
        )
        healthy = tf.logical_and(healthy, g_ok)
        metrics = StepMetrics(
            critic_loss=tf.reduce_mean(tf.stack([q.loss for q in critic])),
            generator_loss=g.loss,
            gradient_penalty=tf.reduce_mean(tf.stack([q.penalty.value for q in critic])),
            wasserstein_estimate=tf.reduce_mean(tf.stack([q.wasserstein for q in critic])),
            grad_norm_mean=norm_sum / len(critic),
            grad_norm_min=norm_min,
            zero_grad_rows=tf.cast(tf.add_n([q.penalty.zero_rows for q in critic]), tf.float32),
        )
        return healthy, tf.stack(list(metrics))

    def _train_chunk(self, start_step: tf.Tensor, num_steps: tf.Tensor) -> tuple[tf.Tensor, ...]:
        with self.replicas.scope():  # cross-replica context while tracing
            return self._steps(start_step, num_steps)

    def _steps(self, start_step: tf.Tensor, num_steps: tf.Tensor) -> tuple[tf.Tensor, ...]:
        capacity = self.tc.steps_per_call
        skip = self.nan_policy.skips
        max_skips = tf.constant(self.nan_policy.max_consecutive_skips, tf.int64)
        buffer = tf.zeros([capacity, len(METRICS)], tf.float32)
        completed = tf.constant(0, tf.int32)
        # With one step per call there is no next step: a step drawn ahead would be thrown away.
        # Longer calls draw one step more than they train; skipping that last draw with a
        # tf.cond costs more under XLA than the draw (docs/performance.md).
        draw_ahead = capacity > 1
        batch = self.batches.draw(start_step)
        for i in tf.range(num_steps):
            step = start_step + tf.cast(i, tf.int64)
            healthy, metrics = self.generator_step(step, batch)
            if draw_ahead:
                batch = self.batches.draw(step + 1)  # independent of this step: overlaps it
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

    def advance(self, num_steps: int) -> ChunkResult:
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
        broke = not self.nan_policy.skips and bad >= start and completed < num_steps
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

    def replay_critic_iteration(self, step: int, i: int) -> tuple[CriticUpdate, StepBatch]:
        """Critic iteration ``i`` of ``step`` recomputed as training computed it (forensics): the
        step's batch drawn again, its fake rows, the update; on one device, over the whole batch.

        An XLA-compiled run draws with Threefry (:func:`~.random_streams.random_alg`), which TF's
        own kernels lack, so it is recomputed under XLA; otherwise eagerly (same kernels). Run on
        the weights the guard kept, it sees what the failing iteration saw.
        """

        def recompute(s: tf.Tensor) -> tuple[CriticUpdate, StepBatch]:
            batch = self.batches.draw(s)
            return self.critic_update(batch, i, self.fake_rows(batch)), batch

        step_t = tf.constant(step, tf.int64)
        if not self.tc.jit_compile:
            return recompute(step_t)
        return tf.function(recompute, jit_compile=True)(step_t)

    def checkpoint(self) -> tf.train.Checkpoint:
        """Everything a resumed run needs: weights, both optimizers, the step (= RNG state),
        and for a table's heads their Gumbel noise state (a Keras seed variable, which the
        generator's own checkpoint entry does not hold)."""
        extra = {}
        gumbel = [v.value for v in self.generator.variables if v.path.endswith(GUMBEL_STATE)]
        if gumbel:
            extra["gumbel_states"] = gumbel
        return tf.train.Checkpoint(
            generator=self.generator,
            critic=self.critic,
            generator_optimizer=self.generator_optimizer,
            critic_optimizer=self.critic_optimizer,
            step=self.step,
            skipped=self.skipped,
            scale_skips=self.guard.scale_skips,
            **extra,
        )

    def tracing_count(self) -> int:
        """How many times the training function was traced (1 after any number of calls)."""
        return int(self.train_chunk.experimental_get_tracing_count())


#: The name Keras gives a ``SeedGenerator``'s state variable (the output heads' Gumbel noise).
GUMBEL_STATE = "seed_generator_state"


def build_train_step(cfg: Config, rows: ClassBalancedRows) -> TrainStep:
    """The training step ``trainer.strategy`` asks for: one device (``none``), or the batch
    split over every local device (``mirrored``)."""
    replicas = (
        Mirrored.over_local_devices(cfg.trainer.batch_size, cfg.model.critic.pac)
        if cfg.trainer.strategy == "mirrored"
        else SingleDevice()
    )
    return TrainStep(cfg.model, cfg.gp, cfg.trainer, seed=cfg.seed, rows=rows, replicas=replicas)
