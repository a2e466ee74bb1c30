"""The generator's output heads: each block of a table's layout gets its kind's activation.

Numbers and datetimes pass through; a categorical block becomes a probability row (softmax); a
missing indicator a probability (sigmoid). While training, a categorical block is a
Gumbel-softmax draw at temperature 0.2 instead (CTGAN's choice), so the critic compares near
one-hot rows with the real one-hots rather than spread probabilities it could tell apart at a
glance. The Gumbel noise comes from stateless draws: keyed by the layer's ``seed`` through a
Keras ``SeedGenerator`` (its state is a layer variable), or by an explicit ``seed`` tensor of
shape [2] given to :meth:`OutputHeads.call` (the ``(seed, step, slot)`` streams of
:mod:`wgangp.step.random_streams`), so runs stay deterministic. The uniform draws are clipped
away from 0 and 1, so ``-log(-log(u))`` and its gradients are always finite.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import keras
import tensorflow as tf

from wgangp.data.transform.layout import Block, check_layout

#: CTGAN's Gumbel-softmax temperature: low enough for near one-hot rows, high enough for gradients.
TAU = 0.2
#: How far the Gumbel noise's uniform draws stay from 0 and 1 (|noise| <= 14 in float32).
_EPS = 1e-6


def gumbel_softmax(logits: tf.Tensor, tau: float, uniform: tf.Tensor) -> tf.Tensor:
    """softmax((logits + Gumbel noise) / tau), the noise from ``uniform`` draws in [0, 1)."""
    u = tf.clip_by_value(tf.cast(uniform, logits.dtype), _EPS, 1.0 - _EPS)
    return tf.nn.softmax((logits - tf.math.log(-tf.math.log(u))) / tau, axis=-1)


@keras.saving.register_keras_serializable(package="wgangp")
class OutputHeads(keras.layers.Layer):
    """Identity, softmax (Gumbel-softmax while training) or sigmoid per block of ``layout``."""

    def __init__(
        self,
        layout: Sequence[Block | Mapping[str, Any]],
        tau: float = TAU,
        seed: int | None = None,
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault("dtype", "float32")  # probabilities in float32 under mixed precision
        super().__init__(**kwargs)
        self.layout = tuple(b if isinstance(b, Block) else Block.from_dict(b) for b in layout)
        check_layout(self.layout)
        if not tau > 0:
            raise ValueError(f"the Gumbel-softmax temperature must be > 0, got {tau}")
        self.tau, self.seed = float(tau), seed
        self.seed_generator = keras.random.SeedGenerator(seed)

    def call(
        self, x: tf.Tensor, training: bool | None = None, seed: tf.Tensor | None = None
    ) -> tf.Tensor:
        noise = self._uniform(x, seed) if training and self._categoricals else None
        parts = []
        for block in self.layout:
            part = x[:, block.start : block.stop]
            if block.activation == "softmax":
                if noise is None:
                    part = tf.nn.softmax(part, axis=-1)
                else:
                    part = gumbel_softmax(part, self.tau, noise[:, block.start : block.stop])
            elif block.activation == "sigmoid":
                part = tf.sigmoid(part)
            parts.append(part)
        return tf.concat(parts, axis=-1)

    def compute_output_shape(self, input_shape: tuple[int | None, ...]) -> tuple[int | None, ...]:
        return input_shape

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        layout = [block.to_dict() for block in self.layout]
        config.update({"layout": layout, "tau": self.tau, "seed": self.seed})
        return config

    @property
    def _categoricals(self) -> bool:
        return any(block.activation == "softmax" for block in self.layout)

    def _uniform(self, x: tf.Tensor, seed: tf.Tensor | None) -> tf.Tensor:
        """One draw per output column, of one stream: the layer's, or the given seed's."""
        if seed is None:
            return keras.random.uniform(tf.shape(x), seed=self.seed_generator)
        return tf.random.stateless_uniform(tf.shape(x), tf.cast(seed, tf.int64))
