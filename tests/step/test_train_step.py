"""The compiled training step: changes weights, stays finite, traces once, is deterministic."""

from __future__ import annotations

import keras
import numpy as np
import pytest
import scipy.special
import scipy.stats
import tensorflow as tf
from support.configs import TINY, compose

from wgangp.config import to_config
from wgangp.model.networks import pack_rows
from wgangp.step.batch import ClassBalancedRows
from wgangp.step.random_streams import (
    random_alg,
    stateless_standard_normal,
    step_seed,
    uniform_to_normal,
)
from wgangp.step.train_step import METRICS, TrainStep, build_train_step


def tiny_trainer(extra: list[str] | None = None) -> TrainStep:
    cfg = to_config(compose(TINY + (extra or [])))
    keras.utils.set_random_seed(cfg.seed)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 30)).astype(np.float32)
    y = (np.arange(400) % 20 == 0).astype(int)
    return build_train_step(cfg, ClassBalancedRows(x, y))


def weights(model: keras.Model) -> list[np.ndarray]:
    return [np.array(v) for v in model.weights]


@pytest.fixture(scope="module")
def trainer() -> TrainStep:
    return tiny_trainer()


def test_one_step_changes_weights_and_stays_finite(trainer) -> None:
    before_g, before_d = weights(trainer.generator), weights(trainer.critic)
    result = trainer.advance(1)
    assert result.completed == 1 and result.bad_step == -1
    assert result.metrics.shape == (1, len(METRICS)) and np.isfinite(result.metrics).all()
    after_g, after_d = weights(trainer.generator), weights(trainer.critic)
    assert all(np.isfinite(w).all() for w in after_g + after_d)
    assert any(not np.array_equal(o, n) for o, n in zip(before_g, after_g, strict=True))
    assert any(not np.array_equal(o, n) for o, n in zip(before_d, after_d, strict=True))


def test_no_retracing_across_calls_and_chunk_sizes(trainer) -> None:
    for k in (3, 1, 2, 3):
        trainer.advance(k)
    assert trainer.tracing_count() == 1
    assert int(trainer.step.numpy()) == 1 + 3 + 1 + 2 + 3


@pytest.mark.slow
def test_same_seed_same_losses() -> None:
    a, b = tiny_trainer(), tiny_trainer()
    np.testing.assert_array_equal(a.advance(3).metrics, b.advance(3).metrics)


def test_loop_drawing_a_step_ahead_trains_on_each_steps_own_batches() -> None:
    """The loop draws step s+1's batches during step s; a step drawing its own gives the same."""
    looped, stepped = tiny_trainer(["trainer.steps_per_call=3"]), tiny_trainer()
    stepped.generator.set_weights(looped.generator.get_weights())
    stepped.critic.set_weights(looped.critic.get_weights())
    expected = np.stack(
        [
            stepped.generator_step(step, stepped.batches.draw(step))[1].numpy()
            for step in (tf.constant(s, tf.int64) for s in range(3))
        ]
    )
    np.testing.assert_allclose(looped.advance(3).metrics, expected, rtol=0, atol=1e-6)
    for u, v in zip(weights(looped.critic), weights(stepped.critic), strict=True):
        np.testing.assert_allclose(u, v, rtol=0, atol=1e-6)


def _random_ops(trainer: TrainStep) -> int:
    """Stateless random ops in the traced chunk, the loop body's function included."""
    concrete = trainer.train_chunk.get_concrete_function(
        tf.TensorSpec([], tf.int64), tf.TensorSpec([], tf.int32)
    )
    graph = concrete.graph.as_graph_def()
    nodes = [*graph.node, *(n for f in graph.library.function for n in f.node_def)]
    return sum(n.op.startswith("StatelessRandom") for n in nodes)


def test_one_step_per_call_draws_no_step_ahead() -> None:
    """With K=1 a step drawn ahead would be thrown away; with K>1 the loop draws one more."""
    one, two = (
        tiny_trainer(["trainer.steps_per_call=1"]),
        tiny_trainer(["trainer.steps_per_call=2"]),
    )
    per_step = _random_ops(one)
    assert per_step > 0
    assert _random_ops(two) == 2 * per_step
    result = one.advance(1)
    assert result.completed == 1 and np.isfinite(result.metrics).all()


