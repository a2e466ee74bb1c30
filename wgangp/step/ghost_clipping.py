"""Each row's critic gradient clipped and summed, without ever forming one row's gradient.

DP-SGD clips each sampled entity's gradient (:mod:`wgangp.step.dp_sgd`). Formed whole, those
gradients cost far more than the update they make: the Jacobian of per-row losses runs one
backward pass per row over the whole sample (rows x rows work), and even one pass per row writes
and reads a copy of every weight per row (docs/performance.md has both figures). The critic is a
stack of dense layers, so one row's gradient of a kernel is a sum of outer products, one per use
of the kernel in that row's computation (Goodfellow 2015; "ghost clipping", Li et al. 2022):
``sum_u l_u r_u^T``, ``l_u`` what the use multiplies, ``r_u`` the loss's gradient at the use's
output. Its squared norm is ``sum_{u,v} (l_u . l_v)(r_u . r_v)``, dot products of rows, and the
clipped sum over rows is ``sum_u (f * l_u)^T r_u``, one matmul a use (``f`` each row's clip
factor): the cost of an ordinary update and a few matmuls more.

A kernel's uses in a real row's terms ``-D(x) + lambda (||grad_x D(x_hat)|| - 1)^2``
(:func:`wgangp.step.dp_sgd.real_row_terms`): the forward pass at ``x``, the forward pass at
``x_hat`` (through a tanh output only: otherwise the penalty sees that pass in LeakyReLU's
piecewise constant slopes alone, whose gradient is 0), and the backward pass at ``x_hat`` that
computes ``grad_x D`` (``delta W^T``). That input gradient is written out here, so ONE tape over
zero "probes" added to each use's output gives every ``r_u``; a probe changes no value.

Exact (to float rounding) for the critic :func:`wgangp.model.networks.build_critic` builds under
privacy (dense layers, one LeakyReLU between two, a linear or tanh output, float32, no packing),
which :meth:`DenseCritic.of` checks; tests compare it with the Jacobian of dp_sgd.
"""

from __future__ import annotations

from dataclasses import dataclass

import keras
import tensorflow as tf

from wgangp.model import losses

#: Keeps the clip factor finite for a row whose gradient is exactly zero (as dp_sgd's).
_TINY = 1e-12


