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
from wgangp.step.private_step import EntityPools, PrivateTrainStep, entity_classes
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


def _private_step(seed: int = 0, key: tuple[int, int] = (7, 11)) -> PrivateTrainStep:
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
