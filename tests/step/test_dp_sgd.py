"""Entity-level DP-SGD for the critic (:mod:`wgangp.step.dp_sgd`), on a linear critic whose
gradients are known by hand: D(x, y) = w.x + v.y + b, so grad_x D = w everywhere and a real row's
terms -D(x) + lambda (||w|| - 1)^2 have the weight gradients (-x + g, -y, -1), with
g = 2 lambda (||w|| - 1) w / ||w|| (the penalty's share, the same for every row)."""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

from wgangp.model import losses
from wgangp.model.networks import build_critic
from wgangp.step.dp_sgd import (
    clipped_sum,
    entity_gradients,
    private_critic_gradients,
    real_row_terms,
)

FEATURES, LAMBDA = 3, 10.0


def _linear_critic() -> keras.Model:
    keras.utils.set_random_seed(0)
    return build_critic(FEATURES, hidden=[])


def _rows(count: int, seed: int, scale: float = 1.0) -> tuple[tf.Tensor, ...]:
    rng = np.random.default_rng(seed)
    real = tf.constant(scale * rng.standard_normal((count, FEATURES)), tf.float32)
    fake = tf.constant(rng.standard_normal((count, FEATURES)), tf.float32)
    onehot = tf.one_hot(rng.integers(0, 2, count), 2)
    alpha = tf.constant(rng.random((count, 1)), tf.float32)
    return real, fake, onehot, alpha


def _by_hand(critic: keras.Model, real: np.ndarray, onehot: np.ndarray, rows: list[int]):
    """An entity's gradient (kernel [F + 2, 1], bias [1]) summed over its ``rows``."""
    kernel = critic.trainable_variables[0].numpy()[:, 0]
    w = kernel[:FEATURES]
    norm = np.sqrt(w @ w + 1e-12)
    g = 2 * LAMBDA * (norm - 1) * w / norm
    grad_kernel = np.zeros(FEATURES + 2)
    for r in rows:
        grad_kernel += np.concatenate([-real[r] + g, -onehot[r]])
    return grad_kernel[:, None], np.array([-float(len(rows))])


def test_an_entitys_gradient_is_the_sum_of_its_rows_terms_by_hand() -> None:
    critic = _linear_critic()
    real, fake, onehot, alpha = _rows(6, seed=1)
    segments = tf.constant([0, 1, 1, 2, 2, 2])
    per_entity = entity_gradients(
        critic.trainable_variables,
        lambda: real_row_terms(critic, real, fake, onehot, alpha, gp_weight=LAMBDA),
        segments,
        3,
    )
    for entity, rows in enumerate([[0], [1, 2], [3, 4, 5]]):
        kernel, bias = _by_hand(critic, real.numpy(), onehot.numpy(), rows)
        np.testing.assert_allclose(per_entity[0][entity].numpy(), kernel, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(per_entity[1][entity].numpy(), bias, rtol=1e-5)


def test_clipping_bounds_what_one_entity_adds_however_many_rows_it_has() -> None:
    """Without noise, the clipped sum with and without an entity of 500 huge rows differs by at
    most the clip norm; an entity under the clip passes unchanged."""
    critic = _linear_critic()
    others = _rows(20, seed=2)
    heavy = _rows(500, seed=3, scale=1e3)
    clip = 0.7

    def summed(parts, segments, count):
        real, fake, onehot, alpha = (tf.concat(t, 0) for t in zip(*parts, strict=True))
        per_entity = entity_gradients(
            critic.trainable_variables,
            lambda: real_row_terms(critic, real, fake, onehot, alpha, gp_weight=LAMBDA),
            tf.constant(segments),
            count,
        )
        return clipped_sum(per_entity, clip)

    without, _ = summed([others], list(range(20)), 20)
    with_heavy, norms = summed([others, heavy], list(range(20)) + [20] * 500, 21)
    pairs = zip(with_heavy, without, strict=True)
    moved = np.sqrt(sum(np.sum((a - b).numpy() ** 2) for a, b in pairs))
    assert float(norms[20]) > 100 * clip  # the entity's own gradient is far above the clip
    assert moved == pytest.approx(clip, rel=1e-4)
    small, small_norms = clipped_sum([tf.constant([[0.3, 0.4]])], clip=1.0)
    np.testing.assert_allclose(small[0].numpy(), [0.3, 0.4])
    assert float(small_norms[0]) == pytest.approx(0.5)


def test_without_noise_or_clipping_it_is_the_critic_loss_gradient() -> None:
    """One row per entity, a clip no gradient reaches and no noise: the private gradient is the
    ordinary critic loss's (the mean over rows of fake, real and penalty terms)."""
    critic = _linear_critic()
    real, fake, onehot, alpha = _rows(16, seed=4)
    grads, _ = private_critic_gradients(
        critic, real, fake, onehot, alpha, tf.range(16), 16,
        expected_entities=16.0, clip=1e9, noise_multiplier=0.0, gp_weight=LAMBDA,
        seed=tf.constant([0, 1]),
    )  # fmt: skip
    with tf.GradientTape() as tape:
        d_real, d_fake = critic([real, onehot]), critic([fake, onehot])
        x_hat = losses.interpolate(real, fake, alpha)
        penalty = losses.gradient_penalty(lambda x: critic([x, onehot]), x_hat)
        loss = losses.critic_loss(d_real, d_fake, penalty.value, LAMBDA)
    expected = tape.gradient(loss, critic.trainable_variables)
    for got, want in zip(grads, expected, strict=True):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)


