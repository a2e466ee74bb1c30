"""The history model's networks and training step: the generator's clock agrees with its own
records, it saves and loads in safe mode, and the compiled step trains finite (tiny sizes)."""

from __future__ import annotations

from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf
from support.histories import prepared_histories, untrained_history_synthesizer

from wgangp.data.histories.encoding import HistoryEncoding
from wgangp.data.histories.windows import gap_feature
from wgangp.model.record_cell import RecordCell
from wgangp.model.sequence_networks import StartAngle
from wgangp.serving.histories import HistorySynthesizer


@pytest.fixture(scope="module")
def model() -> HistorySynthesizer:
    return untrained_history_synthesizer()


def _outputs(model: HistorySynthesizer, n: int = 24, seed: int = 0) -> list[np.ndarray]:
    first, cells, step = model.noise_shape
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n, first + cells * step)).astype(np.float32)
    classes = np.arange(n) % 2
    return list(model._generate(z, classes, seed))


def test_the_clock_agrees_with_the_start_and_the_gaps(model: HistorySynthesizer) -> None:
    """Each record's phase is its start plus its gaps, as sampling reads the times back."""
    attributes, records, phases, mask = _outputs(model)
    enc = model.encoding
    present = mask > 0.5
    history, position = np.nonzero(present)
    width = enc.attributes.width
    angle = np.arctan2(attributes[:, width + 3], attributes[:, width + 2])
    start = np.mod(angle, 2 * np.pi) / (2 * np.pi) * 7 * 86_400.0
    gaps = model._gaps(records[present][:, 0], phases[present], position)
    elapsed = np.cumsum(gaps)
    first = np.r_[0, np.cumsum(present.sum(1))[:-1]]
    seconds = start[history] + elapsed - elapsed[first[history]]
    week = 2 * np.pi * seconds / (7 * 86_400.0)
    np.testing.assert_allclose(np.cos(week), phases[present][:, 0], atol=2e-3)
    np.testing.assert_allclose(np.sin(week), phases[present][:, 1], atol=2e-3)
    assert (gaps >= 0).all()
    feature = gap_feature(gaps, position > 0)  # the gap the critics read, as a real one's
    np.testing.assert_allclose(feature, phases[present][:, 4], atol=2e-3)


def test_records_are_drawn_and_masked_past_the_length(model: HistorySynthesizer) -> None:
    _, records, phases, mask = _outputs(model)
    lengths = mask.sum(1)
    assert set(np.unique(mask)) <= {0.0, 1.0}
    assert lengths.min() >= 1 and lengths.max() <= model.encoding.max_length
    assert (np.cumsum(mask[:, ::-1], 1)[:, ::-1] == 0).sum() == (mask == 0).sum()  # a prefix
    assert not records[mask == 0].any() and not phases[mask == 0].any()
    assert not records[:, 0, 0].any()  # a first record has no days
    for block in model.encoding.record_layout:
        if block.kind == "categorical":  # each level drawn: a one-hot
            part = records[mask == 1][:, block.start : block.stop]
            np.testing.assert_array_equal(part.sum(1), 1.0)


def test_the_generator_loads_in_safe_mode(model: HistorySynthesizer, tmp_path: Path) -> None:
    path = tmp_path / "generator.keras"
    model.generator.save(path)
    loaded = keras.saving.load_model(path, compile=False, safe_mode=True)
    first, cells, step = model.noise_shape
    z = np.random.default_rng(1).standard_normal((5, first + cells * step)).astype(np.float32)
    inputs = [
        z[:, :first],
        z[:, first:].reshape(5, cells, step),
        np.eye(2, dtype=np.float32)[[0] * 5],
    ]
    for a, b in zip(model.generator(inputs), loaded(inputs), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), atol=1e-5)


def test_a_gap_past_its_bound_still_gets_the_critics_gradient(model: HistorySynthesizer) -> None:
    """The days a record skips are clipped to the longest the table allows, but the critic's
    gradient still reaches the output past that bound: a plain clip passed none, and generated
    gaps piled up on the bound for good."""
    days = model.encoding.days.parameters()
    mean, std, _, high = days
    cell = RecordCell(4, 1, model.encoding.record_layout, days)
    width = cell.record_width
    far = (high + 5.0 - mean) / std  # the days slot well past the bound
    record = tf.Variable(np.r_[far, np.zeros(width - 1)][None, :].astype(np.float32))
    with tf.GradientTape() as tape:
        _, _, gap = cell._move_clock(record, tf.zeros([1, 1]), first=None)
    (grad,) = tape.gradient(gap, [record])
    assert float(grad[0, 0]) > 0.0
    longest = (np.round(np.expm1(high)) + 0.5) * 86_400.0  # the bound's days, half a day on
    expected = gap_feature(np.array([longest]), np.array([True]))[0]
    assert float(gap[0, 0]) == pytest.approx(float(expected), abs=1e-3)


