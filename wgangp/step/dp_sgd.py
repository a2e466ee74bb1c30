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

:func:`private_critic_gradients` is that definition, for entities of any number of rows, by the
Jacobian: exact for any critic, and the yardstick of the trainer's computation, which is the same
sum (:mod:`wgangp.step.private_step`: one row per entity) taken in chunks of a fixed size
(:func:`sum_over_chunks`, padding masked out) by ghost clipping (:mod:`wgangp.step.ghost_clipping`),
then noised and divided by :func:`noised_mean`, the code this definition ends with too. The
Jacobian runs a backward pass per entity over the whole sample: at 512 entities it costs hundreds
of ordinary updates (docs/performance.md).
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
    grads = noised_mean(
        summed,
        public,
        expected_entities=expected_entities,
        clip=clip,
        noise_multiplier=noise_multiplier,
        seed=seed,
    )
    return grads, norms


def noised_mean(
    clipped: list[tf.Tensor],
    public: list[tf.Tensor],
    *,
    expected_entities: float,
    clip: float,
    noise_multiplier: float,
    seed: tf.Tensor,
) -> list[tf.Tensor]:
    """Steps 3 and 4's end: ``(clipped + N(0, (noise_multiplier * clip)^2)) / expected_entities
    + public`` per variable. The noise has the weights' shapes and the divisor is public: neither
    depends on how many entities were sampled."""
    noise = gaussian_noise(clipped, noise_multiplier * clip, seed)
    return [(s + n) / expected_entities + p for s, n, p in zip(clipped, noise, public, strict=True)]


def sum_over_chunks(
    chunk_sum: Callable[[tf.Tensor], list[tf.Tensor]], chunks: tf.Tensor, like: list
) -> list[tf.Tensor]:
    """``sum_{j < chunks} chunk_sum(j)``, per tensor shaped as ``like``'s, in a while loop.

    A Poisson sample's size is random. Chunks of a fixed size give the loop's body fixed shapes
    (traced once, whatever the size), and as many chunks as the sample needs sum all of it: a
    sample cut at a maximum would no longer be the Poisson sample the accountant analyses."""
    zeros = [tf.zeros(v.shape, v.dtype) for v in like]

    def add_chunk(j: tf.Tensor, total: list[tf.Tensor]) -> tuple[tf.Tensor, list[tf.Tensor]]:
        return j + 1, [t + s for t, s in zip(total, chunk_sum(j), strict=True)]

    _, total = tf.while_loop(lambda j, _: j < chunks, add_chunk, (tf.constant(0), zeros))
    return total
