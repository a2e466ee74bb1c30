"""What this CPU achieves on the benchmark's own matmul shapes: the GFLOP/s ceiling for a step.

Each distinct matmul shape of a traced training step (from ``peers.flops.count_flops``: forward,
backward and gradient-penalty double-backward matmuls, transposes included) runs in a tight
``tf.range`` loop inside one ``tf.function``, ``UNROLL`` independent matmuls per trip.
:class:`ProbeStep` runs every shape as often as the step does, so it is a benchmark system like
the others: timed round-robin with them, in the same minutes of this VM's drift, its steps per
second are those of a step that does nothing but its matmuls.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import tensorflow as tf

#: Independent matmuls per loop trip: amortizes the while loop's own per-trip cost, which would
#: otherwise dominate the small shapes (a 256x32x1 matmul is 16 kFLOP).
UNROLL = 8


def _loop(
    m: int, k: int, n: int, transpose_a: bool, transpose_b: bool
) -> tf.types.experimental.PolymorphicFunction:
    @tf.function
    def repeat(a: tf.Tensor, b: tf.Tensor, iterations: tf.Tensor) -> tf.Tensor:
        acc = tf.zeros([m, n])
        for _ in tf.range(iterations):
            # UNROLL distinct left operands (a[i]): identical matmuls would be merged by the
            # graph optimizer. acc feeds the next trip, so nothing can be dropped or hoisted;
            # the adds are m*n each, noise next to 2*m*k*n.
            products = [
                tf.matmul(a[i], b, transpose_a=transpose_a, transpose_b=transpose_b)
                for i in range(UNROLL)
            ]
            acc = acc * 0.5 + tf.add_n(products)
        return acc

    return repeat


class ProbeStep:
    """A step's matmuls alone: ``run(n)`` runs each shape ``count x n`` times (its loop trips
    are ``count x n / UNROLL``, so ``n`` must be a multiple of ``steps_per_call``)."""

    steps_per_call = UNROLL
    notes = [
        "matmul-only step: every matmul shape of the naive step (fwd, bwd, GP double-bwd) as "
        "often as the step runs it, each in a tight tf.range loop, timed round-robin with the "
        "steps it bounds; its steps/s are a step's if nothing but matmuls cost time (the real "
        "step can overlap two small matmuls on 2 cores, so this is not a strict bound)"
    ]

    def __init__(self, shapes: Counter) -> None:
        """``shapes``: (m, k, n, transpose_a, transpose_b) -> how often one step runs it."""
        self.loops = []
        for (m, k, n, ta, tb), count in sorted(shapes.items()):
            a = tf.random.normal([UNROLL, k, m] if ta else [UNROLL, m, k])  # UNROLL left operands
            b = tf.random.normal([n, k] if tb else [k, n])
            self.loops.append((_loop(m, k, n, ta, tb), a, b, count))
        self.flops_per_step = sum(2 * m * k * n * c for (m, k, n, _, _), c in shapes.items())
        self.shapes = len(shapes)
        self.variant = f"probe ({self.shapes} shapes)"
        self.settings: dict[str, Any] = {"shapes": self.shapes}

    def flops_per_gen_step(self) -> float:
        return float(self.flops_per_step)

    def run(self, steps: int) -> None:
        if steps % self.steps_per_call:
            raise ValueError(f"ProbeStep runs multiples of {UNROLL} steps, not {steps}")
        for repeat, a, b, count in self.loops:
            repeat(a, b, tf.constant(count * steps // UNROLL)).numpy()