@pytest.mark.parametrize("seconds", [30.0, 600.0, 5 * 3600.0, 86_000.0])
def test_the_clock_moves_within_a_day_on_the_training_moves_scale(
    model: HistorySynthesizer, seconds: float
) -> None:
    """The cell's move within a day is a share of a day on the training moves' logit scale, so a
    burst's minutes and a habit's hours are both in reach of an output near 0 (a plain share of
    a day put minutes at its saturated end)."""
    days, moves = model.encoding.days.parameters(), model.encoding.moves
    cell = RecordCell(4, 1, model.encoding.record_layout, days, moves)
    no_days = (np.log1p(0.0) - days[0]) / days[1]
    record = tf.constant(np.r_[no_days, np.zeros(cell.record_width - 1)][None, :], tf.float32)
    share = seconds / 86_400.0  # the output that lands on ``seconds``, by hand
    forward = (np.log(share / (1 - share)) - moves[0]) / moves[1]
    assert abs(forward) < 4  # in reach of an output that starts near 0
    _, turn, gap = cell._move_clock(record, tf.constant([[forward]], tf.float32), first=None)
    expected = gap_feature(np.array([seconds]), np.array([True]))[0]
    assert float(gap[0, 0]) == pytest.approx(float(expected), abs=1e-4)
    assert float(turn[0, 0]) == pytest.approx(2 * np.pi * seconds / (7 * 86_400.0), rel=1e-3)


def test_the_clock_the_next_step_is_fed_holds_no_gradient(model: HistorySynthesizer) -> None:
    """The angle, the gap and the weeks a step hands on are where the clock is, not outputs to
    blame: a gap of minutes fed back with its gradient multiplied it at every step. The record
    handed on keeps its gradient (a row knows, and answers for, the row before)."""
    days, moves = model.encoding.days.parameters(), model.encoding.moves
    cell = RecordCell(4, 1, model.encoding.record_layout, days, moves)
    width = cell.record_width
    inputs = tf.random.stateless_normal([3, width + 6], seed=[0, 1])
    cell.build(inputs.shape)
    states = [tf.zeros([3, 4]), tf.zeros([3, 1]), tf.ones([3, 1]), tf.zeros([3, width + 2])]
    with tf.GradientTape(persistent=True) as tape:
        _, (_, angle, _, memory) = cell(inputs, states, training=True)
        record, gap, weeks = memory[:, :width], memory[:, width : width + 1], memory[:, -1:]
    weights = cell.trainable_variables

    def blamed(t: tf.Tensor) -> bool:
        grads = tape.gradient(t, weights)
        return any(g is not None and bool(tf.reduce_any(g != 0.0)) for g in grads)

    assert not any(blamed(clock) for clock in (angle, gap, weeks))
    assert blamed(record)


def test_a_cell_saved_before_the_log_clock_loads_as_it_was(model: HistorySynthesizer) -> None:
    """A bundle's cell config without ``moves`` is the share-of-a-day cell, whose memory is the
    last record alone: its saved weights keep their shapes and its gaps their meaning."""
    days, moves = model.encoding.days.parameters(), model.encoding.moves
    config = RecordCell(4, 1, model.encoding.record_layout, days, moves).get_config()
    config.pop("moves")
    old = RecordCell.from_config(config)
    new = RecordCell(4, 1, model.encoding.record_layout, days, moves)
    assert old.moves is None and old.state_size[-1] == old.record_width
    assert new.state_size[-1] == new.record_width + 2
    _, _, gap = old._move_clock(tf.zeros([1, old.record_width]), tf.zeros([1, 1]), first=None)
    half_a_day = gap_feature(np.array([43_200.0]), np.array([True]))[0]  # sigmoid(0) of a day
    assert float(gap[0, 0]) == pytest.approx(float(half_a_day), abs=1e-3)


def test_a_start_is_a_whole_day_of_the_week_and_a_time_of_day() -> None:
    """The start's angle puts the day and the time of day apart (module doc), and its gradient
    is finite everywhere, the origin of the time of day's circle included."""
    x = tf.Variable([[0.0, 0.0, 1.0], [-0.26, -1.0, 0.0], [5.0, 0.0, 0.0]], tf.float32)
    with tf.GradientTape() as tape:
        start = StartAngle()(x)
    (grad,) = tape.gradient(start, [x])
    week = np.mod(np.arctan2(start[:, 1], start[:, 0]), 2 * np.pi) / (2 * np.pi) * 7 * 86_400.0
    # day 3 at 06:00; day 2 (3.5 - 0.52, floored) at 12:00; day 6 (bounded) at 00:00 (the origin)
    expected = [3 * 86_400 + 6 * 3600, 2 * 86_400 + 12 * 3600, 6 * 86_400]
    np.testing.assert_allclose(week, expected, atol=1)
    assert np.isfinite(grad.numpy()).all()


@pytest.mark.slow  # tracing the step takes half a minute
def test_the_compiled_step_trains_finite_and_traces_once() -> None:
    from wgangp.step.history_step import HistoryStep

    cfg, data = prepared_histories(None, "trainer.steps_per_call=2")
    windows = data.windows("train", cfg.history.max_length)
    encoding = HistoryEncoding.fit(windows, data.roles, data.rows.schema, cfg)
    step = HistoryStep(cfg, encoding, encoding.arrays(windows))
    first, second = step.advance(2), step.advance(2)
    assert first.completed == second.completed == 2 and second.bad_step == -1
    assert np.isfinite(second.metrics).all()
    assert step.tracing_count() == 1 and int(step.step.numpy()) == 4
