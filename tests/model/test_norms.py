"""The four row norms: values, first- and second-order gradients at and away from a zero row."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from wgangp.model import losses
from wgangp.step.guard import norm_gradient_singular_at_zero

SAFE = sorted(n for n in losses.ROW_NORMS if n != "tf_norm")


def _grad_of_norm(norm: str, g: tf.Tensor, eps: float = 1e-12) -> np.ndarray:
    with tf.GradientTape() as tape:
        tape.watch(g)
        value = tf.reduce_sum(losses.row_norm(g, norm, eps))
    return tape.gradient(value, g).numpy()


@pytest.mark.parametrize("norm", sorted(losses.ROW_NORMS))
def test_gradient_at_an_all_zero_row_is_nan_only_for_tf_norm(norm: str) -> None:
    g = tf.constant([[0.0, 0.0, 0.0], [3.0, 0.0, 4.0]])
    grad = _grad_of_norm(norm, g)
    np.testing.assert_allclose(grad[1], [0.6, 0.0, 0.8], rtol=1e-6)  # g / ||g||
    if norm == "tf_norm":
        assert np.isnan(grad[0]).all()
    else:
        np.testing.assert_array_equal(grad[0], 0.0)


@pytest.mark.parametrize("norm", sorted(losses.ROW_NORMS))
def test_values_and_gradients_agree_away_from_zero(norm: str) -> None:
    g = tf.random.stateless_normal([64, 30], seed=[7, 11]) * tf.constant(
        np.logspace(-3, 3, 64, dtype=np.float32)[:, None]
    )
    exact = np.linalg.norm(g.numpy().astype(np.float64), axis=-1)
    np.testing.assert_allclose(losses.row_norm(g, norm).numpy(), exact, rtol=1e-6)
    unit = g.numpy() / exact[:, None]
    np.testing.assert_allclose(_grad_of_norm(norm, g), unit, rtol=1e-5, atol=1e-7)


def _saturating_critic(w: tf.Variable):
    """D(x) = tanh(x.w): rows with |x.w| > ~9 have an input gradient of exactly 0 in float32."""
    return lambda x: tf.tanh(tf.reduce_sum(x * w, axis=-1, keepdims=True))


def _penalty_weight_gradient(norm: str) -> tuple[np.ndarray, int]:
    w = tf.Variable([0.5, -0.25, 1.0])
    x = tf.constant([[0.1, 0.2, 0.3], [100.0, 0.0, 0.0], [-0.4, 0.5, 0.2]])  # row 1 saturates
    with tf.GradientTape() as tape:
        penalty = losses.gradient_penalty(_saturating_critic(w), x, norm=norm)
    return tape.gradient(penalty.value, w).numpy(), int(penalty.zero_rows)


@pytest.mark.parametrize("norm", SAFE)
def test_second_order_gradient_through_the_penalty_is_finite_for_safe_norms(norm: str) -> None:
    grad, zero_rows = _penalty_weight_gradient(norm)
    assert zero_rows == 1
    assert np.isfinite(grad).all()
    assert np.abs(grad).sum() > 0  # the unsaturated rows still train the critic


def test_second_order_gradients_of_safe_norms_agree() -> None:
    grads = [_penalty_weight_gradient(norm)[0] for norm in SAFE]
    for other in grads[1:]:
        np.testing.assert_allclose(other, grads[0], rtol=1e-5)


def test_second_order_gradient_through_tf_norm_is_nan() -> None:
    grad, zero_rows = _penalty_weight_gradient("tf_norm")
    assert zero_rows == 1
    assert np.isnan(grad).all()


@pytest.mark.parametrize(
    ("norm", "dtype", "singular"),
    [
        ("tf_norm", tf.float32, True),
        ("safe_sqrt", tf.float32, False),
        ("safe_sqrt", tf.float16, True),  # eps = 1e-12 rounds to 0 in float16
        ("custom_gradient", tf.float16, False),
        ("double_where", tf.float16, False),
    ],
)
def test_norm_gradient_singular_at_zero(norm: str, dtype: tf.DType, singular: bool) -> None:
    """The guard's static check agrees with the gradient actually computed at a zero row."""
    assert norm_gradient_singular_at_zero(norm, 1e-12, dtype) is singular
    grad = _grad_of_norm(norm, tf.zeros([1, 4], dtype))
    assert (not np.isfinite(grad).all()) is singular
