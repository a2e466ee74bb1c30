"""A table's generator heads draw Gumbel noise from a Keras seed variable: a checkpoint holds
it, so a run restored from step 2 goes on exactly as the uninterrupted run does."""

from __future__ import annotations

from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf
from support.configs import TINY, compose

from wgangp.config import to_config
from wgangp.data.transform.layout import Block
from wgangp.step.batch import ClassBalancedRows
from wgangp.step.train_step import build_train_step

#: Two categoricals (3 and 2 levels), a number, a missing indicator: 7 columns.
LAYOUT = (
    Block("a", "categorical", 0, 3),
    Block("b", "categorical", 3, 2),
    Block("c", "continuous", 5, 1),
    Block("c", "missing", 6, 1),
)


def _rows() -> ClassBalancedRows:
    rng = np.random.default_rng(0)
    x = np.zeros((400, 7), np.float32)
    x[np.arange(400), rng.integers(0, 3, 400)] = 1
    x[np.arange(400), 3 + rng.integers(0, 2, 400)] = 1
    x[:, 5] = rng.standard_normal(400)
    x[:, 6] = rng.random(400) < 0.2
    return ClassBalancedRows(x, (rng.random(400) < 0.2).astype(np.int64), layout=LAYOUT)


def _step():
    keras.utils.set_random_seed(0)
    return build_train_step(to_config(compose(TINY)), _rows())


@pytest.mark.slow
def test_a_restored_checkpoint_goes_on_as_the_uninterrupted_run(tmp_path: Path) -> None:
    straight = _step()
    straight.advance(2)
    expected = straight.advance(2).metrics

    first = _step()
    first.advance(2)
    saved = first.checkpoint().save(str(tmp_path / "ckpt"))
    assert any("gumbel_states" in name for name, _ in tf.train.list_variables(saved))
    resumed = _step()
    resumed.checkpoint().restore(saved).assert_consumed()
    np.testing.assert_array_equal(resumed.advance(2).metrics, expected)
    for a, b in zip(resumed.generator.get_weights(), straight.generator.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)
