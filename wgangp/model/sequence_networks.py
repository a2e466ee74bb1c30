"""The generator of a history model (``data.time``): DoppelGANger's shape on this project's parts.

Generator G(z_attributes, z_records, onehot(class)): an MLP draws the history's attributes (the
table's attribute columns, its length, its start week and where in the week it starts: a whole day
of the week and a time of day, :class:`StartAngle`); a recurrent cell then draws the records,
``records_per_cell`` per step, each step fed its noise, the attributes, the class, the current time
of week and day, the record drawn before, its gap and the time since the history's start. Levels and
gaps are drawn inside the network (:func:`shape_blocks`: Gumbel-softmax while training, the drawn
level otherwise), so a record's draw is what the next records see. A record's time is drawn as whole
days and a move of the clock within a day, a share of a day on the training moves' logit scale
(:class:`RecordCell`): the phases the cell returns are the records' calendar positions and gaps,
consistent with the start by construction, and the next step sees them (what a recurrent network
cannot count by itself, it is told). A length mask (hard 0/1 forward, a sigmoid's gradient backward)
zeroes the records past the length.

The critics are :mod:`wgangp.model.history_critics`'. Every generator layer is built-in or
registered here, so the generator saves in Keras' native format and loads in safe mode."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import keras
import tensorflow as tf

from wgangp.data.transform.layout import Block, layout_width
from wgangp.model.heads import TAU, gumbel_softmax
from wgangp.model.networks import N_CLASSES

WEEK = 7 * 86_400.0
#: Time features per record: cos and sin of the week's angle, then of the day's, then the gap
#: (log seconds, as :func:`~wgangp.data.histories.windows.gap_feature` reads a real one).
PHASES = 5
_GAP_CENTRE, _GAP_SCALE = 8.0, 4.0
#: The length mask's sigmoid slope (its gradient; forward it is 0/1).
_SLOPE = 4.0
_TWO_PI = 2 * math.pi


def uniform_of(noise: tf.Tensor) -> tf.Tensor:
    """Standard normal draws -> uniform ones (their CDF), away from 0 and 1."""
    u = 0.5 * (1.0 + tf.math.erf(noise / math.sqrt(2.0)))
    return tf.clip_by_value(u, 1e-6, 1.0 - 1e-6)


def shape_blocks(
    raw: tf.Tensor, uniform: tf.Tensor, layout: Sequence[Block], training: bool | None
) -> tf.Tensor:
    """Each block of ``layout`` shaped by its kind, drawn with ``uniform`` noise of the same width:
    a categorical as a Gumbel-softmax sample while training (:func:`~wgangp.model.heads.
    gumbel_softmax`) and as the one-hot of its Gumbel-max draw (a level drawn from the softmax)
    otherwise; a missing indicator as its probability while training and a draw otherwise; a
    number as it is. Drawn here, not after the network, so what later records see is what was
    drawn: a burst's rows agree."""
    parts = []
    for block in layout:
        part, u = raw[:, block.start : block.stop], uniform[:, block.start : block.stop]
        if block.activation == "softmax":
            if training:
                part = gumbel_softmax(part, TAU, u)
            else:
                drawn = tf.argmax(part - tf.math.log(-tf.math.log(u)), axis=-1)
                part = tf.one_hot(drawn, block.width, dtype=part.dtype)
        elif block.activation == "sigmoid":
            p = tf.sigmoid(part)
            part = p if training else tf.cast(u < p, part.dtype)
        parts.append(part)
    return tf.concat(parts, -1)


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


def phase_features(angle: tf.Tensor) -> tf.Tensor:
    """[..., 1] angles within the week -> [..., 4]: cos, sin of it and of seven times it (the
    day's angle); a record's phases add its gap (:data:`PHASES`)."""
    return tf.concat([tf.cos(angle), tf.sin(angle), tf.cos(7 * angle), tf.sin(7 * angle)], -1)


