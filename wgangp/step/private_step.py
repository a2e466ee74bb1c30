"""The training step under ``privacy.epsilon``: the critic learns by entity-level DP-SGD.

The generator's update is :class:`~wgangp.step.train_step.TrainStep`'s: it reads the critic, never
a row, so it is post-processing. Each critic update instead:

1. draws a Poisson sample of entities, each class's entities at its own rate (the accountant
   takes the larger), and one row of each sampled entity, uniformly among its rows of its class
   (:class:`EntityPools`): the sample's size is random, and nobody's inclusion depends on anyone
   else's;
2. lays the sample out in chunks of a fixed number of rows, the last one padded and the padding
   masked out (:class:`SampleChunks`), as many chunks as the sample needs; pairs each row with a
   fake row of its class (the interpolate of the penalty), chunk by chunk;
3. sums each sampled entity's clipped gradient over the chunks (:func:`~wgangp.step.dp_sgd.
   sum_over_chunks`, each chunk by ghost clipping, :mod:`wgangp.step.ghost_clipping`: one
   function of fixed shapes, traced once), adds the noise and divides by the expected sample
   (:func:`~wgangp.step.dp_sgd.noised_mean`), with a batch of ``trainer.batch_size`` fake rows
   with public labels for the fake term: the gradient
   :func:`~wgangp.step.dp_sgd.private_critic_gradients` defines;
4. is judged by the NaN guard and applied.

Every draw is a stateless function of (key, step, iteration). The draws the guarantee rests on
(the Poisson sample, the DP-SGD noise) are keyed by the run's secret key
(:mod:`wgangp.privacy.randomness`), never by the public seed; the rest (the fake rows' latent
noise, the interpolation) follow the seed as training's other draws do. Metrics that would read
training rows (the critic's loss, the penalty, the Wasserstein estimate, the penalty's gradient
norms) are not computed: NaN in the metrics, so no number outside the
budget is logged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import numpy as np
import tensorflow as tf

from wgangp.config import GPConfig, ModelConfig, TrainerConfig
from wgangp.data.schema.table_schema import RARE
from wgangp.model.networks import N_CLASSES
from wgangp.privacy.plan import TrainingPlan
from wgangp.step import ghost_clipping
from wgangp.step.batch import ClassBalancedRows, StepBatch
from wgangp.step.dp_sgd import noised_mean, sum_over_chunks
from wgangp.step.guard import CRITIC_HEAD
from wgangp.step.random_streams import (
    CRITIC_SLOTS,
    SLOTS_PER_STEP,
    stateless_standard_normal,
    step_seed,
)
from wgangp.step.train_step import METRICS, StepMetrics, TrainStep

#: A critic iteration's private draws use its slots 3 to 6 (:class:`StepBatch` uses 0 to 2).
_PRIVATE_SLOT = 3
#: A chunk holds the expected sample and this many of its standard deviations more.
_CHUNK_SPREAD = 3.0


def entity_classes(classes: np.ndarray, entities: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, class of each)``: the distinct entities of the rows and each one's class, the
    rare class when it holds any rare row (its other rows then never train: an entity is
    sampled in one class, at one rate)."""
    codes, owner = np.unique(np.asarray(entities), return_inverse=True)
    rare = np.zeros(len(codes), bool)
    rare[owner[np.asarray(classes) == RARE]] = True
    return codes, rare.astype(np.int64)


class EntityPools:
    """Each class's training rows grouped by entity, on the device: the rows an entity of that
    class holds in that class, in one table, with each entity's first row and row count."""

    def __init__(self, x: np.ndarray, classes: np.ndarray, entities: np.ndarray) -> None:
        classes, entities = np.asarray(classes), np.asarray(entities)
        _, rare_entity = entity_classes(classes, entities)
        owner = np.unique(entities, return_inverse=True)[1]
        self.tables, self.starts, self.lengths, self.counts = [], [], [], []
        for c in (0, RARE):
            rows = np.flatnonzero((classes == c) & (rare_entity[owner] == c))
            order = rows[np.argsort(owner[rows], kind="stable")]
            _, first, length = np.unique(owner[order], return_index=True, return_counts=True)
            self.tables.append(tf.constant(np.asarray(x, np.float32)[order]))
            self.starts.append(tf.constant(first, tf.int32))
            self.lengths.append(tf.constant(length, tf.float32))
            self.counts.append(len(first))

    def sample(
        self, rates: tuple[float, float], seed: tf.Tensor, alg: str
    ) -> tuple[tf.Tensor, tf.Tensor]:
        """A Poisson sample of entities (class c's each with probability ``rates[c]``), one row
        of each: rows [n, features] and their classes [n] int32."""
        seeds = tf.random.experimental.stateless_split(seed, num=4, alg=alg)
        rows, labels = [], []
        for c in (0, RARE):
            u = tf.random.stateless_uniform([self.counts[c]], seeds[2 * c], alg=alg)
            picked = tf.where(u < rates[c])[:, 0]
            v = tf.random.stateless_uniform(tf.shape(picked), seeds[2 * c + 1], alg=alg)
            lengths = tf.gather(self.lengths[c], picked)
            offset = tf.minimum(tf.cast(v * lengths, tf.int32), tf.cast(lengths, tf.int32) - 1)
            rows.append(tf.gather(self.tables[c], tf.gather(self.starts[c], picked) + offset))
            labels.append(tf.fill(tf.shape(picked), c))
        return tf.concat(rows, 0), tf.cast(tf.concat(labels, 0), tf.int32)