@dataclass(frozen=True)
class DenseCritic:
    """The critic's dense layers, read off the Keras model: each kernel and bias, the LeakyReLU
    slope between layers, a tanh output or not, and where each weight sits in
    ``critic.trainable_variables`` (the order gradients are returned in)."""

    kernels: tuple[keras.Variable, ...]
    biases: tuple[keras.Variable, ...]
    slope: float
    tanh: bool
    n_features: int
    order: tuple[int, ...]  # trainable_variables[i] is (k0, b0, k1, b1, ...)[order[i]]

    @classmethod
    def of(cls, critic: keras.Model) -> DenseCritic:
        """Read ``critic``; one this module cannot differentiate by hand is a ValueError."""
        dense: list = []
        slopes: list[float] = []
        tanh = False
        for layer in critic.layers:
            if isinstance(layer, keras.layers.InputLayer | keras.layers.Concatenate):
                continue
            if isinstance(layer, keras.layers.Dense) and layer.activation is _LINEAR:
                dense.append(layer)
            elif isinstance(layer, keras.layers.LeakyReLU) and len(slopes) < len(dense):
                slopes.append(float(layer.negative_slope))
            elif isinstance(layer, keras.layers.Activation) and layer.activation is _TANH:
                tanh = True
            else:
                raise ValueError(f"ghost clipping cannot differentiate layer {layer.name}")
        if not dense or len(slopes) != len(dense) - 1 or len(set(slopes)) > 1:
            raise ValueError("ghost clipping needs one LeakyReLU (one slope) between dense layers")
        if not all(layer.use_bias for layer in dense) or dense[-1].units != 1:
            raise ValueError("ghost clipping needs dense layers with biases and one score")
        if any(layer.compute_dtype != "float32" for layer in dense):
            raise ValueError("ghost clipping computes in float32 only")
        weights = [id(w) for layer in dense for w in (layer.kernel, layer.bias)]
        read = cls(
            kernels=tuple(layer.kernel for layer in dense),
            biases=tuple(layer.bias for layer in dense),
            slope=slopes[0] if slopes else 0.0,
            tanh=tanh,
            n_features=int(critic.inputs[0].shape[-1]),
            order=tuple(weights.index(id(v)) for v in critic.trainable_variables),
        )
        read.check(critic)
        return read

    def check(self, critic: keras.Model) -> None:
        """The scores of ``critic`` itself on a few random rows, or a ValueError: what is
        differentiated by hand here is what the model computes (the inputs' order included)."""
        classes = int(critic.inputs[1].shape[-1])
        x = tf.random.stateless_normal([4, self.n_features], seed=[0, 1])
        y = tf.one_hot([0, 1, 0, 1], classes)
        want = tf.cast(critic([x, y])[:, 0], tf.float32)
        got = self.score(self.forward(tf.concat([x, y], 1))[1][-1])
        scale = 1.0 + float(tf.reduce_max(tf.abs(want)))
        if float(tf.reduce_max(tf.abs(want - got))) > 1e-4 * scale:
            raise ValueError("ghost clipping's forward pass does not compute the critic's scores")

    def forward(
        self, h: tf.Tensor, probes: list[tf.Tensor] | None = None
    ) -> tuple[list[tf.Tensor], list[tf.Tensor]]:
        """Each dense layer's input and pre-activation (plus its probe) on the inputs ``h``."""
        inputs: list[tf.Tensor] = []
        pre: list[tf.Tensor] = []
        for k, (kernel, bias) in enumerate(zip(self.kernels, self.biases, strict=True)):
            if k:
                h = tf.where(pre[-1] > 0, pre[-1], self.slope * pre[-1])
            inputs.append(h)
            z = tf.matmul(h, kernel) + bias
            pre.append(z + probes[k] if probes is not None else z)
        return inputs, pre

    def score(self, last: tf.Tensor) -> tf.Tensor:
        """D from the output layer's pre-activation: [rows, 1] -> [rows]."""
        return (tf.tanh(last) if self.tanh else last)[:, 0]

    def widths(self) -> tuple[list[int], list[int]]:
        """Each dense layer's input and output width."""
        return [int(k.shape[0]) for k in self.kernels], [int(k.shape[1]) for k in self.kernels]


_LINEAR = keras.activations.linear
_TANH = keras.activations.tanh


@dataclass
class RowGradients:
    """Every row's gradient, never formed: per layer, each use of its kernel as the rows
    ``(l, r)`` (a row's kernel gradient is ``sum_u outer(l_u, r_u)``), and the bias's per-row
    gradient."""

    kernel_uses: list[list[tuple[tf.Tensor, tf.Tensor]]]
    bias_rows: list[tf.Tensor]

    def norms(self) -> tf.Tensor:
        """Each row's gradient norm over every weight [rows]."""
        total = 0.0
        for uses, bias in zip(self.kernel_uses, self.bias_rows, strict=True):
            for a, (l_a, r_a) in enumerate(uses):
                for b in range(a, len(uses)):
                    l_b, r_b = uses[b]
                    cross = tf.reduce_sum(l_a * l_b, 1) * tf.reduce_sum(r_a * r_b, 1)
                    total += cross if a == b else 2.0 * cross
            total += tf.reduce_sum(tf.square(bias), 1)
        return tf.sqrt(tf.maximum(total, 0.0))  # rounding may take cross terms below zero

    def weighted_sum(self, weights: tf.Tensor, keep: tf.Tensor) -> list[list[tf.Tensor]]:
        """``sum_rows weights[row] * gradient[row]`` over the rows ``keep`` marks, per layer
        [kernel, bias]. A row ``keep`` leaves out adds exactly nothing, whatever its values:
        it is selected out, never multiplied (0 times inf is NaN)."""
        keep = keep[:, None]
        summed = []
        for uses, bias in zip(self.kernel_uses, self.bias_rows, strict=True):
            kernel = tf.add_n(
                [
                    tf.matmul(
                        tf.where(keep, left * weights[:, None], 0.0),
                        tf.where(keep, right, 0.0),
                        transpose_a=True,
                    )
                    for left, right in uses
                ]
            )
            summed.append([kernel, tf.reduce_sum(tf.where(keep, bias * weights[:, None], 0.0), 0)])
        return summed


