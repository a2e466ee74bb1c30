"""The networks of a history model (``data.time``): DoppelGANger's shape on this project's parts.

Generator G(z_attributes, z_records, onehot(class)): an MLP draws the history's attributes (the
table's attribute columns through :class:`~wgangp.model.heads.OutputHeads`, its length, its start
week and its start angle within the week on the unit circle); a recurrent cell then draws the
records, ``records_per_cell`` per step, each step fed its noise, the attributes, the class and
the current time of week and day. The cell turns each record's gap into seconds (the fitted
scale) and moves the clock: the phases it returns are the records' calendar positions, consistent
with the start and the gaps by construction, and the next step sees them (what a recurrent
network cannot count by itself, it is told). A length mask (hard 0/1 forward, a sigmoid's
gradient backward) zeroes the records past the length.

Critics (never shipped): one over the whole history (1-d convolutions over the records, their
phases and the mask, pooled over the present records, beside the attributes and the class) and
DoppelGANger's auxiliary one over the attributes alone. Both take flat vectors, so the penalty of
:mod:`wgangp.model.losses` applies as it does to rows. Every generator layer is built-in or
registered here, so the generator saves in Keras' native format and loads in safe mode."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import keras
import tensorflow as tf

from wgangp.data.transform.layout import Block, layout_width
from wgangp.model.heads import OutputHeads
from wgangp.model.networks import N_CLASSES

WEEK = 7 * 86_400.0
#: Phase features per record: cos and sin of the week's angle, then of the day's.
PHASES = 4
#: The length mask's sigmoid slope (its gradient; forward it is 0/1).
_SLOPE = 4.0
_TWO_PI = 2 * math.pi


def phase_features(angle: tf.Tensor) -> tf.Tensor:
    """[..., 1] angles within the week -> [..., 4]: cos, sin of it and of seven times it (the
    day's angle)."""
    return tf.concat([tf.cos(angle), tf.sin(angle), tf.cos(7 * angle), tf.sin(7 * angle)], -1)


@keras.saving.register_keras_serializable(package="wgangp")
class RecordCell(keras.layers.Layer):
    """One recurrent step: ``records_per_cell`` raw record vectors and their phases (module doc).

    State: the GRU's, the current angle within the week, the records drawn so far. The angle
    carried to the next step holds no gradient: a gap moves its own record's phase, and the next
    steps see where the clock is without being blamed for it."""

    def __init__(
        self,
        units: int,
        records_per_cell: int,
        record_width: int,
        gap: Sequence[float],
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.units, self.records_per_cell, self.record_width = units, records_per_cell, record_width
        self.gap = tuple(float(v) for v in gap)  # mean, std, low, high of log1p(seconds)
        self.gru = keras.layers.GRUCell(units, name="gru")
        self.out = keras.layers.Dense(records_per_cell * record_width, name="records")
        self.state_size = [units, 1, 1]
        self.output_size = records_per_cell * (record_width + PHASES)

    def build(self, input_shape: Any) -> None:
        width = int(input_shape[-1]) + PHASES
        self.gru.build((None, width))
        self.out.build((None, self.units))
        self.built = True

    def call(self, inputs: tf.Tensor, states: Sequence[tf.Tensor]) -> tuple[tf.Tensor, list]:
        h, angle, count = states
        x = tf.concat([inputs, phase_features(angle)], -1)
        h, _ = self.gru(x, [h])
        raw = tf.reshape(self.out(h), [-1, self.records_per_cell, self.record_width])
        mean, std, low, high = self.gap
        phases = []
        for s in range(self.records_per_cell):
            logged = tf.clip_by_value(mean + std * raw[:, s, :1], low, high)
            seconds = tf.math.expm1(logged)
            if s == 0:  # the history's first record starts it: no gap
                seconds = seconds * tf.cast(count > 0, seconds.dtype)
            angle = tf.math.floormod(angle + _TWO_PI * seconds / WEEK, _TWO_PI)
            phases.append(phase_features(angle))
        out = tf.concat([tf.reshape(raw, [-1, self.records_per_cell * self.record_width]),
                         *phases], -1)  # fmt: skip
        return out, [h, tf.stop_gradient(angle), count + 1.0]

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config.update(units=self.units, records_per_cell=self.records_per_cell,
                      record_width=self.record_width, gap=list(self.gap))  # fmt: skip
        return config


@keras.saving.register_keras_serializable(package="wgangp")
class StartState(keras.layers.Layer):
    """The cell's first state from the attributes: the GRU's from a dense map, the angle from the
    start's (cos, sin) at ``phase_at``, no record drawn yet."""

    def __init__(self, units: int, phase_at: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.units, self.phase_at = units, phase_at
        self.dense = keras.layers.Dense(units, activation="tanh", name="h0")

    def build(self, input_shape: Any) -> None:
        self.dense.build(input_shape)
        self.built = True

    def call(self, context: tf.Tensor) -> list[tf.Tensor]:
        cos, sin = (
            context[:, self.phase_at : self.phase_at + 1],
            context[:, self.phase_at + 1 : self.phase_at + 2],
        )
        angle = tf.math.floormod(tf.math.atan2(sin, cos), _TWO_PI)
        return [self.dense(context), angle, tf.zeros_like(angle)]

    def compute_output_shape(self, input_shape: Any) -> list[tuple]:
        return [(input_shape[0], self.units), (input_shape[0], 1), (input_shape[0], 1)]

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "units": self.units, "phase_at": self.phase_at}


@keras.saving.register_keras_serializable(package="wgangp")
class UnitCircle(keras.layers.Layer):
    """Two numbers onto the unit circle (a start's angle as its cos and sin)."""

    def call(self, x: tf.Tensor) -> tf.Tensor:
        return x / tf.sqrt(tf.reduce_sum(tf.square(x), -1, keepdims=True) + 1e-6)


@keras.saving.register_keras_serializable(package="wgangp")
class HistoryRecords(keras.layers.Layer):
    """The cell's steps -> records [B, T, R] and phases [B, T, 4], both zero past the length,
    and the mask [B, T]: 1 for the first round(length) records (a sigmoid's gradient in the
    length), the length read from the attributes at ``length_at`` through its log scale."""

    def __init__(
        self, max_length: int, record_width: int, length: Sequence[float], length_at: int, **kw
    ) -> None:
        super().__init__(**kw)
        self.max_length, self.record_width, self.length_at = max_length, record_width, length_at
        self.length = tuple(float(v) for v in length)  # mean, std, low, high of log(rows)

    def call(self, steps: tf.Tensor, attributes: tf.Tensor) -> list[tf.Tensor]:
        per_record = self.record_width + PHASES
        cells = tf.shape(steps)[1]
        s = steps.shape[-1] // per_record
        raw = tf.reshape(steps[..., : s * self.record_width], [-1, cells * s, self.record_width])
        phases = tf.reshape(steps[..., s * self.record_width :], [-1, cells * s, PHASES])
        mean, std, low, high = self.length
        z = attributes[:, self.length_at : self.length_at + 1]
        rows = tf.exp(tf.clip_by_value(mean + std * z, low, high))
        places = tf.range(self.max_length, dtype=rows.dtype)[None, :]
        soft = tf.sigmoid(_SLOPE * (rows - places - 0.5))
        hard = tf.cast(places < tf.round(rows), rows.dtype)
        mask = soft + tf.stop_gradient(hard - soft)
        return [raw * mask[..., None], phases * mask[..., None], mask]

    def compute_output_shape(self, steps_shape: Any, attributes_shape: Any) -> list[tuple]:
        batch = steps_shape[0]
        return [(batch, self.max_length, self.record_width), (batch, self.max_length, PHASES),
                (batch, self.max_length)]  # fmt: skip

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config.update(max_length=self.max_length, record_width=self.record_width,
                      length=list(self.length), length_at=self.length_at)  # fmt: skip
        return config


def build_history_generator(
    *,
    attribute_layout: Sequence[Block],
    record_layout: Sequence[Block],
    max_length: int,
    records_per_cell: int,
    latent_dim: int,
    hidden: Sequence[int],
    rnn_units: int,
    gap: Sequence[float],
    length: Sequence[float],
    length_at: int,
    seed: int | None = None,
) -> keras.Model:
    """G([z_attributes [B, latent], z_records [B, steps, latent], onehot [B, 2]]) ->
    [attributes [B, A], records [B, T, R], phases [B, T, 4], mask [B, T]] (module doc)."""
    cells = max_length // records_per_cell
    record_width = layout_width(record_layout)
    z_a = keras.Input((latent_dim,), name="z_attributes")
    z_r = keras.Input((cells, latent_dim), name="z_records")
    y = keras.Input((N_CLASSES,), name="label_onehot")
    h = keras.layers.Concatenate(name="attributes_in")([z_a, y])
    for i, width in enumerate(hidden):
        h = keras.layers.Dense(width, name=f"attributes_dense_{i}")(h)
        h = keras.layers.LeakyReLU(negative_slope=0.2, name=f"attributes_leaky_{i}")(h)
    raw = keras.layers.Dense(layout_width(attribute_layout), name="attributes_out")(h)
    shaped = OutputHeads(attribute_layout, seed=seed, name="attribute_heads")(raw)
    start = UnitCircle(name="start_angle")(keras.layers.Dense(2, name="start_out")(h))
    attributes = keras.layers.Concatenate(name="attributes")([shaped, start])
    context = keras.layers.Concatenate(name="context")([attributes, y])
    steps_in = keras.layers.Concatenate(name="steps_in")(
        [z_r, keras.layers.RepeatVector(cells, name="context_per_step")(context)]
    )
    state = StartState(rnn_units, layout_width(attribute_layout), name="start_state")(context)
    cell = RecordCell(rnn_units, records_per_cell, record_width, gap, name="record_cell")
    steps = keras.layers.RNN(cell, return_sequences=True, name="records_rnn")(
        steps_in, initial_state=state
    )
    raw_records, phases, mask = HistoryRecords(
        max_length, record_width, length, length_at, name="history_records"
    )(steps, attributes)
    heads = OutputHeads(record_layout, seed=None if seed is None else seed + 1, name="record_heads")
    records = keras.layers.TimeDistributed(heads, name="records")(raw_records)
    records = keras.layers.Multiply(name="records_masked")(
        [records, keras.layers.Reshape((max_length, 1), name="mask_column")(mask)]
    )
    return keras.Model([z_a, z_r, y], [attributes, records, phases, mask], name="history_generator")


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
