"""Stateless random streams keyed by (seed, step, slot): every random input of a step is a pure
function of the step's number.

So runs are deterministic, a resumed run draws exactly what it would have drawn, the batch behind a
NaN can be drawn again for forensics, and a step's inputs can be drawn before the step runs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import tensorflow as tf

#: Distinct random streams per generator step.
SLOTS_PER_STEP = 1024
#: Streams of one critic iteration: iteration i uses slots [8i, 8i + 8).
CRITIC_SLOTS = 8
#: The generator update's labels use this slot, its noise the next one.
GENERATOR_SLOT = 1000


def step_seed(base_seed: tf.Tensor, step: tf.Tensor, slot: int | tf.Tensor) -> tf.Tensor:
    """The stateless seed for one random draw: shape [2], int64."""
    step = tf.cast(step, tf.int64)
    return tf.stack([tf.cast(base_seed, tf.int64), step * SLOTS_PER_STEP + tf.cast(slot, tf.int64)])


def random_alg(jit_compile: bool) -> str:
    """The stateless generator of a run: Threefry when XLA compiles the draws, else Philox.

    TensorFlow's own kernels implement Philox only. XLA implements both, but its Philox stream
    is not TF's anyway (same key and counter, other numbers), and on CPU it is the slower of the
    two (docs/performance.md). A batch is thus a pure function of (seed, step, jit_compile).
    """
    return "threefry" if jit_compile else "philox"


#: Half a cell of ``stateless_uniform``'s float32 grid k * 2^-23 (23 random bits) once
#: x = 2u - 1 maps it onto [-1, 1), where the cells are 2^-22 wide.
_HALF_CELL = 2.0**-23


def stateless_standard_normal(shape: Sequence[int], seed: tf.Tensor, alg: str) -> tf.Tensor:
    """N(0, 1) float32 draws keyed by ``seed``: a pure function of (shape, seed, alg).

    The inverse CDF ``sqrt(2) erfinv(x)`` of one uniform draw, not ``stateless_normal``: XLA
    lowers that to a Box-Muller transform whose sine, cosine and log cost a small step several
    times what the inverse CDF does, and TF's own Philox normal kernel is slower too
    (docs/performance.md). ``x`` is the midpoint of each of the 2^23 uniform cells mapped onto
    (-1, 1): symmetric and never +-1, where erfinv is +-inf, so every draw is finite
    (|z| <= 5.3).
    """
    return uniform_to_normal(tf.random.stateless_uniform(shape, seed, alg=alg))


def uniform_to_normal(u: tf.Tensor) -> tf.Tensor:
    """The standard normal quantile of the midpoint of ``u``'s cell (``u`` = k * 2^-23)."""
    x = 2.0 * u - (1.0 - _HALF_CELL)  # (2k + 1) * 2^-23 - 1: exact in float32
    return math.sqrt(2.0) * tf.math.erfinv(x)
