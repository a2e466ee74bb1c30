"""The WGAN-GP training loop: K generator steps per compiled call, guarded against NaN.

One call of the compiled function runs up to ``steps_per_call`` generator steps in a ``tf.range``
loop; each generator step does ``n_critic`` critic updates then one generator update. Batches are
drawn in the graph (:mod:`wgangp.sampler`), metrics come back once per call as a [K, M] tensor.
A step's random inputs depend on its number alone, never on the weights, so the loop draws step
s+1's while step s trains (:class:`StepBatches`): the same numbers, off the critical path
(except with one step per call, where there is no next step to draw).

Before every update the step checks in the graph that the losses and every gradient are finite;
a bad update is never applied, so the weights stay the last good ones. The first bad quantity is
recorded (step, update and name) for the NaN forensics.

Mixed float16 needs one distinction. LossScaleOptimizer multiplies the loss by a large scale, so
an overflowing (inf) gradient is routine: the optimizer skips that update and halves the scale.
Such an update is counted in ``scale_skips``, not called a failure, when the loss and the penalty
are finite, the penalty's norm has a finite gradient, and the scale is still above 1 (at a scale
<= 1 nothing is amplified, so a non-finite gradient is not an overflow). The eps trap is caught
directly: when the configured norm's gradient is non-finite at a zero-norm row in the penalty
dtype (``tf_norm``; ``safe_sqrt`` in float16, where eps=1e-12 rounds to 0), any row whose norm
is exactly 0 marks ``critic/gradient_penalty/norm_gradient`` as non-finite, whatever the scale.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import keras
import numpy as np
import tensorflow as tf

from wgangp.config import Config
from wgangp.model import losses
from wgangp.model.networks import N_CLASSES, build_critic, build_generator
from wgangp.model.optimizers import FusedAdam
from wgangp.sampler import (
    ClassBalancedSampler,
    random_alg,
    stateless_standard_normal,
    step_seed,
)

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


class StepBatches(NamedTuple):
    """Every random input of one generator step, drawn ahead by the training loop.

    They are a pure function of (seed, step), so drawing them one step early changes no number.
    It changes when they are computed: XLA runs a while loop's iterations one after another, and
    a step is a dependent chain of updates that leaves the second core idle about a third of the
    time; drawn in the previous iteration, the sampling and noise run in that idle time.
    """

    critic: tuple[tuple[tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor], ...]  # per critic iteration
    generator: tuple[tf.Tensor, tf.Tensor]  # the generator update's onehot labels and noise


class CriticInputs(NamedTuple):
    """One critic iteration's batch: real rows, onehot labels, noise, alpha, and G's rows."""

    real: tf.Tensor
    onehot: tf.Tensor
    z: tf.Tensor
    alpha: tf.Tensor
    fake: tf.Tensor


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
    bad_update: int = -1  # critic iteration of the first bad update; n_critic: the generator's
    scale_skips: int = 0  # loss-scale overflows handed to LossScaleOptimizer (mixed_float16)
    loss_scale: float | None = None  # the critic's current loss scale (mixed_float16)


#: The source name of the penalty's norm gradient (non-finite at a zero-norm row).
NORM_GRADIENT = "critic/gradient_penalty/norm_gradient"


def norm_gradient_singular_at_zero(norm: str, eps: float, dtype: tf.DType) -> bool:
    """Whether ``norm``'s gradient at an all-zero row is non-finite when computed in ``dtype``."""
    g = tf.zeros([1, 2], dtype)
    with tf.GradientTape() as tape:
        tape.watch(g)
        value = tf.reduce_sum(losses.row_norm(g, norm, eps))
    return not bool(np.isfinite(tape.gradient(value, g).numpy()).all())


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
        self.bad_update = tf.Variable(-1, dtype=tf.int32, trainable=False, name="bad_update")
        self.scale_skips = tf.Variable(0, dtype=tf.int64, trainable=False, name="scale_skips")
        self.base_seed = tf.constant(cfg.seed, dtype=tf.int64)
        self.random_alg = random_alg(tc.jit_compile)

        self.sources: list[str] = (
            ["critic/gradient_penalty", "critic/loss", NORM_GRADIENT]
            + [f"critic/grad:{v.path}" for v in self.critic.trainable_variables]
            + ["generator/loss"]
            + [f"generator/grad:{v.path}" for v in self.generator.trainable_variables]
        )
        self._generator_offset = 3 + len(self.critic.trainable_variables)
        self.penalty_dtype = (
            tf.float32
            if cfg.gp.dtype == "float32"
            else tf.as_dtype(keras.config.dtype_policy().compute_dtype)
        )
        self.loss_scaling = tc.precision == "mixed_float16"
        self.norm_singular_at_zero = norm_gradient_singular_at_zero(
            cfg.gp.norm, cfg.gp.eps, self.penalty_dtype
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
        opt = FusedAdam(learning_rate=oc.lr, beta_1=oc.beta1, beta_2=oc.beta2, name=name)
        if self.cfg.trainer.precision == "mixed_float16":
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

    def _labels(self, labels: tf.Tensor) -> tf.Tensor:
        return tf.one_hot(labels, N_CLASSES, dtype=tf.float32)

    def _noise(self, step: tf.Tensor, slot: int, batch: int) -> tf.Tensor:
        return stateless_standard_normal(
            [batch, self.cfg.model.latent_dim],
            step_seed(self.base_seed, step, slot),
            self.random_alg,
        )

    def critic_batch(
        self, step: tf.Tensor, i: int
    ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor]:
        """The real rows, onehot labels, noise and alpha of critic iteration ``i`` at ``step``."""
        batch = self.cfg.trainer.batch_size
        real, labels = self.sampler.sample(
            batch, step_seed(self.base_seed, step, 8 * i), self.random_alg
        )
        z = self._noise(step, 8 * i + 1, batch)
        alpha = tf.random.stateless_uniform(
            [batch, 1], step_seed(self.base_seed, step, 8 * i + 2), alg=self.random_alg
        )
        return real, self._labels(labels), z, alpha

    @staticmethod
    def _watch_only(tape: tf.GradientTape, variables: list) -> None:
        """Watch ``variables`` alone: no gradient work for weights this update does not change."""
        tape.watch([v.value for v in variables])  # the tf.Variable under each Keras variable

    @staticmethod
    def _finite(t: tf.Tensor) -> tf.Tensor:
        return tf.reduce_all(tf.math.is_finite(t))

    def _apply_if(self, ok: tf.Tensor, opt, grads, variables) -> None:
        def apply() -> tf.Tensor:
            opt.apply(grads, variables)
            return tf.constant(True)

        tf.cond(ok, apply, lambda: tf.constant(False))

    def _record(
        self, ok: tf.Tensor, flags: tf.Tensor, offset: int, step: tf.Tensor, update: int
    ) -> None:
        first = self.bad_step < 0
        record = tf.logical_and(tf.logical_not(ok), first)
        source = tf.cast(tf.argmin(tf.cast(flags, tf.int32)), tf.int32) + offset
        self.bad_step.assign(tf.where(record, step, self.bad_step))
        self.bad_source.assign(tf.where(record, source, self.bad_source))
        self.bad_update.assign(tf.where(record, tf.constant(update, tf.int32), self.bad_update))

    def norm_gradient_finite(self, norms: tf.Tensor) -> tf.Tensor:
        """False when a row's norm is exactly 0 and the norm's gradient is undefined there."""
        if not self.norm_singular_at_zero:
            return tf.constant(True)
        return tf.reduce_all(norms > 0)

    def _judge(
        self, opt, head: list[tf.Tensor], grads: list[tf.Tensor], offset: int, step, update: int
    ) -> tf.Tensor:
        """Whether the update may go to the optimizer; records the first non-finite quantity.

        ``head`` are the scalar checks (losses, penalty, norm gradient) whose failure no loss
        scale explains; ``grads`` the unscaled gradients. One finite sum of all gradients
        proves every element finite (a NaN or inf anywhere makes the sum NaN or inf), so only
        a sum that is not finite pays for the per-tensor judgement (:meth:`_judge_each`), which
        also clears the rare finite gradients whose sum overflows. Under XLA the per-tensor
        checks fuse into the step's kernels, and the branch would cost more (A/B: -10%).
        """
        if self.cfg.trainer.jit_compile:
            return self._judge_each(opt, head, grads, offset, step, update)
        total = tf.add_n([tf.reduce_sum(tf.cast(g, tf.float32)) for g in grads])
        quick = tf.logical_and(tf.reduce_all(tf.stack(head)), tf.math.is_finite(total))
        return tf.cond(
            quick,
            lambda: tf.constant(True),
            lambda: self._judge_each(opt, head, grads, offset, step, update),
        )

    def _judge_each(
        self, opt, head: list[tf.Tensor], grads: list[tf.Tensor], offset: int, step, update: int
    ) -> tf.Tensor:
        """:meth:`_judge` tensor by tensor: names the first bad one, tells overflows apart."""
        grad_flags = [self._finite(g) for g in grads]
        flags = tf.stack(head + grad_flags)
        ok = tf.reduce_all(flags)
        overflow = tf.constant(False)
        if isinstance(opt, keras.optimizers.LossScaleOptimizer):
            scale = tf.cast(opt.dynamic_scale, tf.float32)
            overflow = tf.logical_and(
                tf.logical_and(tf.reduce_all(tf.stack(head)), tf.logical_not(ok)), scale > 1.0
            )
            self.scale_skips.assign_add(tf.cast(overflow, tf.int64))
            ok = tf.logical_or(ok, overflow)
        self._record(ok, flags, offset, step, update)
        return ok

    # -- one critic update, one generator update -----------------------------------------

    def draw_step(self, step: tf.Tensor) -> StepBatches:
        """All random inputs of generator step ``step`` (see :class:`StepBatches`)."""
        n_critic = self.cfg.trainer.n_critic
        critic = tuple(tuple(self.critic_batch(step, i)) for i in range(n_critic))
        return StepBatches(critic, tuple(self.generator_batch(step)))

    def critic_inputs(self, drawn: Sequence) -> list[CriticInputs]:
        """A step's critic batches (``StepBatches.critic``), their fake rows from ONE G call.

        G does not change during the critic iterations, so its rows for every iteration come
        from one batched call (same math, rows are independent; fewer, larger matmuls).
        """
        n_critic = self.cfg.trainer.n_critic
        z = tf.concat([d[2] for d in drawn], 0)
        onehot = tf.concat([d[1] for d in drawn], 0)
        fakes = tf.split(self.generator([z, onehot], training=True), n_critic)
        return [CriticInputs(*d, fake) for d, fake in zip(drawn, fakes, strict=True)]

    def critic_quantities(
        self, step: tf.Tensor, i: int, inputs: CriticInputs | None = None
    ) -> dict[str, tf.Tensor | list]:
        """Critic iteration ``i`` at ``step`` computed but not applied (also used by forensics).

        ``inputs`` are the iteration's batch and fake rows when already drawn (by the step).
        """
        gp = self.cfg.gp
        if inputs is None:
            real, onehot, z, alpha = self.critic_batch(step, i)
            fake = self.generator([z, onehot], training=True)
        else:
            real, onehot, _, alpha, fake = inputs
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
                norm=gp.norm,
                eps=gp.eps,
                dtype=self.penalty_dtype,
            )
            loss = losses.critic_loss(d_real, d_fake, penalty.value, gp.weight)
            scaled = self._scaled(self.critic_optimizer, loss)
        scaled_grads = tape.gradient(scaled, variables)
        return {
            "real": real,
            "labels": onehot,
            "loss": loss,
            "penalty": penalty,
            "norm_gradient_finite": self.norm_gradient_finite(penalty.norms),
            "grads": self._unscaled(self.critic_optimizer, scaled_grads),
            "scaled_grads": scaled_grads,
            "wasserstein": losses.wasserstein_estimate(d_real, d_fake),
        }

    def replay_critic_iteration(self, step: int, i: int) -> dict[str, tf.Tensor | list]:
        """Critic iteration ``i`` of ``step`` recomputed by the kernels training used (forensics).

        An XLA-compiled run draws with Threefry (:func:`wgangp.sampler.random_alg`), which TF's
        own kernels lack, so its batch is drawn again under XLA; otherwise eagerly (same kernels).
        Run on the weights the guard kept, it sees what the failing iteration saw.
        """
        step_t = tf.constant(step, tf.int64)
        if not self.cfg.trainer.jit_compile:
            return self.critic_quantities(step_t, i)
        return tf.function(lambda s: self.critic_quantities(s, i), jit_compile=True)(step_t)

    def critic_update(
        self, step: tf.Tensor, i: int, allowed: tf.Tensor, inputs: CriticInputs | None = None
    ) -> tuple[tf.Tensor, ...]:
        q = self.critic_quantities(step, i, inputs)
        penalty, loss = q["penalty"], q["loss"]
        head = [self._finite(penalty.value), self._finite(loss), q["norm_gradient_finite"]]
        ok = self._judge(self.critic_optimizer, head, q["grads"], 0, step, i)
        variables = self.critic.trainable_variables
        opt = self.critic_optimizer
        self._apply_if(tf.logical_and(ok, allowed), opt, q["scaled_grads"], variables)
        return ok, loss, penalty.value, q["wasserstein"], penalty.norms, penalty.zero_rows

    def generator_batch(self, step: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """The onehot labels and noise of the generator update at ``step``."""
        batch = self.cfg.trainer.batch_size
        seed = step_seed(self.base_seed, step, _GENERATOR_SLOT)
        _, labels = self.sampler.sample(batch, seed, self.random_alg)
        return self._labels(labels), self._noise(step, _GENERATOR_SLOT + 1, batch)

    def generator_quantities(self, batch: Sequence) -> dict[str, tf.Tensor | list]:
        """The generator update on ``batch`` (``StepBatches.generator``), computed not applied."""
        onehot, z = batch
        variables = self.generator.trainable_variables
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            self._watch_only(tape, variables)  # G only: no gradients for the critic's weights
            fake = self.generator([z, onehot], training=True)
            loss = losses.generator_loss(self.critic([fake, onehot], training=True))
            scaled = self._scaled(self.generator_optimizer, loss)
        scaled_grads = tape.gradient(scaled, variables)
        grads = self._unscaled(self.generator_optimizer, scaled_grads)
        return {"loss": loss, "grads": grads, "scaled_grads": scaled_grads}

    def generator_update(
        self, step: tf.Tensor, allowed: tf.Tensor, batch: Sequence
    ) -> tuple[tf.Tensor, tf.Tensor]:
        q = self.generator_quantities(batch)
        opt, variables = self.generator_optimizer, self.generator.trainable_variables
        offset, update = self._generator_offset, self.cfg.trainer.n_critic
        ok = self._judge(opt, [self._finite(q["loss"])], q["grads"], offset, step, update)
        self._apply_if(tf.logical_and(ok, allowed), opt, q["scaled_grads"], variables)
        return ok, q["loss"]

    def generator_step(
        self, step: tf.Tensor, batches: StepBatches | None = None
    ) -> tuple[tf.Tensor, tf.Tensor]:
        """n_critic critic updates then one generator update; returns (all finite, metrics [M]).

        ``batches`` are the step's random inputs when drawn ahead; else they are drawn here.
        """
        n_critic = self.cfg.trainer.n_critic
        if batches is None:
            batches = self.draw_step(step)
        skip = self.cfg.trainer.on_nan == "skip"
        healthy = tf.constant(True)
        c_loss, pen, w, zero = [], [], [], []
        norm_sum, norm_min = tf.constant(0.0), tf.constant(np.inf, tf.float32)
        for i, inputs in enumerate(self.critic_inputs(batches.critic)):
            # After a bad update (raise/stop), later updates of this step are not applied.
            ok, loss, penalty, west, norms, zero_rows = self.critic_update(
                step, i, tf.constant(True) if skip else healthy, inputs
            )
            healthy = tf.logical_and(healthy, ok)
            c_loss.append(loss)
            pen.append(penalty)
            w.append(west)
            zero.append(zero_rows)
            norm_sum += tf.reduce_mean(norms)
            norm_min = tf.minimum(norm_min, tf.reduce_min(norms))
        allowed = tf.constant(True) if skip else healthy
        g_ok, g_loss = self.generator_update(step, allowed, batches.generator)
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
        # A call of one step would throw a step drawn ahead away: without it, one step per call
        # ran 6-13% faster at the paper's size. With K > 1 only the last of K + 1 draws is
        # wasted; a tf.cond to skip it cost 6-8% under XLA (interleaved A/Bs, 2026-11-24).
        draw_ahead = capacity > 1
        drawn = self.draw_step(start_step)
        for i in tf.range(num_steps):
            step = start_step + tf.cast(i, tf.int64)
            healthy, metrics = self.generator_step(step, drawn)
            if draw_ahead:
                drawn = self.draw_step(step + 1)  # independent of this step: overlaps it
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
        scale = float(self.critic_optimizer.dynamic_scale.numpy()) if self.loss_scaling else None
        # On a break (raise/stop), the failing step's metrics row is kept: it shows what went
        # non-finite. Under skip every executed step, skipped or not, is already counted.
        broke = self.cfg.trainer.on_nan != "skip" and bad >= start and completed < num_steps
        rows = completed + (1 if broke else 0)
        return ChunkResult(
            start_step=start,
            completed=completed,
            metrics=buffer.numpy()[:rows],
            bad_step=bad,
            bad_source=source,
            skipped=int(self.skipped.numpy()),
            consecutive_skips=int(self.consecutive_skips.numpy()),
            bad_update=int(self.bad_update.numpy()),
            scale_skips=int(self.scale_skips.numpy()),
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
            scale_skips=self.scale_skips,
        )

    def tracing_count(self) -> int:
        """How many times the training function was traced (1 after any number of calls)."""
        return int(self.train_chunk.experimental_get_tracing_count())