def real_row_gradients(
    critic: DenseCritic,
    real: tf.Tensor,
    fake: tf.Tensor,
    onehot: tf.Tensor,
    alpha: tf.Tensor,
    *,
    gp_weight: float,
    eps: float = 1e-12,
) -> RowGradients:
    """Each real row's gradient of its terms (module doc): the kernels' uses at x, at x_hat
    (tanh output only) and in the backward pass at x_hat."""
    rows = _row_count(real)
    ins, outs = critic.widths()
    at_x, at_hat = _probes(rows, outs), _probes(rows, outs) if critic.tanh else None
    backward = _probes(rows, ins)
    watched = at_x + backward + (at_hat or [])
    h_real = tf.concat([real, onehot], 1)
    h_hat = tf.concat([losses.interpolate(real, fake, alpha), onehot], 1)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(watched)
        inputs_x, pre_x = critic.forward(h_real, at_x)
        inputs_hat, pre_hat = critic.forward(h_hat, at_hat)
        last = pre_hat[-1]
        delta = 1.0 - tf.square(tf.tanh(last)) if critic.tanh else tf.ones_like(last)
        deltas: list[tf.Tensor] = []
        for k in reversed(range(len(outs))):
            deltas.insert(0, delta)
            grad_in = tf.matmul(delta, critic.kernels[k], transpose_b=True) + backward[k]
            if k:
                delta = grad_in * _leaky_slope(pre_hat[k - 1], critic.slope)
        norms = losses.safe_sqrt_norm(grad_in[:, : critic.n_features], eps)
        terms = -critic.score(pre_x[-1]) + gp_weight * tf.square(norms - 1.0)
        total = tf.reduce_sum(terms)
    grads = tape.gradient(total, watched)
    layers = len(outs)
    g_x, g_back, g_hat = grads[:layers], grads[layers : 2 * layers], grads[2 * layers :]
    uses = [[(inputs_x[k], g_x[k]), (g_back[k], deltas[k])] for k in range(layers)]
    biases = list(g_x)
    for k, g in enumerate(g_hat):
        uses[k].append((inputs_hat[k], g))
        biases[k] = biases[k] + g
    return RowGradients(uses, biases)


def score_row_gradients(critic: DenseCritic, rows: tf.Tensor, onehot: tf.Tensor) -> RowGradients:
    """Each row's gradient of its score ``D(x)``: one use a kernel, the forward pass."""
    _, outs = critic.widths()
    probes = _probes(_row_count(rows), outs)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(probes)
        inputs, pre = critic.forward(tf.concat([rows, onehot], 1), probes)
        total = tf.reduce_sum(critic.score(pre[-1]))
    grads = tape.gradient(total, probes)
    return RowGradients([[(x, g)] for x, g in zip(inputs, grads, strict=True)], list(grads))


def clipped_sum(
    critic: DenseCritic, rows: RowGradients, clip: float, mask: tf.Tensor
) -> tuple[list[tf.Tensor], tf.Tensor]:
    """Each of ``mask``'s rows' gradient scaled to L2 norm at most ``clip`` (over all weights),
    summed, per variable in ``critic.trainable_variables``' order; and the rows' norms before
    clipping [rows], 0 where ``mask`` is False."""
    norms = rows.norms()
    factors = tf.where(mask, tf.minimum(1.0, clip / (norms + _TINY)), 0.0)
    interleaved = [t for layer in rows.weighted_sum(factors, mask) for t in layer]
    return [interleaved[i] for i in critic.order], tf.where(mask, norms, 0.0)


def _leaky_slope(z: tf.Tensor, slope: float) -> tf.Tensor:
    """LeakyReLU's derivative at ``z``: piecewise constant, so no gradient of its own."""
    return tf.where(z > 0, tf.ones_like(z), tf.fill(tf.shape(z), tf.constant(slope, z.dtype)))


def _row_count(rows: tf.Tensor) -> int | tf.Tensor:
    """The rows' count, static when the shape is (a chunk's always is)."""
    return rows.shape[0] if rows.shape[0] is not None else tf.shape(rows)[0]


def _probes(rows: int | tf.Tensor, widths: list[int]) -> list[tf.Tensor]:
    """Zeros added to each use's output [rows, width]: the tape's handles on the uses."""
    return [tf.zeros([rows, w]) for w in widths]
