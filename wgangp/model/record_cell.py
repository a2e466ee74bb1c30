"""One recurrent step of a history generator: a record cell that draws ``records_per_cell``
records and moves the history's clock (:class:`RecordCell`), the state it starts from
(:class:`StartState`), and the drawing helpers the generator's other layers share.

Levels and gaps are drawn inside the network (:func:`shape_blocks`: Gumbel-softmax while training,
the drawn level otherwise), so a record's draw is what the next records see. The phases the cell
returns are the records' calendar positions and gaps, on the scales the data reads a real row's
with (:mod:`wgangp.data.histories.windows`: ``week_phases``, ``gap_feature``). Every layer is
registered, so a generator saves in Keras' native format and loads in safe mode; the assembled
generator is :mod:`wgangp.model.sequence_networks`'."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import keras
import tensorflow as tf

from wgangp.data.histories.encoding import PHASES
from wgangp.data.histories.windows import DAY, GAP_CENTRE, GAP_SCALE
from wgangp.data.transform.layout import Block, layout_width
from wgangp.model.heads import TAU, gumbel_softmax

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


def straight_through(soft: tf.Tensor, hard: tf.Tensor) -> tf.Tensor:
    """``hard``'s values with ``soft``'s gradient."""
    return soft + tf.stop_gradient(hard - soft)


def bounded(x: tf.Tensor, low: float, high: float) -> tf.Tensor:
    """``x`` clipped into ``[low, high]``, with the gradient of ``x`` itself. A plain clip passes
    no gradient past its bound, so an output that drifted over it stays there whatever the critic
    says (generated gaps piled up on the longest one)."""
    return straight_through(x, tf.clip_by_value(x, low, high))


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
        days = straight_through(soft, tf.round(soft))
        record = tf.concat([(tf.math.log1p(days) - mean) / std, record[:, 1:]], -1)
        mean, std = self.moves if self.moves is not None else (0.0, 1.0)
        share = tf.sigmoid(mean + std * forward)  # of a day: never a whole one
        turn = _TWO_PI * (days + share) / 7.0  # the week's angle moves a seventh of the day's
        gap = (tf.math.log1p((days + share) * DAY) - GAP_CENTRE) / GAP_SCALE
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
