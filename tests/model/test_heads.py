"""The generator's output heads: near one-hot categoricals while training, probabilities when
sampling, finite gradients whatever the Gumbel noise, deterministic draws, a savable generator."""

from __future__ import annotations

from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf

from wgangp.data.transform.layout import Block
from wgangp.model.heads import OutputHeads, gumbel_softmax
from wgangp.model.networks import build_generator

LAYOUT = (
    Block("amount", "continuous", 0, 1),
    Block("amount", "missing", 1, 1),
    Block("colour", "categorical", 2, 3),
    Block("count", "integer", 5, 1),
    Block("size", "categorical", 6, 4),
)
WIDTH = 10


def _tiny_model(seed: int = 0) -> keras.Model:
    x = keras.Input((4,))
    init = keras.initializers.RandomNormal(0, 0.5, seed=0)
    logits = keras.layers.Dense(WIDTH, kernel_initializer=init)(x)
    return keras.Model(x, [logits, OutputHeads(LAYOUT, seed=seed)(logits)])


def _inputs(rows: int = 512) -> np.ndarray:
    return np.random.default_rng(0).normal(size=(rows, 4)).astype(np.float32)


def test_training_rows_are_one_hot_like_and_sampling_rows_probabilities() -> None:
    model = _tiny_model()
    logits, trained = (t.numpy() for t in model(_inputs(), training=True))
    _, sampled = (t.numpy() for t in model(_inputs(), training=False))
    for block in (LAYOUT[2], LAYOUT[4]):
        hard = trained[:, block.start : block.stop]
        soft = sampled[:, block.start : block.stop]
        np.testing.assert_allclose(hard.sum(axis=1), 1.0, rtol=1e-5)
        np.testing.assert_allclose(soft.sum(axis=1), 1.0, rtol=1e-5)
        expected = tf.nn.softmax(logits[:, block.start : block.stop]).numpy()
        np.testing.assert_allclose(soft, expected, rtol=1e-5, atol=1e-7)
        # Gumbel-softmax at tau 0.2: near one-hot rows; plain softmax of the same logits: spread
        assert hard.max(axis=1).mean() > 0.85 and np.mean(hard.max(axis=1) > 0.9) > 0.6
        assert soft.max(axis=1).mean() < 0.7 and np.mean(soft.max(axis=1) > 0.9) < 0.05
    for block in (LAYOUT[0], LAYOUT[3]):  # numbers pass through, in both modes
        np.testing.assert_array_equal(trained[:, block.start], logits[:, block.start])
        np.testing.assert_array_equal(sampled[:, block.start], logits[:, block.start])
    indicator = sampled[:, LAYOUT[1].start]
    np.testing.assert_allclose(indicator, 1 / (1 + np.exp(-logits[:, 1])), rtol=1e-5)


def test_gumbel_noise_is_deterministic_per_seed() -> None:
    x = _inputs(64)
    first, second, other = _tiny_model(7), _tiny_model(7), _tiny_model(8)
    other.set_weights(first.get_weights())
    second.set_weights(first.get_weights())
    a, b, c = (m(x, training=True)[1].numpy() for m in (first, second, other))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    heads = OutputHeads(LAYOUT)
    logits = tf.constant(np.random.default_rng(1).normal(size=(64, WIDTH)), tf.float32)
    keyed = [heads(logits, training=True, seed=tf.constant([3, 5])).numpy() for _ in range(2)]
    np.testing.assert_array_equal(keyed[0], keyed[1])  # an explicit seed: a pure function
    assert not np.array_equal(keyed[0], heads(logits, training=True, seed=tf.constant([3, 6])))
    assert any("seed_generator" in v.path for v in heads.non_trainable_variables)


def test_gradients_are_finite_even_at_extreme_noise_and_logits() -> None:
    logits = tf.Variable(np.array([[80.0, -80.0, 0.0], [0.0, 0.0, 0.0]], np.float32))
    for uniform in (np.zeros((2, 3)), np.ones((2, 3)), np.array([[0.0, 1.0, 0.5]] * 2)):
        with tf.GradientTape() as tape:
            out = gumbel_softmax(logits, 0.2, tf.constant(uniform, tf.float32))
            loss = tf.reduce_sum(out * tf.constant([[1.0, 2.0, 3.0]]))
        assert np.isfinite(out.numpy()).all()
        assert np.isfinite(tape.gradient(loss, logits).numpy()).all()
    model = _tiny_model()
    with tf.GradientTape() as tape:
        _, rows = model(_inputs(), training=True)
        loss = tf.reduce_mean(tf.square(rows))
    grads = tape.gradient(loss, model.trainable_variables)
    assert all(np.isfinite(g.numpy()).all() for g in grads)


def test_build_generator_without_a_layout_is_unchanged() -> None:
    generator = build_generator(4, 30, [8])
    assert [layer.name for layer in generator.layers][-1] == "generator_out"
    assert not any(isinstance(layer, OutputHeads) for layer in generator.layers)


def test_a_generator_with_heads_saves_and_loads_in_safe_mode(tmp_path: Path) -> None:
    generator = build_generator(4, WIDTH, [8], layout=LAYOUT, seed=1)
    z = np.random.default_rng(2).normal(size=(16, 4)).astype(np.float32)
    y = np.tile(np.eye(2, dtype=np.float32), (8, 1))
    rows = generator([z, y], training=False).numpy()
    for block in (LAYOUT[2], LAYOUT[4]):
        np.testing.assert_allclose(rows[:, block.start : block.stop].sum(axis=1), 1.0, rtol=1e-5)
    path = tmp_path / "generator.keras"
    generator.save(path)
    loaded = keras.saving.load_model(path, safe_mode=True)
    np.testing.assert_allclose(loaded([z, y], training=False).numpy(), rows, rtol=1e-6)
    heads = loaded.get_layer("generator_heads")
    assert heads.layout == LAYOUT and heads.tau == 0.2


def test_a_layout_that_does_not_fit_is_refused() -> None:
    with pytest.raises(ValueError, match="spans 10 columns, not 12"):
        build_generator(4, 12, [8], layout=LAYOUT)
    with pytest.raises(ValueError, match="starts at 3, expected 2"):
        OutputHeads((Block("a", "continuous", 0, 2), Block("b", "categorical", 3, 2)))
    with pytest.raises(ValueError, match="temperature"):
        OutputHeads(LAYOUT, tau=0.0)