@pytest.mark.parametrize("jit_compile", [False, True])
def test_noise_is_standard_normal_and_finite(jit_compile: bool) -> None:
    """Noise is the inverse CDF of Philox (TF's kernels) or Threefry (XLA) uniforms."""
    alg = random_alg(jit_compile)
    draw = tf.function(
        lambda seed: stateless_standard_normal([1_000_000], seed, alg), jit_compile=jit_compile
    )
    z = draw(step_seed(0, 3, 1)).numpy()
    assert np.isfinite(z).all() and np.abs(z).max() < 5.7
    assert abs(z.mean()) < 0.005 and abs(z.std() - 1.0) < 0.005
    assert scipy.stats.kstest(z, "norm").pvalue > 0.01  # fixed seed: a fixed verdict
    again = draw(step_seed(0, 3, 1)).numpy()
    np.testing.assert_array_equal(z, again)


@pytest.mark.parametrize("jit_compile", [False, True])
def test_inverse_cdf_noise_is_finite_and_symmetric_at_the_uniform_grids_ends(
    jit_compile: bool,
) -> None:
    """u = 0 would be erfinv(-1) = -inf: the cell midpoints keep both ends finite, mirrored."""
    ends = tf.constant([0.0, 1.0 - 2.0**-23], tf.float32)
    lowest, highest = tf.function(uniform_to_normal, jit_compile=jit_compile)(ends).numpy()
    assert np.isfinite([lowest, highest]).all()
    assert lowest == -highest
    np.testing.assert_allclose(highest, scipy.special.ndtri(1.0 - 2.0**-24), rtol=1e-5)


@pytest.mark.parametrize("jit_compile", [False, True])
def test_class_balanced_sampler_draws_half_frauds(jit_compile: bool) -> None:
    """Philox eagerly (TF's kernels), Threefry under XLA (the generator of an XLA run)."""
    x = np.arange(2000, dtype=np.float32).reshape(1000, 2)
    y = (np.arange(1000) < 10).astype(int)  # 1% frauds
    rows = ClassBalancedRows(x, y)
    alg = random_alg(jit_compile)
    draw = tf.function(lambda seed: rows.draw(4000, seed, alg), jit_compile=jit_compile)
    rows, labels = draw(step_seed(0, 5, 0))
    share = float(np.mean(labels.numpy()))
    assert 0.45 < share < 0.55
    frauds = rows.numpy()[labels.numpy() == 1]
    assert set(frauds[:, 0].astype(int)) <= set(x[:10, 0].astype(int))
    normals = rows.numpy()[labels.numpy() == 0]
    assert set(normals[:, 0].astype(int)) <= set(x[10:, 0].astype(int))
    assert len(set(normals[:, 0].astype(int))) > 800  # uniform over the 990 normal rows
    again, _ = draw(step_seed(0, 5, 0))
    np.testing.assert_array_equal(rows.numpy(), again.numpy())
    other, _ = draw(step_seed(0, 6, 0))
    assert not np.array_equal(rows.numpy(), other.numpy())


def test_packed_critic_judges_packs_with_one_alpha_and_one_norm_each() -> None:
    pac = 4
    packed = tiny_trainer([f"model.critic.pac={pac}"])
    assert packed.critic.input_shape[0][-1] == pac * 30
    step = tf.constant(0, tf.int64)
    batch = packed.batches.draw(step)
    assert batch.real.shape == (packed.tc.n_critic, 32, 30)  # one slice per critic iteration
    fakes = packed.fake_rows(batch)
    q = packed.critic_update(batch, 0, fakes)
    assert q.penalty.norms.shape == (32 // pac,)
    # The penalty by hand: packs of real and fake rows, the first row's alpha for each pack.
    fake = packed.generator([batch.z[0], batch.onehot[0]], training=True)
    np.testing.assert_allclose(fakes[0].numpy(), fake.numpy(), rtol=1e-5, atol=1e-6)
    real, onehot, fake = (pack_rows(t, pac) for t in (batch.real[0], batch.onehot[0], fake))
    alpha = batch.alpha[0].numpy()[::pac]
    x_hat = tf.constant(real.numpy() + alpha * (fake.numpy() - real.numpy()))
    with tf.GradientTape() as tape:
        tape.watch(x_hat)
        scores = packed.critic([x_hat, onehot], training=True)
    norms = np.sqrt((tape.gradient(scores, x_hat).numpy() ** 2).sum(axis=1) + 1e-12)
    np.testing.assert_allclose(q.penalty.norms.numpy(), norms, rtol=1e-5)
    np.testing.assert_allclose(q.penalty.value.numpy(), np.mean((norms - 1) ** 2), rtol=1e-5)
    result = packed.advance(2)
    assert result.completed == 2 and np.isfinite(result.metrics).all()


def test_pack_rows_lays_consecutive_rows_side_by_side() -> None:
    rows = tf.reshape(tf.range(8.0), [4, 2])
    np.testing.assert_array_equal(pack_rows(rows, 2).numpy(), [[0, 1, 2, 3], [4, 5, 6, 7]])
    assert pack_rows(rows, 1) is rows
