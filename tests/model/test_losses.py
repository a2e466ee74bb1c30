"""The penalty and losses against hand-computed values (TF-GAN style)."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from wgangp.config import GP_NORMS
from wgangp.model import losses


def linear_critic(w: tf.Tensor):
    """f(x) = w.x: its input gradient is w everywhere, so the penalty is (||w|| - 1)^2."""
    return lambda x: tf.reduce_sum(x * w, axis=-1, keepdims=True)


def test_every_norm_the_schema_accepts_has_an_implementation() -> None:
    assert set(losses.ROW_NORMS) == set(GP_NORMS)


@pytest.mark.parametrize("norm", sorted(losses.ROW_NORMS))
def test_penalty_of_linear_critic_is_known(norm: str) -> None:
    w = tf.constant([3.0, 4.0])  # ||w|| = 5 -> penalty (5 - 1)^2 = 16
    x = tf.random.stateless_normal([7, 2], seed=[1, 2])
    result = losses.gradient_penalty(linear_critic(w), x, norm=norm, eps=1e-12)
    np.testing.assert_allclose(result.value.numpy(), 16.0, rtol=1e-6)
    np.testing.assert_allclose(result.norms.numpy(), np.full(7, 5.0), rtol=1e-6)
    assert int(result.zero_rows) == 0


def test_zero_gradient_rows_are_counted_and_stay_finite() -> None:
    w = tf.Variable([0.0, 0.0])  # a dead critic: input gradient exactly zero
    x = tf.ones([4, 2])
    with tf.GradientTape() as tape:
        result = losses.gradient_penalty(linear_critic(w), x, norm="safe_sqrt")
    grad = tape.gradient(result.value, w)
    assert int(result.zero_rows) == 4
    np.testing.assert_allclose(result.value.numpy(), (1e-6 - 1.0) ** 2, rtol=1e-6)
    assert np.isfinite(grad.numpy()).all()


def test_tf_norm_gradient_at_zero_is_nan_and_safe_norms_are_not() -> None:
    g = tf.zeros([1, 3])
    for name, fn in losses.ROW_NORMS.items():
        with tf.GradientTape() as tape:
            tape.watch(g)
            value = tf.reduce_sum(fn(g, 1e-12))
        grad = tape.gradient(value, g).numpy()
        if name == "tf_norm":
            assert np.isnan(grad).all(), "the naive norm is the bug this project reproduces"
        else:
            assert np.isfinite(grad).all(), name
            np.testing.assert_allclose(grad, 0.0, atol=1e-6)


def test_penalty_gradient_reaches_the_critic_weights() -> None:
    """lambda 0 vs 10 must change the weight gradient: the inner tape is recorded by the outer."""
    w = tf.Variable([3.0, 4.0])
    x = tf.random.stateless_normal([5, 2], seed=[3, 4])

    def weight_grad(weight: float) -> np.ndarray:
        with tf.GradientTape() as tape:
            d = linear_critic(w)(x)
            pen = losses.gradient_penalty(linear_critic(w), x).value
            loss = losses.critic_loss(d, -d, pen, weight)
        return tape.gradient(loss, w).numpy()

    without, with_penalty = weight_grad(0.0), weight_grad(10.0)
    # d/dw of 10 * (||w|| - 1)^2 = 10 * 2 * (5 - 1) * w / 5 = 16 * w
    np.testing.assert_allclose(with_penalty - without, 16.0 * np.array([3.0, 4.0]), rtol=1e-5)


def test_float16_eps_rounds_to_zero() -> None:
    """Why the penalty is computed in float32: 1e-12 does not exist in float16."""
    assert float(tf.cast(1e-12, tf.float16)) == 0.0
    g = tf.zeros([1, 3], tf.float16)
    with tf.GradientTape() as tape:
        tape.watch(g)
        value = tf.reduce_sum(losses.safe_sqrt_norm(g, 1e-12))
    assert not np.isfinite(tape.gradient(value, g).numpy()).all()


def test_critic_and_generator_losses() -> None:
    d_real, d_fake = tf.constant([[1.0], [3.0]]), tf.constant([[0.0], [-2.0]])
    assert float(losses.critic_loss(d_real, d_fake, tf.constant(0.5), 10.0)) == pytest.approx(2.0)
    assert float(losses.generator_loss(d_fake)) == pytest.approx(1.0)
    assert float(losses.wasserstein_estimate(d_real, d_fake)) == pytest.approx(3.0)


def test_interpolate_is_between_real_and_fake() -> None:
    real, fake = tf.zeros([2, 3]), tf.ones([2, 3])
    alpha = tf.constant([[0.25], [1.0]])
    np.testing.assert_allclose(losses.interpolate(real, fake, alpha).numpy()[:, 0], [0.25, 1.0])
