"""The NaN guard: before every update, the graph checks that the losses and every gradient are
finite; a bad update is never applied, so the weights stay the last good ones.

The first bad quantity is recorded (step, update and name) for the NaN forensics.

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

from dataclasses import dataclass
from typing import Any

import keras
import numpy as np
import tensorflow as tf

from wgangp.model import losses

#: The source name of the penalty's norm gradient (non-finite at a zero-norm row).
NORM_GRADIENT = "critic/gradient_penalty/norm_gradient"
#: The critic update's scalar checks, in the order of their flags: the penalty, the loss, the
#: norm's gradient; the gradients of the critic's variables follow.
CRITIC_HEAD = ("critic/gradient_penalty", "critic/loss", NORM_GRADIENT)


@dataclass(frozen=True)
class NanPolicy:
    """``trainer.on_nan``, interpreted here and nowhere else.

    ``raise`` and ``stop`` end training at the first non-finite update (no later update of that
    step is applied); ``raise`` then fails the run (exit 3), ``stop`` ends it FAILED with exit 0.
    ``skip`` drops each bad update and trains on, until ``max_consecutive_skips`` steps in a row
    were skipped, which then fails the run like ``raise``.
    """

    on_nan: str
    max_consecutive_skips: int

    @property
    def skips(self) -> bool:
        """Whether a bad update is dropped and training goes on (in the graph and the loop)."""
        return self.on_nan == "skip"

    @property
    def fails_run(self) -> bool:
        """Whether ending training on a NaN fails the run (an error), rather than stopping it."""
        return self.on_nan != "stop"

    def ends_training(self, bad_step: int, consecutive_skips: int) -> bool:
        """After a compiled call: whether a non-finite update ends training."""
        if bad_step < 0:
            return False
        return not self.skips or consecutive_skips >= self.max_consecutive_skips


def norm_gradient_singular_at_zero(norm: str, eps: float, dtype: tf.DType) -> bool:
    """Whether ``norm``'s gradient at an all-zero row is non-finite when computed in ``dtype``."""
    g = tf.zeros([1, 2], dtype)
    with tf.GradientTape() as tape:
        tape.watch(g)
        value = tf.reduce_sum(losses.row_norm(g, norm, eps))
    return not bool(np.isfinite(tape.gradient(value, g).numpy()).all())


def finite(t: tf.Tensor) -> tf.Tensor:
    return tf.reduce_all(tf.math.is_finite(t))


def usable(grad: tf.Tensor) -> tf.Tensor:
    """Whether ``grad`` and its square are finite. Adam keeps the square: a gradient past
    sqrt(float32 max) is finite, its square is not, Adam's second moment becomes inf, and its
    next update (``v += (g^2 - v) * (1 - beta_2)``) is inf - inf: NaN weights one step after a
    finite gradient, kept as the last good ones."""
    return finite(tf.square(tf.cast(grad, tf.float32)))


class NanGuard:
    """Decides in the graph whether an update may be applied; remembers the first bad one.

    ``per_tensor`` judges every tensor of every update (:func:`usable`). Otherwise one finite
    sum of all the gradients' squares proves every element usable (a NaN, an inf or a square
    that overflows makes the sum NaN or inf), and only a sum that is not finite pays for the
    per-tensor judgement, which also clears the rare usable gradients whose sum overflows.
    Under XLA the per-tensor checks fuse into the step's kernels and the branch would cost more
    (docs/performance.md), so XLA runs judge per tensor.
    """

    def __init__(
        self,
        critic_variables: list,
        generator_variables: list,
        *,
        norm_singular_at_zero: bool,
        per_tensor: bool,
    ) -> None:
        self.bad_step = tf.Variable(-1, dtype=tf.int64, trainable=False, name="bad_step")
        self.bad_source = tf.Variable(-1, dtype=tf.int32, trainable=False, name="bad_source")
        self.bad_update = tf.Variable(-1, dtype=tf.int32, trainable=False, name="bad_update")
        self.scale_skips = tf.Variable(0, dtype=tf.int64, trainable=False, name="scale_skips")
        #: Names of every checked quantity, in the order of the flags judged.
        self.sources: list[str] = (
            [*CRITIC_HEAD]
            + [f"critic/grad:{v.path}" for v in critic_variables]
            + ["generator/loss"]
            + [f"generator/grad:{v.path}" for v in generator_variables]
        )
        # Where the generator update's names start in ``sources``.
        self.generator_offset = len(CRITIC_HEAD) + len(critic_variables)
        self.norm_singular_at_zero = norm_singular_at_zero
        self.per_tensor = per_tensor

    def first_bad(self) -> tuple[int, str | None, int]:
        """(step, source name, update) of the first non-finite quantity; step -1 if none."""
        step = int(self.bad_step.numpy())
        source = self.sources[int(self.bad_source.numpy())] if step >= 0 else None
        return step, source, int(self.bad_update.numpy())

    def norm_gradient_finite(self, norms: tf.Tensor) -> tf.Tensor:
        """False when a row's norm is exactly 0 and the norm's gradient is undefined there."""
        if not self.norm_singular_at_zero:
            return tf.constant(True)
        return tf.reduce_all(norms > 0)

    def judge_critic(
        self, opt: Any, head: list[tf.Tensor], grads: list[tf.Tensor], step: Any, iteration: int
    ) -> tf.Tensor:
        """Whether critic iteration ``iteration``'s update may go to the optimizer.

        ``head`` are its scalar checks in the order of :data:`CRITIC_HEAD`, whose failure no
        loss scale explains; ``grads`` its unscaled gradients.
        """
        return self._judge(opt, head, grads, 0, step, iteration)

    def judge_generator(
        self, opt: Any, loss_finite: tf.Tensor, grads: list[tf.Tensor], step: Any, update: int
    ) -> tf.Tensor:
        """Whether the generator update (``update``: its place in the step) may be applied."""
        return self._judge(opt, [loss_finite], grads, self.generator_offset, step, update)

    def _judge(
        self,
        opt: Any,
        head: list[tf.Tensor],
        grads: list[tf.Tensor],
        offset: int,
        step: Any,
        update: int,
    ) -> tf.Tensor:
        """Records the first non-finite quantity; ``offset`` is where this update's names start
        in :attr:`sources`."""
        if self.per_tensor:
            return self._judge_each(opt, head, grads, offset, step, update)
        total = tf.add_n([tf.reduce_sum(tf.square(tf.cast(g, tf.float32))) for g in grads])
        quick = tf.logical_and(tf.reduce_all(tf.stack(head)), tf.math.is_finite(total))
        return tf.cond(
            quick,
            lambda: tf.constant(True),
            lambda: self._judge_each(opt, head, grads, offset, step, update),
        )

    def _judge_each(
        self,
        opt: Any,
        head: list[tf.Tensor],
        grads: list[tf.Tensor],
        offset: int,
        step: Any,
        update: int,
    ) -> tf.Tensor:
        """:meth:`_judge` tensor by tensor: names the first bad one, tells overflows apart."""
        grad_flags = [usable(g) for g in grads]
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

    def _record(
        self, ok: tf.Tensor, flags: tf.Tensor, offset: int, step: tf.Tensor, update: int
    ) -> None:
        first = self.bad_step < 0
        record = tf.logical_and(tf.logical_not(ok), first)
        source = tf.cast(tf.argmin(tf.cast(flags, tf.int32)), tf.int32) + offset
        self.bad_step.assign(tf.where(record, step, self.bad_step))
        self.bad_source.assign(tf.where(record, source, self.bad_source))
        self.bad_update.assign(tf.where(record, tf.constant(update, tf.int32), self.bad_update))
