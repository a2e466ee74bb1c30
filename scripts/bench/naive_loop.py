"""The baseline: a Keras-example style conditional WGAN-GP, one ``tf.function`` per generator step.

Every ratio in the benchmark is relative to this loop. It is deliberately the common way to
write the model: host-side numpy sampling of class-balanced batches each step, the one-hot label
concatenated to each network's input, a Python ``for`` over the ``n_critic`` critic updates inside
one ``@tf.function`` (unrolled when traced), a nested-tape gradient penalty with the NaN-safe norm
``sqrt(sum(g^2) + 1e-12)``, Adam(1e-4, 0, 0.9), LeakyReLU MLPs. A ``harness.System``.
"""

from __future__ import annotations

from typing import Any

import keras
import numpy as np
import tensorflow as tf

from scripts.bench.peers.flops import FlopCount, count_flops
from scripts.bench.peers.record import Size
from scripts.bench.peers.rows import N_CLASSES, N_FEATURES, Rows

GP_WEIGHT = 10.0
GP_EPS = 1e-12


def mlp(n_inputs: int, widths: tuple[int, ...], n_outputs: int, name: str) -> keras.Model:
    """Dense + LeakyReLU(0.2) hidden layers, linear output."""
    layers: list[keras.layers.Layer] = [keras.Input((n_inputs,))]
    for width in widths:
        layers += [keras.layers.Dense(width), keras.layers.LeakyReLU(negative_slope=0.2)]
    layers.append(keras.layers.Dense(n_outputs))
    return keras.Sequential(layers, name=name)


class NaiveLoop:
    """The baseline trainer at one size; ``run(n)`` does ``n`` generator steps on host batches."""

    variant = "keras-style loop"
    steps_per_call = 1
    notes = ["baseline: one tf.function per generator step, host numpy batches"]

    def __init__(self, size: Size, rows: Rows) -> None:
        keras.utils.set_random_seed(0)
        self.size = size
        self.settings: dict[str, Any] = {}
        self._flops: FlopCount | None = None
        self.features = rows.features
        self.by_class = [np.flatnonzero(rows.labels == c) for c in range(N_CLASSES)]
        self.rng = np.random.default_rng(0)
        self.generator = mlp(size.latent + N_CLASSES, size.gen_widths, N_FEATURES, "generator")
        self.critic = mlp(N_FEATURES + N_CLASSES, size.critic_widths, 1, "critic")
        self.g_opt = keras.optimizers.Adam(1e-4, beta_1=0.0, beta_2=0.9)
        self.c_opt = keras.optimizers.Adam(1e-4, beta_1=0.0, beta_2=0.9)
        self.train_step = tf.function(self._train_step)

    def host_batch(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """n_critic real batches with their one-hot labels, and labels for the generator update:
        labels uniform over the classes, rows drawn from each label's class (numpy, on the host,
        as the Keras example does)."""
        k, b = self.size.n_critic, self.size.batch
        labels = self.rng.integers(0, N_CLASSES, size=k * b)
        index = np.empty(k * b, dtype=np.int64)
        for c, members in enumerate(self.by_class):
            where = labels == c
            index[where] = members[self.rng.integers(0, len(members), size=int(where.sum()))]
        onehot = np.eye(N_CLASSES, dtype=np.float32)
        gen_labels = onehot[self.rng.integers(0, N_CLASSES, size=b)]
        real = self.features[index].reshape(k, b, N_FEATURES)
        return real, onehot[labels].reshape(k, b, N_CLASSES), gen_labels

    def _critic_update(self, real: tf.Tensor, labels: tf.Tensor) -> tf.Tensor:
        batch = self.size.batch
        noise = tf.random.normal([batch, self.size.latent])
        with tf.GradientTape() as tape:
            fake = self.generator(tf.concat([noise, labels], 1), training=True)
            d_real = self.critic(tf.concat([real, labels], 1), training=True)
            d_fake = self.critic(tf.concat([fake, labels], 1), training=True)
            alpha = tf.random.uniform([batch, 1])
            mixed = alpha * real + (1.0 - alpha) * fake
            with tf.GradientTape() as gp_tape:
                gp_tape.watch(mixed)
                d_mixed = self.critic(tf.concat([mixed, labels], 1), training=True)
            grads = gp_tape.gradient(d_mixed, mixed)
            norm = tf.sqrt(tf.reduce_sum(tf.square(grads), axis=1) + GP_EPS)
            penalty = tf.reduce_mean(tf.square(norm - 1.0))
            loss = tf.reduce_mean(d_fake) - tf.reduce_mean(d_real) + GP_WEIGHT * penalty
        variables = self.critic.trainable_variables
        self.c_opt.apply_gradients(zip(tape.gradient(loss, variables), variables, strict=True))
        return loss

    def _train_step(
        self, real: tf.Tensor, labels: tf.Tensor, gen_labels: tf.Tensor
    ) -> tuple[tf.Tensor, tf.Tensor]:
        for i in range(self.size.n_critic):  # Python loop: unrolled at trace time, as in Keras
            c_loss = self._critic_update(real[i], labels[i])
        noise = tf.random.normal([self.size.batch, self.size.latent])
        with tf.GradientTape() as tape:
            fake = self.generator(tf.concat([noise, gen_labels], 1), training=True)
            g_loss = -tf.reduce_mean(self.critic(tf.concat([fake, gen_labels], 1), training=True))
        variables = self.generator.trainable_variables
        self.g_opt.apply_gradients(zip(tape.gradient(g_loss, variables), variables, strict=True))
        return c_loss, g_loss

    def run(self, steps: int) -> tuple[float, float]:
        """``steps`` generator steps; returns the last losses (read back, so the work is done)."""
        c_loss = g_loss = tf.constant(0.0)
        for _ in range(steps):
            c_loss, g_loss = self.train_step(*self.host_batch())
        return float(c_loss), float(g_loss)

    def flop_count(self) -> FlopCount:
        """Matmuls of the traced step (traced without running if not yet called); their shapes
        are what the matmul probe runs."""
        if self._flops is None:
            k, b = self.size.n_critic, self.size.batch
            concrete = self.train_step.get_concrete_function(
                tf.TensorSpec([k, b, N_FEATURES]),
                tf.TensorSpec([k, b, N_CLASSES]),
                tf.TensorSpec([b, N_CLASSES]),
            )
            self._flops = count_flops(concrete)
            self.settings["matmuls_per_step"] = self._flops.matmuls
        return self._flops

    def flops_per_gen_step(self) -> float:
        return float(self.flop_count().flops)
