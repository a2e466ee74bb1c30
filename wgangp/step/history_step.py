"""The training step of a history model: :class:`~wgangp.step.train_step.TrainStep`'s compiled loop,
guard and metrics, with the history networks (:mod:`wgangp.model.sequence_networks`,
:mod:`wgangp.model.history_critics`).

A training example is one window, flattened: its records, their phases and its mask ([T, R + 5]),
then its attributes. So the batch drawer, the class balance (half the histories with a rare-class
row), the stateless streams, the NaN guard, the K-step compiled call, checkpoints and forensics
are the row model's own; the noise of one history (the attributes' and every recurrent step's)
(its latent parts and the standard normals its levels are drawn with) is one flat vector the step
splits. The critic update sums the history critic's loss and the
attribute critic's (weight ``history.attribute_critic_weight``), each with its own penalty on its
own input, so each stays 1-Lipschitz; the generator's loss reads both."""

from __future__ import annotations

from dataclasses import replace

import keras
import numpy as np
import tensorflow as tf

from wgangp.config import Config, HistoryConfig, ModelConfig
from wgangp.data.histories.encoding import HistoryArrays, HistoryEncoding
from wgangp.model import losses
from wgangp.model.history_critics import AttributeCritic, HistoryCritic
from wgangp.model.sequence_networks import PHASES, build_history_generator, noise_widths
from wgangp.step.batch import ClassBalancedRows, StepBatch, rare_share
from wgangp.step.train_step import CriticUpdate, GeneratorUpdate, TrainStep


def history_generator(enc: HistoryEncoding, hc: HistoryConfig) -> keras.Model:
    """The generator ``hc`` sizes, on the scales ``enc`` fitted."""
    return build_history_generator(
        attribute_layout=enc.attribute_layout,
        record_layout=enc.record_layout,
        max_length=hc.max_length,
        records_per_cell=hc.records_per_cell,
        latent_dim=hc.latent_dim,
        hidden=hc.hidden,
        rnn_units=hc.rnn_units,
        days=enc.days.parameters(),
        moves=enc.moves,
        length=enc.length.parameters(),
        week=enc.week,
        length_at=enc.attribute_layout[-2].start,
    )


def flat_windows(arrays: HistoryArrays) -> np.ndarray:
    """[N, T * (R + 5) + A]: each window's records, phases and mask, then its attributes."""
    sequence = np.concatenate([arrays.records, arrays.phases, arrays.mask[..., None]], -1)
    return np.concatenate([sequence.reshape(len(sequence), -1), arrays.attributes], -1)


class Critics(keras.Model):
    """The history critic and the attribute critic as one set of weights (one optimizer, one
    guard), called apart."""

    def __init__(self, history: HistoryCritic, attributes: AttributeCritic) -> None:
        super().__init__(name="critics")
        self.history, self.attributes = history, attributes

    def call(self, inputs):  # noqa: D102 - only to build both
        x, onehot, attributes = inputs
        return self.history([x, onehot]), self.attributes([attributes, onehot])


