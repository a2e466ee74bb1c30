"""The generator of a history model (``data.time``): DoppelGANger's shape on this project's parts.

Generator G(z_attributes, z_records, onehot(class)): an MLP draws the history's attributes (the
table's attribute columns, its length, its start week and where in the week it starts: a whole day
of the week and a time of day, :class:`StartAngle`); a recurrent cell then draws the records,
``records_per_cell`` per step, each step fed its noise, the attributes, the class, the current time
of week and day, the record drawn before, its gap and the time since the history's start
(:class:`~wgangp.model.record_cell.RecordCell`: what a recurrent network cannot count by itself, it
is told). A length mask (hard 0/1 forward, a sigmoid's gradient backward) zeroes the records past
the length.

The critics are :mod:`wgangp.model.history_critics`'. Every generator layer is built-in or
registered (here and in :mod:`~wgangp.model.record_cell`, which this module imports), so the
generator saves in Keras' native format and loads in safe mode."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import keras
import tensorflow as tf

from wgangp.data.histories.encoding import PHASES
from wgangp.data.transform.layout import Block, layout_width
from wgangp.model.networks import N_CLASSES
from wgangp.model.record_cell import (
    RecordCell,
    StartState,
    bounded,
    shape_blocks,
    straight_through,
    uniform_of,
)

#: The length mask's sigmoid slope (its gradient; forward it is 0/1).
_SLOPE = 4.0
_TWO_PI = 2 * math.pi


@keras.saving.register_keras_serializable(package="wgangp")
class SampledHeads(keras.layers.Layer):
    """:func:`shape_blocks` as a layer: raw outputs and their noise (standard normals) in."""

    def __init__(self, layout: Sequence[Block | Mapping[str, Any]], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.layout = tuple(b if isinstance(b, Block) else Block.from_dict(b) for b in layout)

    def call(self, raw: tf.Tensor, noise: tf.Tensor, training: bool | None = None) -> tf.Tensor:
        return shape_blocks(raw, uniform_of(noise), self.layout, training)

    def compute_output_shape(self, raw_shape: Any, noise_shape: Any) -> Any:
        return raw_shape

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "layout": [b.to_dict() for b in self.layout]}


@keras.saving.register_keras_serializable(package="wgangp")
class UnitCircle(keras.layers.Layer):
    """Two numbers onto the unit circle (a start's angle as its cos and sin): the start of
    models saved before :class:`StartAngle`."""

    def call(self, x: tf.Tensor) -> tf.Tensor:
        return x / tf.sqrt(tf.reduce_sum(tf.square(x), -1, keepdims=True) + 1e-6)


@keras.saving.register_keras_serializable(package="wgangp")
class StartAngle(keras.layers.Layer):
    """Three numbers -> a start's angle within the week as its cos and sin: the first a day of the
    week (whole, from 3.5 + 2x, with a straight-through gradient), the other two the time of day
    on the unit circle. Drawn as one angle of the week, the time of day is seven turns of it, and
    the generator put many starts at night, where real customers rarely start (docs/histories.md
    has the figures)."""

    def call(self, x: tf.Tensor) -> tf.Tensor:
        soft = bounded(3.5 + 2.0 * x[:, :1], 0.0, 6.999)
        day = straight_through(soft, tf.floor(soft))
        cos, sin = x[:, 1:2], x[:, 2:3]
        # atan2's gradient at (0, 0) is 0/0: that one point reads as the angle 0.
        cos = tf.where(tf.abs(cos) + tf.abs(sin) < 1e-12, tf.ones_like(cos), cos)
        time_of_day = tf.math.floormod(tf.math.atan2(sin, cos), _TWO_PI)
        week = (_TWO_PI * day + time_of_day) / 7.0
        return tf.concat([tf.cos(week), tf.sin(week)], -1)

    def compute_output_shape(self, input_shape: Any) -> tuple:
        return (input_shape[0], 2)


@keras.saving.register_keras_serializable(package="wgangp")
class WholeAttributes(keras.layers.Layer):
    """The history's length and start week as whole numbers, as real histories have them: the
    length slot (at ``length_at``, its log scale ``length``) holds the scale of a whole number of
    records, the week slot after it (scale ``week``: mean, std, low, high) a whole week; both
    with a straight-through gradient. A critic would tell a fractional length from a real one at
    a glance, whatever else the generator got right."""

    def __init__(
        self, length: Sequence[float], week: Sequence[float], length_at: int, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.length, self.week = tuple(map(float, length)), tuple(map(float, week))
        self.length_at = length_at

    def call(self, attributes: tf.Tensor) -> tf.Tensor:
        at = self.length_at
        mean, std, low, high = self.length
        rows = tf.exp(bounded(mean + std * attributes[:, at : at + 1], low, high))
        length = (tf.math.log(straight_through(rows, tf.round(rows))) - mean) / std
        mean, std, low, high = self.week
        weeks = bounded(mean + std * attributes[:, at + 1 : at + 2], low, high)
        week = (straight_through(weeks, tf.round(weeks)) - mean) / std
        return tf.concat([attributes[:, :at], length, week, attributes[:, at + 2 :]], -1)

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config.update(length=list(self.length), week=list(self.week), length_at=self.length_at)
        return config


@keras.saving.register_keras_serializable(package="wgangp")
class HistoryRecords(keras.layers.Layer):
    """The cell's steps -> records [B, T, R] (the first one's days slot 0) and phases [B, T, 4],
    both zero past the length, and the mask [B, T]: 1 for the first round(length) records (a
    sigmoid's gradient in the length), the length read from the attributes at ``length_at``
    through its log scale."""

    def __init__(
        self, max_length: int, record_width: int, length: Sequence[float], length_at: int, **kw: Any
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
        rows = tf.exp(bounded(mean + std * z, low, high))
        places = tf.range(self.max_length, dtype=rows.dtype)[None, :]
        soft = tf.sigmoid(_SLOPE * (rows - places - 0.5))
        hard = tf.cast(places < tf.round(rows), rows.dtype)
        mask = straight_through(soft, hard)
        # The first record has no gap (its days read 0, as a real history's first row's do).
        first = tf.one_hot([[0]], self.max_length * self.record_width, dtype=raw.dtype)
        keep = 1.0 - tf.reshape(first, [1, self.max_length, self.record_width])
        return [raw * keep * mask[..., None], phases * mask[..., None], mask]

    def compute_output_shape(self, steps_shape: Any, attributes_shape: Any) -> list[tuple]:
        batch = steps_shape[0]
        return [(batch, self.max_length, self.record_width), (batch, self.max_length, PHASES),
                (batch, self.max_length)]  # fmt: skip

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config.update(max_length=self.max_length, record_width=self.record_width,
                      length=list(self.length), length_at=self.length_at)  # fmt: skip
        return config


def noise_widths(
    attribute_layout: Sequence[Block], record_layout: Sequence[Block], latent_dim: int,
    records_per_cell: int,
) -> tuple[int, int]:  # fmt: skip
    """The noise of the attributes and of each recurrent step: the latent noise and the draws'."""
    return (
        latent_dim + layout_width(attribute_layout),
        latent_dim + records_per_cell * layout_width(record_layout),
    )


def build_history_generator(
    *,
    attribute_layout: Sequence[Block],
    record_layout: Sequence[Block],
    max_length: int,
    records_per_cell: int,
    latent_dim: int,
    hidden: Sequence[int],
    rnn_units: int,
    days: Sequence[float],
    length: Sequence[float],
    week: Sequence[float],
    length_at: int,
    moves: Sequence[float] | None = None,
) -> keras.Model:
    """G([z_attributes [B, Za], z_records [B, steps, Zr], onehot [B, 2]]) -> [attributes [B, A],
    records [B, T, R], phases [B, T, 4], mask [B, T]] (module doc); the noise widths are
    :func:`noise_widths`' (each a latent part, then the draws' standard normals)."""
    cells = max_length // records_per_cell
    record_width = layout_width(record_layout)
    attribute_noise, step_noise = noise_widths(
        attribute_layout, record_layout, latent_dim, records_per_cell
    )
    z_a = keras.Input((attribute_noise,), name="z_attributes")
    z_r = keras.Input((cells, step_noise), name="z_records")
    y = keras.Input((N_CLASSES,), name="label_onehot")
    latent, draws = z_a[:, :latent_dim], z_a[:, latent_dim:]
    h = keras.layers.Concatenate(name="attributes_in")([latent, y])
    for i, width in enumerate(hidden):
        h = keras.layers.Dense(width, name=f"attributes_dense_{i}")(h)
        h = keras.layers.LeakyReLU(negative_slope=0.2, name=f"attributes_leaky_{i}")(h)
    raw = keras.layers.Dense(layout_width(attribute_layout), name="attributes_out")(h)
    shaped = SampledHeads(attribute_layout, name="attribute_heads")(raw, draws)
    shaped = WholeAttributes(length, week, length_at, name="whole_attributes")(shaped)
    start = StartAngle(name="start_angle")(keras.layers.Dense(3, name="start_out")(h))
    attributes = keras.layers.Concatenate(name="attributes")([shaped, start])
    context = keras.layers.Concatenate(name="context")([attributes, y])
    steps_in = keras.layers.Concatenate(name="steps_in")(
        [z_r, keras.layers.RepeatVector(cells, name="context_per_step")(context)]
    )
    phase_at = layout_width(attribute_layout)
    cell = RecordCell(rnn_units, records_per_cell, record_layout, days, moves, name="record_cell")
    memory = cell.state_size[-1]
    state = StartState(rnn_units, phase_at, memory, name="start_state")(context)
    steps = keras.layers.RNN(cell, return_sequences=True, name="records_rnn")(
        steps_in, initial_state=state
    )
    records, phases, mask = HistoryRecords(
        max_length, record_width, length, length_at, name="history_records"
    )(steps, attributes)
    return keras.Model([z_a, z_r, y], [attributes, records, phases, mask], name="history_generator")
