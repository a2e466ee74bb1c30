"""Ghost clipping (:mod:`wgangp.step.ghost_clipping`) against the Jacobian that defines DP-SGD's
per-entity gradients (:mod:`wgangp.step.dp_sgd`): the same norms and clipped sums, with a tanh
output or a linear one, on rows some of which the clip bounds and some of which it does not."""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

from wgangp.model.networks import build_critic
from wgangp.step import ghost_clipping
from wgangp.step.dp_sgd import clipped_sum, entity_gradients, real_row_terms

FEATURES, LAMBDA = 5, 10.0


def _critic(output: str) -> keras.Model:
    keras.utils.set_random_seed(1)
    return build_critic(FEATURES, hidden=[7, 6], negative_slope=0.2, output=output)


def _rows(count: int, seed: int = 0) -> tuple[tf.Tensor, ...]:
    """Rows at scales from 0.01 to 10, so their gradients' norms straddle the clip."""
    rng = np.random.default_rng(seed)
    scale = np.geomspace(0.01, 10.0, count)[:, None]
    real = tf.constant(scale * rng.standard_normal((count, FEATURES)), tf.float32)
    fake = tf.constant(rng.standard_normal((count, FEATURES)), tf.float32)
    onehot = tf.one_hot(rng.integers(0, 2, count), 2)
    alpha = tf.constant(rng.random((count, 1)), tf.float32)
    return real, fake, onehot, alpha


def _jacobian(critic: keras.Model, terms, count: int, clip: float):
    per_row = entity_gradients(critic.trainable_variables, terms, tf.range(count), count)
    return clipped_sum(per_row, clip)


@pytest.mark.parametrize("output", ["linear", "tanh"])
def test_real_rows_norms_and_clipped_sum_are_the_jacobians(output: str) -> None:
    critic = _critic(output)
    real, fake, onehot, alpha = _rows(12)
    clip = 12.0  # the penalty's share puts the rows' norms between about 5 and 23
    want, want_norms = _jacobian(
        critic,
        lambda: real_row_terms(critic, real, fake, onehot, alpha, gp_weight=LAMBDA),
        12,
        clip,
    )
    dense = ghost_clipping.DenseCritic.of(critic)
    rows = ghost_clipping.real_row_gradients(dense, real, fake, onehot, alpha, gp_weight=LAMBDA)
    got, norms = ghost_clipping.clipped_sum(dense, rows, clip, tf.ones([12], tf.bool))
    assert (want_norms.numpy() < clip).any() and (want_norms.numpy() > clip).any()
    np.testing.assert_allclose(norms.numpy(), want_norms.numpy(), rtol=1e-5)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("output", ["linear", "tanh"])
def test_score_rows_norms_and_clipped_sum_are_the_jacobians(output: str) -> None:
    critic = _critic(output)
    _, fake, onehot, _ = _rows(10, seed=1)
    fake = fake * tf.constant(np.geomspace(0.1, 30.0, 10)[:, None], tf.float32)
    want, want_norms = _jacobian(critic, lambda: critic([fake, onehot])[:, 0], 10, 1.0)
    dense = ghost_clipping.DenseCritic.of(critic)
    rows = ghost_clipping.score_row_gradients(dense, fake, onehot)
    got, norms = ghost_clipping.clipped_sum(dense, rows, 1.0, tf.ones([10], tf.bool))
    np.testing.assert_allclose(norms.numpy(), want_norms.numpy(), rtol=1e-5)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-4, atol=1e-6)


def test_rows_outside_the_mask_add_exactly_nothing_whatever_they_hold() -> None:
    """Padding of NaN, inf and 1e30 in the masked-out rows: the sum is the unpadded rows' own,
    and finite."""
    critic = _critic("tanh")
    dense = ghost_clipping.DenseCritic.of(critic)
    real, fake, onehot, alpha = _rows(6, seed=2)
    alone, _ = ghost_clipping.clipped_sum(
        dense,
        ghost_clipping.real_row_gradients(dense, real, fake, onehot, alpha, gp_weight=LAMBDA),
        1.0,
        tf.ones([6], tf.bool),
    )
    junk = tf.constant([[np.nan] * FEATURES, [np.inf] * FEATURES, [1e30] * FEATURES], tf.float32)
    padded = [
        tf.concat([real, junk], 0),
        tf.concat([fake, junk], 0),
        tf.concat([onehot, tf.zeros([3, 2])], 0),
        tf.concat([alpha, tf.fill([3, 1], 0.5)], 0),
    ]
    mask = tf.constant([True] * 6 + [False] * 3)
    rows = ghost_clipping.real_row_gradients(dense, *padded, gp_weight=LAMBDA)
    summed, norms = ghost_clipping.clipped_sum(dense, rows, 1.0, mask)
    assert np.all(norms.numpy()[6:] == 0)
    for s, a in zip(summed, alone, strict=True):
        assert np.isfinite(s.numpy()).all()
        np.testing.assert_allclose(s.numpy(), a.numpy(), rtol=1e-6, atol=1e-7)


def test_a_critic_it_cannot_differentiate_by_hand_is_refused() -> None:
    x = keras.Input((FEATURES,))
    y = keras.Input((2,))
    h = keras.layers.Concatenate()([x, y])
    h = keras.layers.Dense(4)(h)
    h = keras.layers.Dropout(0.5)(h)
    dropout = keras.Model([x, y], keras.layers.Dense(1)(h))
    with pytest.raises(ValueError, match="cannot differentiate layer"):
        ghost_clipping.DenseCritic.of(dropout)
    h = keras.layers.Dense(4, activation="relu")(keras.layers.Concatenate()([x, y]))
    relu = keras.Model([x, y], keras.layers.Dense(1)(h))
    with pytest.raises(ValueError, match="cannot differentiate layer"):
        ghost_clipping.DenseCritic.of(relu)
    h = keras.layers.Dense(4)(keras.layers.Concatenate()([y, x]))  # the label first
    h = keras.layers.Dense(1)(keras.layers.LeakyReLU(negative_slope=0.2)(h))
    with pytest.raises(ValueError, match="does not compute the critic's scores"):
        ghost_clipping.DenseCritic.of(keras.Model([x, y], h))


def test_gradients_come_in_the_critics_variable_order() -> None:
    critic = _critic("linear")
    dense = ghost_clipping.DenseCritic.of(critic)
    real, fake, onehot, alpha = _rows(3, seed=3)
    rows = ghost_clipping.real_row_gradients(dense, real, fake, onehot, alpha, gp_weight=LAMBDA)
    summed, _ = ghost_clipping.clipped_sum(dense, rows, 1.0, tf.ones([3], tf.bool))
    assert [tuple(s.shape) for s in summed] == [tuple(v.shape) for v in critic.trainable_variables]
