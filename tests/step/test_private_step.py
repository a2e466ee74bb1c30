"""The training step under privacy (:mod:`wgangp.step.private_step`): Poisson sampling of
entities, one row each, and the critic trained by DP-SGD."""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf
from support.configs import TINY, compose

from wgangp.config import to_config
from wgangp.privacy.accountant import Budget
from wgangp.privacy.plan import plan_training
from wgangp.step.batch import ClassBalancedRows
from wgangp.step.dp_sgd import private_critic_gradients
from wgangp.step.private_step import (
    EntityPools,
    PrivateTrainStep,
    SampleChunks,
    chunk_rows,
    entity_classes,
)
from wgangp.step.random_streams import stateless_standard_normal, step_seed
from wgangp.step.train_step import METRICS

SEED = tf.constant([3, 7], tf.int64)


def _table() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """60 entities: entity 0 holds 500 rows, entities 50-59 are rare (and hold rows of the rest
    too, which never train); each row's first feature is its entity."""
    entities = np.concatenate([np.zeros(500, int), np.repeat(np.arange(1, 60), 3)])
    classes = ((entities >= 50) & (np.arange(len(entities)) % 3 != 0)).astype(int)
    x = np.column_stack([entities, np.arange(len(entities))]).astype(np.float32)
    return x, classes, entities


def test_an_entity_is_of_the_rare_class_when_it_holds_a_rare_row() -> None:
    _, classes, entities = _table()
    codes, of_class = entity_classes(classes, entities)
    assert list(codes) == list(range(60))
    assert list(np.flatnonzero(of_class)) == list(range(50, 60))


def test_each_sampled_entity_gives_one_row_of_its_own_class() -> None:
    x, classes, entities = _table()
    pools = EntityPools(x, classes, entities)
    assert pools.counts == [50, 10]
    seen = np.zeros(60)
    draws = 400
    for i in range(draws):
        rows, labels = pools.sample((0.2, 0.5), tf.constant([i, 1], tf.int64), "philox")
        rows, labels = rows.numpy(), labels.numpy()
        who = rows[:, 0].astype(int)
        assert len(set(who)) == len(who)  # an entity at most once, however many rows it holds
        index = rows[:, 1].astype(int)
        assert (classes[index] == labels).all() and (entities[index] == who).all()
        seen[who] += 1
    rates = seen / draws
    # Each entity in as often as its class's rate (binomial sd ~0.02 and ~0.025): entity 0's
    # 500 rows do not raise its chance.
    assert rates[0] == pytest.approx(0.2, abs=0.08)
    assert rates[:50].mean() == pytest.approx(0.2, abs=0.02)
    assert rates[50:].mean() == pytest.approx(0.5, abs=0.03)


def _private_step(
    seed: int = 0, key: tuple[int, int] = (7, 11), chunk_size: int | None = None
) -> PrivateTrainStep:
    cfg = to_config(compose([*TINY, "privacy.epsilon=3"]))
    keras.utils.set_random_seed(seed)
    rng = np.random.default_rng(0)
    entities = np.repeat(np.arange(200), 2)
    classes = (entities % 10 == 0).astype(int)
    x = rng.normal(size=(400, 30)).astype(np.float32)
    plan = plan_training(Budget(3.0, 1e-5), [], 1.0, 0.0, (180.0, 20.0), (16.0, 16.0), 100, 1.0)
    rows = ClassBalancedRows(x, classes)
    pools = EntityPools(x, classes, entities)
    return PrivateTrainStep(
        cfg.model,
        cfg.gp,
        cfg.trainer,
        seed=cfg.seed,
        rows=rows,
        pools=pools,
        plan=plan,
        secret_key=key,
        chunk_size=chunk_size,
    )


def test_a_private_step_trains_both_networks_and_logs_no_real_row_metric() -> None:
    step = _private_step()
    before = [np.array(v) for v in step.critic.weights + step.generator.weights]
    result = step.advance(2)
    assert result.completed == 2 and result.bad_step == -1
    after = [np.array(v) for v in step.critic.weights + step.generator.weights]
    critic = len(step.critic.weights)
    assert any(
        not np.array_equal(a, b) for a, b in zip(before[:critic], after[:critic], strict=True)
    )
    assert any(
        not np.array_equal(a, b) for a, b in zip(before[critic:], after[critic:], strict=True)
    )
    row = dict(zip(METRICS, result.metrics[-1], strict=True))
    assert np.isfinite(row.pop("generator_loss"))
    assert all(np.isnan(v) for v in row.values())  # each would read training rows


def test_its_sampling_and_noise_follow_the_secret_key_not_the_seed() -> None:
    """One seed, one key: the same update (what a test key buys). One seed, another key: another
    Poisson sample and other noise, so the public seed alone replays nothing."""
    first, same, other = _private_step(), _private_step(), _private_step(key=(7, 12))
    for step in (first, same, other):
        step.advance(2)
    for a, b in zip(first.critic.weights, same.critic.weights, strict=True):
        np.testing.assert_allclose(np.array(a), np.array(b), rtol=1e-5, atol=1e-6)
    moved = [
        float(np.max(np.abs(np.array(a) - np.array(c))))
        for a, c in zip(first.critic.weights, other.critic.weights, strict=True)
    ]
    assert max(moved) > 1e-3  # the noise alone moves weights by ~lr per update