@keras.saving.register_keras_serializable(package="wgangp")
class RecordCell(keras.layers.Layer):
    """One recurrent step: ``records_per_cell`` records, drawn (:func:`shape_blocks`), and their
    phases (module doc). Its input: each record's draw noise (``records_per_cell`` x the record
    width of standard normals), then the step's noise and the context.

    A record's time is drawn as whole days (its first slot, through the ``days`` log scale, rounded
    with a straight-through gradient) and a move of the clock within a day (one more output: a
    share of a day through a sigmoid, its logit scaled by ``moves``, the mean and deviation of the
    training rows' logits, so the move is smooth from a second to a day and never past it; the
    cell is fed the time of day it moves from, so a daily habit is a move that depends on it). The
    gap follows, never negative: ``days x 86400 + move``; read back as days and the move of the
    time of day, it is exact. On the logit scale a burst's minutes and a habit's hours are both
    in reach; starting from the table's own moves matters, as Adam moves an output by little more
    than its learning rate a step (a plain sigmoid started at half a day and drew no gap of
    minutes; a log scale of seconds crammed a habit's hours against the day's end).

    State: the GRU's, the current angle within the week, the records drawn so far, and a memory
    the next step is fed: the last record drawn (an autoregressive generator: a row knows the rows
    before it), its gap (a burst's next row knows it is in one) and the weeks elapsed since the
    history's start (the table covers a window of time: a customer's rows end inside it). The
    angle, the gap and the weeks carried on hold no gradient: a record's time moves its own phase,
    and the next steps see where the clock is without being blamed for it. A gap of minutes is
    steep in the days (its log's derivative is a day over the gap): carried on with its gradient,
    that factor compounded step after step until Adam's second moments overflowed.

    Without ``moves`` it is the cell of models saved before them: a plain sigmoid's share of a
    day, and a memory of the last record alone."""

    def __init__(
        self,
        units: int,
        records_per_cell: int,
        record_layout: Sequence[Block | Mapping[str, Any]],
        days: Sequence[float],
        moves: Sequence[float] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.moves = tuple(float(v) for v in moves) if moves is not None else None
        self.layout = tuple(
            b if isinstance(b, Block) else Block.from_dict(b) for b in record_layout
        )
        self.units, self.records_per_cell = units, records_per_cell
        self.record_width = layout_width(self.layout)
        self.days = tuple(float(v) for v in days)  # mean, std, low, high of log1p(days)
        self.gru = keras.layers.GRUCell(units, name="gru")
        self.out = keras.layers.Dense(records_per_cell * (self.record_width + 1), name="records")
        memory = self.record_width + (2 if self.moves is not None else 0)
        self.state_size = [units, 1, 1, memory]
        self.output_size = records_per_cell * (self.record_width + PHASES)

    @property
    def noise_width(self) -> int:
        """The draw noise at the head of each step's input."""
        return self.records_per_cell * self.record_width

    def build(self, input_shape: Any) -> None:
        # The step's input, the clock (phase_features: PHASES without the gap), the memory.
        width = int(input_shape[-1]) - self.noise_width + PHASES - 1 + self.state_size[-1]
        self.gru.build((None, width))
        self.out.build((None, self.units))
        self.built = True

    def call(
        self, inputs: tf.Tensor, states: Sequence[tf.Tensor], training: bool | None = None
    ) -> tuple[tf.Tensor, list]:
        h, angle, count, memory = states
        uniform = uniform_of(inputs[:, : self.noise_width])
        x = tf.concat([inputs[:, self.noise_width :], phase_features(angle), memory], -1)
        weeks = memory[:, -1:]  # elapsed since the start (in a memory with the moves')
        h, _ = self.gru(x, [h], training=training)
        raw = self.out(h)
        width, records, phases = self.record_width, [], []
        for s in range(self.records_per_cell):
            start = s * (width + 1)
            record = shape_blocks(
                raw[:, start : start + width],
                uniform[:, s * width : (s + 1) * width],
                self.layout,
                training,
            )
            record, turn, gap = self._move_clock(
                record, raw[:, start + width : start + width + 1],
                first=tf.cast(count > 0, record.dtype) if s == 0 else None,
            )  # fmt: skip
            angle = tf.math.floormod(angle + turn, _TWO_PI)
            weeks = weeks + turn / _TWO_PI
            records.append(record)
            phases.append(tf.concat([phase_features(angle), gap], -1))
        out = tf.concat([*records, *phases], -1)
        memory = records[-1]
        if self.moves is not None:
            memory = tf.concat(
                [memory, tf.stop_gradient(phases[-1][:, -1:]), tf.stop_gradient(weeks)], -1
            )
        return out, [h, tf.stop_gradient(angle), count + 1.0, memory]

    def _move_clock(
        self, record: tf.Tensor, forward: tf.Tensor, first: tf.Tensor | None
    ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        """The record with its days on whole days, the turn of the week's angle to its time
        (class doc) and its gap as the critics read it; ``first`` 0 for the history's first
        record, whose time is its start (its gap reads 0)."""
        mean, std, low, high = self.days
        soft = tf.math.expm1(bounded(mean + std * record[:, :1], low, high))
        days = soft + tf.stop_gradient(tf.round(soft) - soft)
        record = tf.concat([(tf.math.log1p(days) - mean) / std, record[:, 1:]], -1)
        mean, std = self.moves if self.moves is not None else (0.0, 1.0)
        share = tf.sigmoid(mean + std * forward)  # of a day: never a whole one
        turn = _TWO_PI * (days + share) / 7.0  # the week's angle moves a seventh of the day's
        gap = (tf.math.log1p((days + share) * 86_400.0) - _GAP_CENTRE) / _GAP_SCALE
        if first is not None:
            turn, gap = turn * first, gap * first
        return record, turn, gap

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config.update(units=self.units, records_per_cell=self.records_per_cell,
                      record_layout=[b.to_dict() for b in self.layout],
                      days=list(self.days),
                      moves=list(self.moves) if self.moves is not None else None)  # fmt: skip
        return config


@keras.saving.register_keras_serializable(package="wgangp")
class StartState(keras.layers.Layer):
    """The cell's first state from the attributes: the GRU's from a dense map, the angle from the
    start's (cos, sin) at ``phase_at``, no record drawn yet, and zeros for the cell's memory
    (``record_width``: the memory's width, the last record's alone in models saved before it)."""

    def __init__(self, units: int, phase_at: int, record_width: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.units, self.phase_at, self.record_width = units, phase_at, record_width
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
        none = tf.zeros_like(context[:, :1]) * tf.zeros([1, self.record_width], context.dtype)
        return [self.dense(context), angle, tf.zeros_like(angle), none]

    def compute_output_shape(self, input_shape: Any) -> list[tuple]:
        batch = input_shape[0]
        return [(batch, self.units), (batch, 1), (batch, 1), (batch, self.record_width)]

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config.update(units=self.units, phase_at=self.phase_at, record_width=self.record_width)
        return config


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


def straight_through(soft: tf.Tensor, hard: tf.Tensor) -> tf.Tensor:
    """``hard``'s values with ``soft``'s gradient."""
    return soft + tf.stop_gradient(hard - soft)


def bounded(x: tf.Tensor, low: float, high: float) -> tf.Tensor:
    """``x`` clipped into ``[low, high]``, with the gradient of ``x`` itself. A plain clip passes
    no gradient past its bound, so an output that drifted over it stays there whatever the critic
    says (generated gaps piled up on the longest one)."""
    return straight_through(x, tf.clip_by_value(x, low, high))


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
        mask = soft + tf.stop_gradient(hard - soft)
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
