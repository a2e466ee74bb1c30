"""The batch of one generator step, drawn inside the graph: one record from the draw to the update.

The training rows live on the device as two tables (the rest, the rare class); every draw is a
stateless random op (:mod:`wgangp.step.random_streams`), so no host-to-device copy happens per step
and a step's batch is a pure function of (seed, step): a resumed run draws what it would have drawn,
and the NaN forensics draw a failing step's batch again through this same code.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import tensorflow as tf

from wgangp.config import TrainerConfig
from wgangp.data.transform.layout import Block
from wgangp.model.networks import N_CLASSES
from wgangp.step.random_streams import (
    CRITIC_SLOTS,
    GENERATOR_SLOT,
    random_alg,
    stateless_standard_normal,
    step_seed,
)


class StepBatch(NamedTuple):
    """Every random input of one generator step: ``n_critic`` critic slices (the leading axis),
    then the generator update's labels and noise (no real rows).

    A pure function of (seed, step), so the training loop may draw it one step early without
    changing a number. That changes when it is computed: XLA runs a while loop's iterations one
    after another, and a step is a dependent chain of updates that leaves the second core partly
    idle; drawn in the previous iteration, the sampling and noise run there.
    """

    real: tf.Tensor  # [n_critic, batch, features]
    onehot: tf.Tensor  # [n_critic, batch, N_CLASSES]
    z: tf.Tensor  # [n_critic, batch, latent_dim]: the generator's input for the fake rows
    alpha: tf.Tensor  # [n_critic, batch, 1] ~ U(0, 1): where x_hat lies between real and fake
    generator_onehot: tf.Tensor  # [batch, N_CLASSES]
    generator_z: tf.Tensor  # [batch, latent_dim]

    def replica_slice(self, start: tf.Tensor, size: int) -> StepBatch:
        """Rows [start, start + size) of every slice (a replica's share of the batch)."""
        critic = [t[:, start : start + size] for t in self[:4]]
        return StepBatch(*critic, *(t[start : start + size] for t in self[4:]))


def rare_share(label_sampling: str) -> float | None:
    """A batch's expected share of rare rows: half (``balanced``), or the data's
    (``empirical``)."""
    return 0.5 if label_sampling == "balanced" else None


class ClassBalancedRows:
    """The training rows by class; draws (rows, labels) with labels ~ Bernoulli(rare_share)
    and rows uniform within their class.

    With 0.17% frauds (Kaggle's file), a batch of empirical class frequencies holds almost no
    rare rows, so the default ``rare_share`` is 0.5; ``None`` keeps the empirical share.
    """

    def __init__(
        self,
        x: np.ndarray,
        y: np.ndarray,
        rare_share: float | None = 0.5,
        *,
        layout: Sequence[Block] | None = None,
    ) -> None:
        x = np.asarray(x, dtype=np.float32)
        y = np.asarray(y).astype(np.int64)
        if not np.isfinite(x).all():
            raise ValueError("training rows contain NaN or inf; validate the data first")
        rest, rare = x[y == 0], x[y == 1]
        if len(rest) == 0 or len(rare) == 0:
            raise ValueError("both classes need at least one training row")
        self.n_features = x.shape[1]
        #: The table's column blocks (the generator's output heads follow them); None: a table
        #: of numbers, one block a column.
        self.layout = (
            tuple(layout)
            if layout is not None
            else tuple(Block(f"x{i}", "continuous", i, 1) for i in range(x.shape[1]))
        )
        self.counts = (len(rest), len(rare))
        share = float(rare.shape[0] / len(x)) if rare_share is None else float(rare_share)
        self.rare_share = share
        # Variables, not constants: captured by reference, never copied into the graph.
        self.rest = tf.Variable(rest, trainable=False, name="rows_rest")
        self.rare = tf.Variable(rare, trainable=False, name="rows_rare")

    def labels(self, batch_size: int, seed: tf.Tensor, alg: str = "philox") -> tf.Tensor:
        """The labels [batch] int32 that :meth:`draw` pairs with rows for ``seed``."""
        label_seed, _ = self._seeds(seed, alg)
        return self._labels(batch_size, label_seed, alg)

    def draw(
        self, batch_size: int, seed: tf.Tensor, alg: str = "philox"
    ) -> tuple[tf.Tensor, tf.Tensor]:
        """A batch of rows [batch, features] float32 and labels [batch] int32 for ``seed``.

        ``alg`` is the counter-based generator (``random_streams.random_alg``).
        """
        label_seed, index_seed = self._seeds(seed, alg)
        labels = self._labels(batch_size, label_seed, alg)
        u = tf.random.stateless_uniform([batch_size], index_seed, alg=alg)
        rows = []
        for table, count in ((self.rest, self.counts[0]), (self.rare, self.counts[1])):
            index = tf.minimum(tf.cast(u * count, tf.int32), count - 1)
            rows.append(tf.gather(table, index))
        x = tf.where(tf.equal(labels, 1)[:, None], rows[1], rows[0])
        return x, labels

    @staticmethod
    def _seeds(seed: tf.Tensor, alg: str) -> list[tf.Tensor]:
        return tf.unstack(tf.random.experimental.stateless_split(seed, num=2, alg=alg), axis=0)

    def _labels(self, batch_size: int, label_seed: tf.Tensor, alg: str) -> tf.Tensor:
        u = tf.random.stateless_uniform([batch_size], label_seed, alg=alg)
        return tf.cast(u < self.rare_share, tf.int32)


class BatchDrawer:
    """Draws a generator step's :class:`StepBatch` from the rows and the run's seed.

    The batch size and critic iterations are the trainer's; the random generator is the one
    its compilation implements (:func:`~wgangp.step.random_streams.random_alg`).
    """

    def __init__(
        self, rows: ClassBalancedRows, trainer: TrainerConfig, *, latent_dim: int, seed: int
    ) -> None:
        self.rows = rows
        self.batch_size = trainer.batch_size
        self.n_critic = trainer.n_critic
        self.latent_dim = latent_dim
        self.base_seed = tf.constant(seed, dtype=tf.int64)
        self.alg = random_alg(trainer.jit_compile)

    def draw(self, step: tf.Tensor) -> StepBatch:
        """Every random input of generator step ``step`` (see :class:`StepBatch`)."""
        critic = [self._critic_slice(step, i) for i in range(self.n_critic)]
        real, onehot, z, alpha = (tf.stack(parts) for parts in zip(*critic, strict=True))
        labels = self.rows.labels(self.batch_size, self._seed(step, GENERATOR_SLOT), self.alg)
        z_generator = self._noise(step, GENERATOR_SLOT + 1)
        return StepBatch(real, onehot, z, alpha, self._onehot(labels), z_generator)

    def _critic_slice(self, step: tf.Tensor, i: int) -> tuple[tf.Tensor, ...]:
        """Critic iteration ``i``'s real rows, onehot labels, noise and alpha at ``step``."""
        slot = CRITIC_SLOTS * i
        real, labels = self.rows.draw(self.batch_size, self._seed(step, slot), self.alg)
        z = self._noise(step, slot + 1)
        alpha = tf.random.stateless_uniform(
            [self.batch_size, 1], self._seed(step, slot + 2), alg=self.alg
        )
        return real, self._onehot(labels), z, alpha

    def _seed(self, step: tf.Tensor, slot: int) -> tf.Tensor:
        return step_seed(self.base_seed, step, slot)

    def _noise(self, step: tf.Tensor, slot: int) -> tf.Tensor:
        return stateless_standard_normal(
            [self.batch_size, self.latent_dim], self._seed(step, slot), self.alg
        )

    @staticmethod
    def _onehot(labels: tf.Tensor) -> tf.Tensor:
        return tf.one_hot(labels, N_CLASSES, dtype=tf.float32)
