"""The critics of a history model (never shipped): one over the whole history (1-d convolutions
over the records, their phases and the mask, pooled over the present records, beside the
attributes and the class) and DoppelGANger's auxiliary one over the attributes alone. Both take
flat vectors, so the penalty of :mod:`wgangp.model.losses` applies as it does to rows; the
generator they train is :mod:`wgangp.model.sequence_networks`'."""

from __future__ import annotations

from collections.abc import Sequence

import keras
import tensorflow as tf


class HistoryCritic(keras.Model):
    """D(flat history, onehot): convolutions over [T, R + 4 + 1] (records, phases, mask), pooled
    over the present records (mean and max), beside the attributes and the class -> a score."""

    def __init__(
        self, max_length: int, channels_in: int, channels: Sequence[int], hidden: Sequence[int]
    ) -> None:
        super().__init__(name="history_critic")
        self.max_length, self.channels_in = max_length, channels_in
        self.convs = [
            keras.layers.Conv1D(width, 3, padding="same", dilation_rate=2**i, name=f"conv_{i}")
            for i, width in enumerate(channels)
        ]
        self.dense = [
            keras.layers.Dense(width, name=f"dense_{i}") for i, width in enumerate(hidden)
        ]
        self.score = keras.layers.Dense(1, dtype="float32", name="score")

    def call(self, inputs: Sequence[tf.Tensor]) -> tf.Tensor:
        x, onehot = inputs
        span = self.max_length * self.channels_in
        sequence = tf.reshape(x[:, :span], [-1, self.max_length, self.channels_in])
        mask = sequence[..., -1:]
        h = sequence
        for conv in self.convs:
            h = tf.nn.leaky_relu(conv(h), 0.2) * mask
        present = tf.reduce_sum(mask, 1) + 1.0
        pooled = [tf.reduce_sum(h, 1) / present, tf.reduce_max(h, 1), present / self.max_length]
        z = tf.concat([*pooled, x[:, span:], onehot], -1)
        for layer in self.dense:
            z = tf.nn.leaky_relu(layer(z), 0.2)
        return self.score(z)


class AttributeCritic(keras.Model):
    """DoppelGANger's auxiliary critic: D(attributes, onehot) -> a score."""

    def __init__(self, hidden: Sequence[int]) -> None:
        super().__init__(name="attribute_critic")
        self.dense = [
            keras.layers.Dense(width, name=f"dense_{i}") for i, width in enumerate(hidden)
        ]
        self.score = keras.layers.Dense(1, dtype="float32", name="score")

    def call(self, inputs: Sequence[tf.Tensor]) -> tf.Tensor:
        z = tf.concat(list(inputs), -1)
        for layer in self.dense:
            z = tf.nn.leaky_relu(layer(z), 0.2)
        return self.score(z)
