"""WGAN-GP losses and the gradient penalty, as pure functions of tensors.

The penalty is where the original model failed: ``tf.norm`` has gradient 0/0 = NaN at an all-zero
row, and a critic's input gradient is exactly zero wherever a tanh saturates or a unit is dead.
The default norm, ``safe_sqrt``, is sqrt(sum(g^2) + eps) computed in float32 (in float16 eps=1e-12
rounds to 0 and the NaN comes back). The other norms exist to reproduce and compare.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import tensorflow as tf


def tf_norm(g: tf.Tensor, eps: float = 0.0) -> tf.Tensor:
    """The naive per-row norm ``tf.norm(g, axis=-1)``: its gradient at a zero row is NaN."""
    del eps
    return tf.norm(g, axis=-1)


def safe_sqrt_norm(g: tf.Tensor, eps: float = 1e-12) -> tf.Tensor:
    """sqrt(sum(g^2) + eps): finite value and gradient (0) at a zero row. The default."""
    return tf.sqrt(tf.reduce_sum(tf.square(g), axis=-1) + tf.cast(eps, g.dtype))


@tf.custom_gradient
def _norm_with_zero_subgradient(g: tf.Tensor) -> tuple[tf.Tensor, Callable]:
    norm = tf.sqrt(tf.reduce_sum(tf.square(g), axis=-1))

    def grad(upstream: tf.Tensor) -> tf.Tensor:
        safe = tf.where(norm > 0, norm, tf.ones_like(norm))
        unit = tf.where((norm > 0)[..., None], g / safe[..., None], tf.zeros_like(g))
        return upstream[..., None] * unit

    return norm, grad


def custom_gradient_norm(g: tf.Tensor, eps: float = 0.0) -> tf.Tensor:
    """Exact norm with a hand-written gradient g/||g||, defined as 0 at a zero row."""
    del eps
    return _norm_with_zero_subgradient(g)


def double_where_norm(g: tf.Tensor, eps: float = 0.0) -> tf.Tensor:
    """Exact norm via the double ``tf.where``: the sqrt never sees a 0, so no 0/0 upstream."""
    del eps
    squared = tf.reduce_sum(tf.square(g), axis=-1)
    positive = squared > 0
    safe = tf.where(positive, squared, tf.ones_like(squared))
    return tf.where(positive, tf.sqrt(safe), tf.zeros_like(squared))


ROW_NORMS: dict[str, Callable[[tf.Tensor, float], tf.Tensor]] = {
    "safe_sqrt": safe_sqrt_norm,
    "tf_norm": tf_norm,
    "custom_gradient": custom_gradient_norm,
    "double_where": double_where_norm,
}


def row_norm(g: tf.Tensor, norm: str = "safe_sqrt", eps: float = 1e-12) -> tf.Tensor:
    """Per-row L2 norm of ``g`` (shape ``[batch, features]``) with the named variant."""
    try:
        fn = ROW_NORMS[norm]
    except KeyError:
        raise ValueError(f"unknown norm {norm!r}; choose one of {sorted(ROW_NORMS)}") from None
    return fn(g, eps)


class Penalty(NamedTuple):
    """The gradient penalty and the per-row statistics worth logging."""

    value: tf.Tensor  # E[(||grad||_2 - 1)^2], scalar float32
    norms: tf.Tensor  # per-row gradient norms, [batch]
    zero_rows: tf.Tensor  # rows whose input gradient is exactly zero (the NaN trigger), int32


def interpolate(real: tf.Tensor, fake: tf.Tensor, alpha: tf.Tensor) -> tf.Tensor:
    """x_hat = real + alpha * (fake - real), alpha of shape [batch, 1] drawn from U(0, 1)."""
    return real + alpha * (fake - real)


def gradient_penalty(
    critic: Callable[[tf.Tensor], tf.Tensor],
    x_hat: tf.Tensor,
    *,
    norm: str = "safe_sqrt",
    eps: float = 1e-12,
    dtype: tf.DType = tf.float32,
) -> Penalty:
    """E[(||grad_x D(x_hat)||_2 - 1)^2] with the norm taken per row.

    Call it inside the tape that differentiates the critic loss with respect to the weights: the
    inner tape here is then recorded by the outer one, and the penalty's gradient reaches the
    weights (the original code computed it outside, so it never did). ``dtype`` is the precision
    of the norm: keep float32; float16 is the trap this project reproduces on purpose.
    """
    # The inner tape needs d/dx only; not watching the weights keeps unused weight gradients
    # out of the graph. The outer tape still differentiates through it to the weights.
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(x_hat)
        scores = critic(x_hat)
    grads = tf.cast(tape.gradient(scores, x_hat), dtype)
    norms = row_norm(grads, norm, eps)
    value = tf.reduce_mean(tf.square(tf.cast(norms, tf.float32) - 1.0))
    zero_rows = tf.reduce_sum(tf.cast(tf.reduce_all(tf.equal(grads, 0), axis=-1), tf.int32))
    return Penalty(value, tf.cast(norms, tf.float32), zero_rows)


def critic_loss(
    d_real: tf.Tensor, d_fake: tf.Tensor, penalty: tf.Tensor, weight: float
) -> tf.Tensor:
    """E[D(fake)] - E[D(real)] + lambda * penalty: the critic minimizes this."""
    return tf.reduce_mean(d_fake) - tf.reduce_mean(d_real) + weight * penalty


def generator_loss(d_fake: tf.Tensor) -> tf.Tensor:
    """-E[D(G(z, y))]: the generator minimizes this."""
    return -tf.reduce_mean(d_fake)


def wasserstein_estimate(d_real: tf.Tensor, d_fake: tf.Tensor) -> tf.Tensor:
    """E[D(real)] - E[D(fake)]: the critic's estimate of the Wasserstein-1 distance."""
    return tf.reduce_mean(d_real) - tf.reduce_mean(d_fake)
