"""DP-SGD for the critic, with the entity as the unit (Abadi et al. 2016; entities, not rows).

The critic is the only network that reads training rows; the generator learns from the critic
alone, so it is post-processing. One critic update under privacy:

1. The caller Poisson-samples entities (each with its class's rate) and hands over their rows,
   each row with its entity's index among those sampled (``segments``).
2. Each sampled entity's gradient: the gradient of the sum over its rows of the loss terms that
   read a real row, ``-D(x)`` and the gradient penalty at ``x_hat = x + alpha (x_fake - x)`` (the
   interpolate reads the real row, so it is the entity's too). It is the Jacobian of the
   per-entity sums: one row of the Jacobian per entity, however many rows the entity has.
3. Each entity's gradient clipped to L2 norm ``clip`` over all the critic's weights together,
   summed over entities, plus N(0, (noise_multiplier * clip)^2) per weight, divided by the
   expected number of sampled entities (public; never the count that was sampled, which is not).
4. The fake rows' term, ``mean D(x_fake)``, reads no training row, so it needs neither noise nor
   clipping; its rows' gradients are clipped at ``clip`` all the same, each, and averaged: left
   whole, it would outweigh the real rows' clipped term many times over, and the critic would
   learn to score fake rows down rather than to tell them from real ones.

So adding or removing one entity moves the sum of step 3 by at most ``clip``: the Gaussian
mechanism with sensitivity ``clip``, subsampled by Poisson sampling, whose privacy the accountant
(:mod:`wgangp.privacy.accountant`) composes over the steps.
"""

from __future__ import annotations

from collections.abc import Callable

import keras
import tensorflow as tf

from wgangp.model import losses

#: Keeps the clip factor finite for an entity whose gradient is exactly zero.
_TINY = 1e-12


def real_row_terms(
    critic: Callable[[list[tf.Tensor]], tf.Tensor],
    real: tf.Tensor,
    fake: tf.Tensor,
    onehot: tf.Tensor,
    alpha: tf.Tensor,
    *,
    gp_weight: float,
    eps: float = 1e-12,
) -> tf.Tensor:
    """Per real row [rows]: ``-D(x) + gp_weight * (||grad D(x_hat)|| - 1)^2``, the critic loss
    terms that read that row (the penalty's norm is the safe square root of
    :func:`wgangp.model.losses.gradient_penalty`)."""
    d_real = critic([real, onehot])[:, 0]
    x_hat = losses.interpolate(real, fake, alpha)
    penalty = losses.gradient_penalty(lambda x: critic([x, onehot]), x_hat, eps=eps)
    return -tf.cast(d_real, tf.float32) + gp_weight * tf.square(penalty.norms - 1.0)


def entity_gradients(
    variables: list, terms: Callable[[], tf.Tensor], segments: tf.Tensor, count: int
) -> list[tf.Tensor]:
    """Each entity's gradient of its rows' ``terms()``: per variable ``[count, *shape]``.

    ``segments[i]`` is row i's entity in [0, count). The Jacobian of the ``count`` per-entity
    sums, vectorised (pfor) over the entities."""
    watched = [getattr(v, "value", v) for v in variables]  # the tf.Variable under a Keras one
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(watched)
        sums = tf.math.unsorted_segment_sum(terms(), segments, count)
    return tape.jacobian(sums, watched, experimental_use_pfor=True)


def clipped_sum(per_entity: list[tf.Tensor], clip: float) -> tuple[list[tf.Tensor], tf.Tensor]:
    """Each entity's gradient scaled to L2 norm at most ``clip`` (over all variables), summed
    over entities; also the entities' norms before clipping [count] (for reporting)."""
    squares = [tf.reshape(tf.square(g), [tf.shape(g)[0], -1]) for g in per_entity]
    norms = tf.sqrt(tf.add_n([tf.reduce_sum(s, axis=1) for s in squares]))
    factors = tf.minimum(1.0, clip / (norms + _TINY))
    summed = [tf.tensordot(factors, g, axes=1) for g in per_entity]
    return summed, norms


def gaussian_noise(like: list[tf.Tensor], stddev: float, seed: tf.Tensor) -> list[tf.Tensor]:
    """N(0, stddev^2) per coordinate of each tensor of ``like``, from a stateless ``seed`` [2]."""
    seeds = tf.random.experimental.stateless_split(tf.cast(seed, tf.int64), num=len(like))
    return [
        tf.random.stateless_normal(tf.shape(t), seeds[i], stddev=stddev, dtype=t.dtype)
        for i, t in enumerate(like)
    ]


def private_critic_gradients(
    critic: keras.Model,
    real: tf.Tensor,
    fake: tf.Tensor,
    onehot: tf.Tensor,
    alpha: tf.Tensor,
    segments: tf.Tensor,
    count: int,
    *,
    expected_entities: float,
    clip: float,
    noise_multiplier: float,
    gp_weight: float,
    seed: tf.Tensor,
    fake_term: tuple[tf.Tensor, tf.Tensor] | None = None,
) -> tuple[list[tf.Tensor], tf.Tensor]:
    """The critic's gradient under entity-level DP (module doc, steps 2-4), per variable; and
    the sampled entities' gradient norms before clipping.

    ``real``, ``fake``, ``onehot``, ``alpha``: one row per sampled real row (the fake row its
    interpolate pairs it with); ``fake_term``: the (rows, labels) of the fake term, default
    ``(fake, onehot)``. A batch of its own keeps the term's size public: averaged over the
    sampled rows, it would weigh by how many were sampled."""
    variables = critic.trainable_variables
    per_entity = entity_gradients(
        variables,
        lambda: real_row_terms(critic, real, fake, onehot, alpha, gp_weight=gp_weight),
        segments,
        count,
    )
    summed, norms = clipped_sum(per_entity, clip)
    noise = gaussian_noise(summed, noise_multiplier * clip, seed)
    fake_rows = list(fake_term) if fake_term is not None else [fake, onehot]
    count_fake = tf.shape(fake_rows[0])[0]
    per_fake_row = entity_gradients(
        variables,
        lambda: tf.cast(critic(fake_rows)[:, 0], tf.float32),
        tf.range(count_fake),
        count_fake,
    )
    fake_summed, _ = clipped_sum(per_fake_row, clip)
    public = [s / tf.cast(count_fake, s.dtype) for s in fake_summed]
    grads = [(s + n) / expected_entities + p for s, n, p in zip(summed, noise, public, strict=True)]
    return grads, norms