def test_the_noise_has_the_promised_spread() -> None:
    """Zero real rows' worth of signal aside, the noise on each weight is N(0, (sigma C)^2) /
    expected entities: its spread over a wide critic's weights matches."""
    keras.utils.set_random_seed(0)
    critic = build_critic(FEATURES, hidden=[256])
    real, fake, onehot, alpha = _rows(4, seed=5)
    noisy, _ = private_critic_gradients(
        critic, real, fake, onehot, alpha, tf.range(4), 4,
        expected_entities=8.0, clip=0.5, noise_multiplier=2.0, gp_weight=LAMBDA,
        seed=tf.constant([3, 4]),
    )  # fmt: skip
    quiet, _ = private_critic_gradients(
        critic, real, fake, onehot, alpha, tf.range(4), 4,
        expected_entities=8.0, clip=0.5, noise_multiplier=0.0, gp_weight=LAMBDA,
        seed=tf.constant([3, 4]),
    )  # fmt: skip
    noise = np.concatenate([(a - b).numpy().ravel() for a, b in zip(noisy, quiet, strict=True)])
    assert noise.size > 1000
    assert np.std(noise) == pytest.approx(2.0 * 0.5 / 8.0, rel=0.05)
    assert abs(np.mean(noise)) < 0.01


def test_each_fake_row_is_clipped_too() -> None:
    """Fake rows read no training row, but left whole their term would outweigh the clipped real
    rows': 4 fake rows 10,000 times too large move the gradient by at most the clip."""
    critic = _linear_critic()
    real, fake, onehot, alpha = _rows(4, seed=6)
    huge = (fake * 1e4, onehot)
    grads, _ = private_critic_gradients(
        critic, real, fake, onehot, alpha, tf.range(4), 4,
        expected_entities=4.0, clip=1.0, noise_multiplier=0.0, gp_weight=LAMBDA,
        seed=tf.constant([0, 1]), fake_term=huge,
    )  # fmt: skip
    norm = np.sqrt(sum(float(tf.reduce_sum(tf.square(g))) for g in grads))
    assert norm <= 2.0 + 1e-4  # the real rows' clipped mean (<= 1) plus the fake rows' (<= 1)
    assert norm > 0.9  # and the fake rows' term is there, at its clip