def test_a_sample_of_any_size_is_laid_out_in_whole_chunks_with_its_padding_masked() -> None:
    for n, chunks in ((0, 0), (1, 1), (8, 1), (9, 2), (23, 3)):
        rows = tf.reshape(tf.range(1, 2 * n + 1, dtype=tf.float32), [n, 2])
        labels = tf.ones([n], tf.int32)
        laid = SampleChunks.of(rows, labels, 8)
        assert int(laid.count) == chunks and laid.rows.shape[1:] == (8, 2)
        mask = laid.mask.numpy().ravel()
        assert mask.sum() == n and mask[:n].all()  # the sample first, in its order
        np.testing.assert_array_equal(laid.rows.numpy().reshape(-1, 2)[:n], rows.numpy())
        assert not laid.rows.numpy().reshape(-1, 2)[n:].any()  # zero rows pad
        assert not laid.labels.numpy().ravel()[n:].any()


def test_a_chunk_holds_the_expected_sample_and_three_of_its_deviations() -> None:
    for expected in (32.0, 128.0, 429.0, 512.0):
        size = chunk_rows(expected)
        assert size % 8 == 0
        assert expected + 3 * np.sqrt(expected) <= size < expected + 3 * np.sqrt(expected) + 8


def _sample_sizes(step: PrivateTrainStep, steps: range) -> list[int]:
    """The Poisson samples' sizes of each critic update of ``steps`` (their secret draws)."""
    alg = step.batches.alg
    return [
        int(tf.shape(step.pools.sample(step.plan.rates, step.secret_seed(s, 8 * i + 3), alg)[0])[0])
        for s in steps
        for i in range(step.tc.n_critic)
    ]


def test_the_private_update_is_traced_once_whatever_the_samples_size() -> None:
    """Samples of many sizes, most over several chunks of 8: one trace of the training function
    and one of the chunk's, whose inputs have fixed shapes (a function of them called with
    another sample's chunk is not traced again)."""
    step = _private_step(chunk_size=8)
    for _ in range(3):
        assert step.advance(2).bad_step == -1
    sizes = _sample_sizes(step, range(6))
    assert len(set(sizes)) > 3 and max(sizes) > 2 * 8  # many sizes, up to three chunks or more
    assert step.tracing_count() == 1
    assert step.clipped_chunk.experimental_get_tracing_count() == 1
    features = step.batches.rows.n_features
    specs = [
        tf.TensorSpec([8, features], tf.float32),
        tf.TensorSpec([8, features], tf.float32),
        tf.TensorSpec([8, 2], tf.float32),
        tf.TensorSpec([8, 1], tf.float32),
        tf.TensorSpec([8], tf.bool),
    ]
    step.clipped_chunk.get_concrete_function(*specs)  # the one traced: no new trace
    assert step.clipped_chunk.experimental_get_tracing_count() == 1
    for n in (3, 30):
        laid = SampleChunks.of(tf.ones([n, features]), tf.zeros([n], tf.int32), 8)
        rows, labels, mask = laid.chunk(int(laid.count) - 1)
        onehot = tf.one_hot(labels, 2)
        step.clipped_chunk(rows, rows, onehot, tf.ones([8, 1]), mask)
    assert step.clipped_chunk.experimental_get_tracing_count() == 1


def test_the_trainers_update_in_chunks_is_the_definitions_on_its_draws() -> None:
    """One private critic update, as the trainer computes it (chunks of 8, ghost clipping), and
    dp_sgd's definition (the Jacobian over the whole sample) on the same draws: the Poisson
    sample, each chunk's paired fake rows and alphas, the noise."""
    step = _private_step(chunk_size=8)
    s, i = tf.constant(4, tf.int64), 1
    batch = step.batches.draw(s)
    public = step.fake_rows(batch)[i]
    got = step.private_critic_update(s, batch, i, public)

    alg, base, slot = step.batches.alg, step.batches.base_seed, 8 * i + 3
    real, labels = step.pools.sample(step.plan.rates, step.secret_seed(s, slot), alg)
    n = int(real.shape[0])
    chunks = -(-n // 8)
    assert chunks > 2
    onehot = tf.one_hot(tf.pad(labels, [[0, 8 * chunks - n]]), 2)
    fold = tf.random.experimental.stateless_fold_in
    z = tf.concat(
        [
            stateless_standard_normal([8, 8], fold(step_seed(base, s, slot + 1), j, alg=alg), alg)
            for j in range(chunks)
        ],
        0,
    )
    alpha = tf.concat(
        [
            tf.random.stateless_uniform(
                [8, 1], fold(step_seed(base, s, slot + 2), j, alg=alg), alg=alg
            )
            for j in range(chunks)
        ],
        0,
    )
    paired = step.generator([z, onehot], training=True)
    want, _ = private_critic_gradients(
        step.critic, real, paired[:n], onehot[:n], alpha[:n], tf.range(n), n,
        expected_entities=float(sum(step.plan.expected)), clip=step.plan.clip,
        noise_multiplier=step.plan.noise_multiplier, gp_weight=step.gp.weight,
        seed=step.secret_seed(s, slot + 3), fake_term=(public, batch.onehot[i]),
    )  # fmt: skip
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-4, atol=1e-5)
