"""The baseline: a Keras-example style conditional WGAN-GP, one ``tf.function`` per generator step.

Every ratio in the benchmark is relative to this loop. It is deliberately the common way to
write the model: host-side numpy sampling of class-balanced batches each step, the one-hot label
concatenated to each network's input, a Python ``for`` over the ``n_critic`` critic updates inside
one ``@tf.function`` (unrolled when traced), a nested-tape gradient penalty with the NaN-safe norm
``sqrt(sum(g^2) + 1e-12)``, Adam(1e-4, 0, 0.9), LeakyReLU MLPs.

Run alone for the peak-RSS extra: ``python -m scripts.bench.naive_loop --rss-rows 1000000``.
"""

from __future__ import annotations

import argparse
import sys

import keras
import numpy as np
import tensorflow as tf

from scripts.bench.common import N_CLASSES, N_FEATURES, BalancedSampler, Rows, Size

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

    def __init__(self, size: Size, rows: Rows, seed: int = 0) -> None:
        keras.utils.set_random_seed(seed)
        self.size = size
        self.sampler = BalancedSampler(rows, seed)
        self.generator = mlp(size.latent + N_CLASSES, size.gen_widths, N_FEATURES, "generator")
        self.critic = mlp(N_FEATURES + N_CLASSES, size.critic_widths, 1, "critic")
        self.g_opt = keras.optimizers.Adam(1e-4, beta_1=0.0, beta_2=0.9)
        self.c_opt = keras.optimizers.Adam(1e-4, beta_1=0.0, beta_2=0.9)
        self.train_step = tf.function(self._train_step)

    def host_batch(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """n_critic real batches with their one-hot labels, and labels for the generator update."""
        k, b = self.size.n_critic, self.size.batch
        real, labels = self.sampler.batch(k * b)
        gen_labels = np.eye(N_CLASSES, dtype=np.float32)[self.sampler.labels(b)]
        shape = (k, b)
        return real.reshape(*shape, N_FEATURES), labels.reshape(*shape, N_CLASSES), gen_labels

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

    def concrete_step(self) -> tf.types.experimental.ConcreteFunction:
        """The traced step, for FLOP counting (traces without running if not yet called)."""
        k, b = self.size.n_critic, self.size.batch
        return self.train_step.get_concrete_function(
            tf.TensorSpec([k, b, N_FEATURES]),
            tf.TensorSpec([k, b, N_CLASSES]),
            tf.TensorSpec([b, N_CLASSES]),
        )


def main(argv: list[str] | None = None) -> int:
    """Peak-RSS probe: hold ``--rss-rows`` simulated rows, train on them, print a JSON record."""
    import time

    from scripts.bench.common import (
        SIZES,
        Record,
        current_rss_mb,
        emit_json,
        peak_rss_mb,
        simulated_rows,
        versions,
    )

    parser = argparse.ArgumentParser(
        prog="python -m scripts.bench.naive_loop", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--rss-rows", type=int, default=1_000_000)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--size", choices=sorted(SIZES), default="default")
    args = parser.parse_args(argv)
    size = SIZES[args.size]
    rss_before_data = current_rss_mb()
    rows = simulated_rows(args.rss_rows)
    loop = NaiveLoop(size, rows)
    loop.run(2)
    start = time.perf_counter()
    loop.run(args.steps)
    elapsed = time.perf_counter() - start
    record = Record(
        system="naive",
        variant=f"peak-rss {args.rss_rows:,} rows",
        size=size.name,
        critic_samples_per_s=size.batch * size.n_critic * args.steps / elapsed,
        gen_steps_per_s=args.steps / elapsed,
        notes=[
            f"simulated rows held in memory as float32 ({rows.features.nbytes / 2**20:.0f} MiB)"
        ],
        settings={
            **size.settings(),
            "steps_measured": args.steps,
            "repeats": 1,
            "rows": args.rss_rows,
            **versions("tensorflow", "keras", "numpy"),
        },
        extra={
            "peak_rss_mb": round(peak_rss_mb(), 1),
            "rss_before_data_mb": round(rss_before_data, 1),
            "rss_after_training_mb": round(current_rss_mb(), 1),
        },
    )
    emit_json(record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