def chunk_rows(expected: float) -> int:
    """Rows of a chunk: the expected sample size ``E`` (public) plus three of its standard
    deviations, which are at most ``sqrt(E)`` (a sum of Bernoulli draws), rounded up to 8. A
    sample needs a second chunk about once in 700 updates; a chunk more costs a chunk's time,
    and only time: the gradient is the same sum whatever the chunk size."""
    return 8 * math.ceil((expected + _CHUNK_SPREAD * math.sqrt(expected)) / 8)


@dataclass(frozen=True)
class SampleChunks:
    """A sample's rows in ``count`` chunks of ``size`` rows, the last one padded with zero rows
    that ``mask`` leaves out: every chunk has the same shapes, whatever the sample's size."""

    rows: tf.Tensor  # [count, size, features]
    labels: tf.Tensor  # [count, size] int32 (0 on padding)
    mask: tf.Tensor  # [count, size] bool: a sampled row
    count: tf.Tensor  # int32 scalar

    @classmethod
    def of(cls, rows: tf.Tensor, labels: tf.Tensor, size: int) -> SampleChunks:
        """``rows`` [n, features] and their ``labels`` [n], n any size, in chunks of ``size``."""
        n = tf.shape(rows)[0]
        count = (n + size - 1) // size
        padding = count * size - n
        features = rows.shape[-1]
        return cls(
            rows=tf.reshape(tf.pad(rows, [[0, padding], [0, 0]]), [-1, size, features]),
            labels=tf.reshape(tf.pad(labels, [[0, padding]]), [-1, size]),
            mask=tf.reshape(tf.range(count * size) < n, [-1, size]),
            count=count,
        )

    def chunk(self, j: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        """Chunk ``j``'s rows [size, features], labels [size] and mask [size]."""
        return self.rows[j], self.labels[j], self.mask[j]


class PrivateTrainStep(TrainStep):
    """:class:`TrainStep` whose critic updates are DP-SGD's over entities (module doc)."""

    def __init__(
        self,
        model: ModelConfig,
        gp: GPConfig,
        trainer: TrainerConfig,
        *,
        seed: int,
        rows: ClassBalancedRows,
        pools: EntityPools,
        plan: TrainingPlan,
        secret_key: tuple[int, int],
        chunk_size: int | None = None,
    ) -> None:
        self.pools = pools
        self.plan = plan
        # A constant of the traced graph, never a variable: checkpoints do not hold it.
        self.secret_key = tf.constant(secret_key, tf.int64)
        super().__init__(model, gp, trainer, seed=seed, rows=rows)
        #: Rows a chunk of the Poisson sample holds (:func:`chunk_rows` unless given).
        self.chunk_size = chunk_size or chunk_rows(float(sum(plan.expected)))
        critic = ghost_clipping.DenseCritic.of(self.critic)
        #: One chunk's clipped sum of real rows' gradients, a function of fixed shapes: traced
        #: once, however many chunks and steps (tests count its traces).
        self.clipped_chunk = tf.function(
            partial(_clipped_real_rows, critic, gp_weight=gp.weight, clip=plan.clip)
        )
        self.dense_critic = critic

    def secret_seed(self, step: tf.Tensor, slot: int) -> tf.Tensor:
        """The stateless seed of one private draw: the secret key folded with (step, slot)."""
        counter = tf.cast(step, tf.int64) * SLOTS_PER_STEP + slot
        return tf.random.experimental.stateless_fold_in(self.secret_key, counter)

    def private_critic_update(
        self, step: tf.Tensor, batch: StepBatch, i: int, public_fake: tf.Tensor
    ) -> list[tf.Tensor]:
        """Critic iteration ``i``'s DP-SGD gradient (module doc, steps 1-3); ``public_fake``: the
        fake term's rows [batch, features], the generator's on ``batch``'s iteration ``i``."""
        alg, base = self.batches.alg, self.batches.base_seed
        slot = CRITIC_SLOTS * i + _PRIVATE_SLOT
        real, labels = self.pools.sample(self.plan.rates, self.secret_seed(step, slot), alg)
        chunks = SampleChunks.of(real, labels, self.chunk_size)
        latent_seed, alpha_seed = step_seed(base, step, slot + 1), step_seed(base, step, slot + 2)

        def chunk_sum(j: tf.Tensor) -> list[tf.Tensor]:
            rows, row_labels, mask = chunks.chunk(j)
            onehot = tf.one_hot(row_labels, N_CLASSES, dtype=tf.float32)
            size, fold = self.chunk_size, tf.random.experimental.stateless_fold_in
            z = stateless_standard_normal(
                [size, self.batches.latent_dim], fold(latent_seed, j, alg=alg), alg
            )
            paired = self.generator([z, onehot], training=True)
            alpha = tf.random.stateless_uniform([size, 1], fold(alpha_seed, j, alg=alg), alg=alg)
            return self.clipped_chunk(rows, paired, onehot, alpha, mask)

        variables = self.critic.trainable_variables
        clipped = sum_over_chunks(chunk_sum, chunks.count, variables)
        fake_rows = ghost_clipping.score_row_gradients(
            self.dense_critic, public_fake, batch.onehot[i]
        )
        every_row = tf.ones([tf.shape(public_fake)[0]], tf.bool)
        fake_sum, _ = ghost_clipping.clipped_sum(
            self.dense_critic, fake_rows, self.plan.clip, every_row
        )
        count_fake = tf.cast(tf.shape(public_fake)[0], tf.float32)
        return noised_mean(
            clipped,
            [s / count_fake for s in fake_sum],
            expected_entities=float(sum(self.plan.expected)),
            clip=self.plan.clip,
            noise_multiplier=self.plan.noise_multiplier,
            seed=self.secret_seed(step, slot + 3),
        )

    def generator_step(self, step: tf.Tensor, batch: StepBatch) -> tuple[tf.Tensor, tf.Tensor]:
        """One generator step: ``n_critic`` private critic updates, then the generator's, each
        judged by the guard and applied only if finite (and, under raise/stop, only after
        finite ones)."""
        skip = self.nan_policy.skips
        healthy = tf.constant(True)
        variables = self.critic.trainable_variables
        fakes = self.fake_rows(batch)  # the fake terms' rows of every iteration, in one call
        for i in range(self.tc.n_critic):
            grads = self.private_critic_update(step, batch, i, fakes[i])
            head = [tf.constant(True)] * len(CRITIC_HEAD)
            ok = self.guard.judge_critic(self.critic_optimizer, head, grads, step, i)
            allowed = ok if skip else tf.logical_and(ok, healthy)
            self.replicas.apply_if(allowed, self.critic_optimizer, grads, variables)
            healthy = tf.logical_and(healthy, ok)
        g = self.generator_update(batch)
        g_ok = self.guard.judge_generator(
            self.generator_optimizer, tf.math.is_finite(g.loss), g.grads, step, self.tc.n_critic
        )
        allowed = g_ok if skip else tf.logical_and(g_ok, healthy)
        self.replicas.apply_if(
            allowed, self.generator_optimizer, g.scaled_grads, self.generator.trainable_variables
        )
        healthy = tf.logical_and(healthy, g_ok)
        unmeasured = tf.constant(np.nan, tf.float32)
        values = dict.fromkeys(METRICS, unmeasured)
        values["generator_loss"] = tf.cast(g.loss, tf.float32)
        return healthy, tf.stack(list(StepMetrics(**values)))


def _clipped_real_rows(
    critic: ghost_clipping.DenseCritic,
    real: tf.Tensor,
    fake: tf.Tensor,
    onehot: tf.Tensor,
    alpha: tf.Tensor,
    mask: tf.Tensor,
    *,
    gp_weight: float,
    clip: float,
) -> list[tf.Tensor]:
    """The clipped sum of one chunk's real rows' gradients (``mask``'s rows), per variable."""
    rows = ghost_clipping.real_row_gradients(critic, real, fake, onehot, alpha, gp_weight=gp_weight)
    return ghost_clipping.clipped_sum(critic, rows, clip, mask)[0]
