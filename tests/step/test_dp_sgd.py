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
from wgangp.step import ghost_clipping
from wgangp.step.dp_sgd import (
    clipped_sum,
    entity_gradients,
    noised_mean,
    private_critic_gradients,
    real_row_terms,
    sum_over_chunks,
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


def _in_chunks(critic: keras.Model, rows: tuple[tf.Tensor, ...], size: int, clip: float):
    """The trainer's clipped sum: ``rows`` padded to whole chunks of ``size``, the padding
    masked out, each chunk by ghost clipping, summed in :func:`sum_over_chunks`."""
    dense = ghost_clipping.DenseCritic.of(critic)
    count = -(-int(rows[0].shape[0]) // size)
    padding = count * size - int(rows[0].shape[0])
    chunked = [
        tf.reshape(tf.pad(t, [[0, padding], [0, 0]]), [count, size, t.shape[-1]]) for t in rows
    ]
    mask = tf.reshape(tf.range(count * size) < int(rows[0].shape[0]), [count, size])

    def chunk_sum(j: tf.Tensor) -> list[tf.Tensor]:
        per_row = ghost_clipping.real_row_gradients(
            dense, *(t[j] for t in chunked), gp_weight=LAMBDA
        )
        return ghost_clipping.clipped_sum(dense, per_row, clip, mask[j])[0]

    return sum_over_chunks(chunk_sum, tf.constant(count), critic.trainable_variables)


def _fake_mean(critic: keras.Model, fake: tf.Tensor, onehot: tf.Tensor, clip: float):
    dense = ghost_clipping.DenseCritic.of(critic)
    per_row = ghost_clipping.score_row_gradients(dense, fake, onehot)
    every = tf.ones([fake.shape[0]], tf.bool)
    return [s / fake.shape[0] for s in ghost_clipping.clipped_sum(dense, per_row, clip, every)[0]]


@pytest.mark.parametrize("size", [8, 23, 64])
def test_in_padded_chunks_by_ghost_clipping_it_is_the_definition(size: int) -> None:
    """23 rows in chunks of 8 (the last padded by one), in one exact chunk, in one chunk mostly
    padding: the gradient the Jacobian defines, noise (same seed) and fake term included."""
    keras.utils.set_random_seed(0)
    critic = build_critic(FEATURES, hidden=[8, 8])
    real, fake, onehot, alpha = _rows(23, seed=7, scale=3.0)
    _, public, public_onehot, _ = _rows(16, seed=8)
    settings = dict(
        expected_entities=20.0, clip=15.0, noise_multiplier=1.5, seed=tf.constant([5, 6])
    )
    want, norms = private_critic_gradients(
        critic, real, fake, onehot, alpha, tf.range(23), 23, gp_weight=LAMBDA,
        fake_term=(public, public_onehot), **settings,
    )  # fmt: skip
    assert float(tf.reduce_min(norms)) < 15.0 < float(tf.reduce_max(norms))  # some clipped
    clipped = _in_chunks(critic, (real, fake, onehot, alpha), size, clip=15.0)
    got = noised_mean(clipped, _fake_mean(critic, public, public_onehot, 15.0), **settings)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-4, atol=1e-6)


def test_the_noise_is_the_same_whatever_the_sample_size() -> None:
    """The noise of one seed added to the clipped sums of 3 rows and of 40: the same draw (its
    shape is the weights', never the sample's)."""
    keras.utils.set_random_seed(0)
    critic = build_critic(FEATURES, hidden=[8])
    _, public, public_onehot, _ = _rows(4, seed=9)
    fake_mean = _fake_mean(critic, public, public_onehot, 1.0)
    noises = []
    for count in (3, 40):
        clipped = _in_chunks(critic, _rows(count, seed=count), 16, clip=1.0)
        settings = dict(expected_entities=8.0, clip=1.0, seed=tf.constant([1, 2]))
        noisy = noised_mean(clipped, fake_mean, noise_multiplier=2.0, **settings)
        quiet = noised_mean(clipped, fake_mean, noise_multiplier=0.0, **settings)
        pairs = zip(noisy, quiet, strict=True)
        noises.append(np.concatenate([(a - b).numpy().ravel() for a, b in pairs]))
    np.testing.assert_allclose(noises[0], noises[1], atol=1e-6)
    assert np.std(noises[0]) == pytest.approx(2.0 / 8.0, rel=0.2)
