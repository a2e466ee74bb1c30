"""What this CPU achieves on the benchmark's own matmul shapes: the GFLOP/s ceiling for a step.

Each distinct matmul shape of a traced training step (from ``flops.count_flops``: forward,
backward and gradient-penalty double-backward matmuls, transposes included) is timed alone in a
tight ``tf.range`` loop inside one ``tf.function``, ``UNROLL`` independent matmuls per trip.
Weighting each shape by how often the step runs it gives the time the step's matmuls need at
best, hence an upper bound on generator steps per second for that network and batch if nothing
but matmuls cost time.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass

import tensorflow as tf

MatmulKey = tuple[int, int, int, bool, bool]  # (m, k, n, transpose_a, transpose_b)


@dataclass
class ShapeRate:
    m: int
    k: int
    n: int
    transpose_a: bool
    transpose_b: bool
    count_per_step: int
    seconds_per_matmul: float

    @property
    def flops(self) -> int:
        return 2 * self.m * self.k * self.n

    @property
    def gflops_per_s(self) -> float:
        return self.flops / self.seconds_per_matmul / 1e9

    def as_dict(self) -> dict[str, object]:
        return {
            "mkn": f"{self.m}x{self.k}x{self.n}",
            "transpose": [self.transpose_a, self.transpose_b],
            "count_per_step": self.count_per_step,
            "gflops_per_s": round(self.gflops_per_s, 2),
        }


@dataclass
class ProbeResult:
    shapes: list[ShapeRate]

    @property
    def seconds_per_step(self) -> float:
        return sum(s.seconds_per_matmul * s.count_per_step for s in self.shapes)

    @property
    def flops_per_step(self) -> int:
        return sum(s.flops * s.count_per_step for s in self.shapes)

    @property
    def gflops_per_s(self) -> float:
        """Achievable rate on this step's matmul mix (total FLOPs / total matmul time)."""
        return self.flops_per_step / self.seconds_per_step / 1e9


#: Independent matmuls per loop trip: amortizes the while loop's own per-trip cost (~10-20 us
#: on this CPU), which would otherwise dominate the small shapes (a 256x32x1 matmul is 16 kFLOP).
UNROLL = 8


def _loop(m: int, k: int, n: int, transpose_a: bool, transpose_b: bool):
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


def time_matmul(key: MatmulKey, seconds: float = 0.3, repeats: int = 3) -> float:
    """Median seconds per matmul of shape ``key``, timing loops of about ``seconds`` each."""
    m, k, n, transpose_a, transpose_b = key
    a = tf.random.normal([UNROLL, k, m] if transpose_a else [UNROLL, m, k])
    b = tf.random.normal([n, k] if transpose_b else [k, n])
    repeat = _loop(m, k, n, transpose_a, transpose_b)
    repeat(a, b, tf.constant(10)).numpy()  # trace + warm caches
    start = time.perf_counter()
    repeat(a, b, tf.constant(10)).numpy()
    per_call = max((time.perf_counter() - start) / 10, 1e-7)
    iterations = max(10, int(seconds / per_call))
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        repeat(a, b, tf.constant(iterations)).numpy()
        samples.append((time.perf_counter() - start) / (iterations * UNROLL))
    return sorted(samples)[len(samples) // 2]


def probe(shapes: Counter, seconds: float = 0.3, repeats: int = 3) -> ProbeResult:
    """Time every shape of ``shapes`` ({(m, k, n, ta, tb): count per step})."""
    rates = [
        ShapeRate(*key, count_per_step=count, seconds_per_matmul=time_matmul(key, seconds, repeats))
        for key, count in sorted(
            shapes.items(), key=lambda item: -item[0][0] * item[0][1] * item[0][2]
        )
    ]
    return ProbeResult(rates)