class HistoryStep(TrainStep):
    """The compiled step over windows (module doc)."""

    def __init__(self, cfg: Config, encoding: HistoryEncoding, arrays: HistoryArrays) -> None:
        hc = cfg.history
        self.encoding, self.hc = encoding, hc
        self.cells = hc.max_length // hc.records_per_cell
        self.noise = noise_widths(
            encoding.attribute_layout, encoding.record_layout, hc.latent_dim, hc.records_per_cell
        )
        self.channels = encoding.record_width + PHASES + 1
        self.span = hc.max_length * self.channels
        rows = ClassBalancedRows(
            flat_windows(arrays), arrays.classes, rare_share(cfg.trainer.label_sampling)
        )
        noise = self.noise[0] + self.cells * self.noise[1]
        trainer = replace(cfg.trainer, batch_size=hc.batch_size)
        super().__init__(
            replace(cfg.model, latent_dim=noise), cfg.gp, trainer, seed=cfg.seed, rows=rows
        )

    def _build_networks(self, model: ModelConfig, rows: ClassBalancedRows) -> None:
        hc = self.hc
        self.generator = history_generator(self.encoding, hc)
        self.pac = 1
        self.critic = Critics(
            HistoryCritic(hc.max_length, self.channels, hc.critic_channels, hc.critic_hidden),
            AttributeCritic(hc.critic_hidden),
        )
        width = rows.n_features
        self.critic([tf.zeros([1, width]), tf.zeros([1, 2]), tf.zeros([1, width - self.span])])
        self.weight = float(hc.attribute_critic_weight)

    def split_noise(self, z: tf.Tensor) -> list[tf.Tensor]:
        """One flat noise vector per history -> the attributes' and the recurrent steps'."""
        first, step = self.noise
        return [z[:, :first], tf.reshape(z[:, first:], [-1, self.cells, step])]

    def generate_flat(self, z: tf.Tensor, onehot: tf.Tensor, training: bool) -> tf.Tensor:
        """The generator's histories, flattened as the real windows are."""
        attributes, records, phases, mask = self.generator(
            [*self.split_noise(z), onehot], training=training
        )
        sequence = tf.concat([records, phases, mask[..., None]], -1)
        return tf.concat([tf.reshape(sequence, [-1, self.span]), attributes], -1)

    def fake_rows(self, batch: StepBatch) -> tf.Tensor:
        n_critic = batch.z.shape[0]
        z = tf.reshape(batch.z, [-1, batch.z.shape[-1]])
        onehot = tf.reshape(batch.onehot, [-1, batch.onehot.shape[-1]])
        fake = self.generate_flat(z, onehot, training=True)
        return tf.reshape(fake, [n_critic, -1, fake.shape[-1]])

    def critic_update(
        self, batch: StepBatch, i: int, fakes: tf.Tensor, share: float = 1.0
    ) -> CriticUpdate:
        real, onehot, fake, alpha = batch.real[i], batch.onehot[i], fakes[i], batch.alpha[i]
        history, attributes = self.critic.history, self.critic.attributes
        span = self.span
        variables = self.critic.trainable_variables
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            self._watch_only(tape, variables)
            both = tf.concat([real, fake], 0)
            twice = tf.concat([onehot, onehot], 0)
            d_real, d_fake = tf.split(history([both, twice], training=True), 2)
            a_real, a_fake = tf.split(attributes([both[:, span:], twice], training=True), 2)
            x_hat = losses.interpolate(real, fake, alpha)
            options = dict(norm=self.gp.norm, eps=self.gp.eps, dtype=self.penalty_dtype)
            penalty = losses.gradient_penalty(
                lambda x: history([x, onehot], training=True), x_hat, **options
            )
            attribute_penalty = losses.gradient_penalty(
                lambda x: attributes([x, onehot], training=True), x_hat[:, span:], **options
            )
            loss = losses.critic_loss(d_real, d_fake, penalty.value, self.gp.weight)
            loss += self.weight * losses.critic_loss(
                a_real, a_fake, attribute_penalty.value, self.gp.weight
            )
            scaled = self._scaled(self.critic_optimizer, loss, share)
        scaled_grads = tape.gradient(scaled, variables)
        norms = tf.concat([penalty.norms, attribute_penalty.norms], 0)
        combined = losses.Penalty(
            penalty.value + self.weight * attribute_penalty.value,
            penalty.norms,
            penalty.zero_rows + attribute_penalty.zero_rows,
        )
        return CriticUpdate(
            loss=loss,
            penalty=combined,
            norm_gradient_finite=self.guard.norm_gradient_finite(norms),
            grads=self._unscaled(self.critic_optimizer, scaled_grads),
            scaled_grads=scaled_grads,
            wasserstein=losses.wasserstein_estimate(d_real, d_fake),
        )

    def generator_update(self, batch: StepBatch, share: float = 1.0) -> GeneratorUpdate:
        variables = self.generator.trainable_variables
        onehot = batch.generator_onehot
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            self._watch_only(tape, variables)
            fake = self.generate_flat(batch.generator_z, onehot, training=True)
            loss = losses.generator_loss(self.critic.history([fake, onehot], training=True))
            loss += self.weight * losses.generator_loss(
                self.critic.attributes([fake[:, self.span :], onehot], training=True)
            )
            scaled = self._scaled(self.generator_optimizer, loss, share)
        scaled_grads = tape.gradient(scaled, variables)
        return GeneratorUpdate(
            loss, self._unscaled(self.generator_optimizer, scaled_grads), scaled_grads
        )
