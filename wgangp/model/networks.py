"""Generator G(z, onehot(y)) and critic D(x, onehot(y)): plain Keras functional MLPs.

Built-in layers, and for a table's categories and gaps the registered
:class:`~wgangp.model.heads.OutputHeads`, so the generator saves in Keras' native format and loads
in safe mode. The critic has no batch normalization (the penalty is per row) and a linear output,
unless ``output="tanh"`` is asked for to reproduce the original failing code, whose tanh saturates.
With ``pac > 1`` it judges packs of ``pac`` rows as one input (PacGAN, Lin et al. 2018: a generator
that keeps repeating a few kinds of rows shows in a pack as it does not in one row);
:func:`pack_rows` lays a batch out that way.
"""

from __future__ import annotations

from collections.abc import Sequence

import keras
import tensorflow as tf

from wgangp.config import CRITIC_OUTPUTS
from wgangp.data.transform.layout import Block, layout_width
from wgangp.model.heads import OutputHeads

N_CLASSES = 2


def _mlp(
    x: keras.KerasTensor, hidden: Sequence[int], slope: float, prefix: str
) -> keras.KerasTensor:
    for i, width in enumerate(hidden):
        x = keras.layers.Dense(width, name=f"{prefix}_dense_{i}")(x)
        x = keras.layers.LeakyReLU(negative_slope=slope, name=f"{prefix}_leaky_{i}")(x)
    return x


def build_generator(
    latent_dim: int,
    n_features: int,
    hidden: Sequence[int],
    negative_slope: float = 0.2,
    layout: Sequence[Block] | None = None,
    seed: int | None = None,
) -> keras.Model:
    """The generator; where the table's ``layout`` has a category or a gap, its output goes
    through the kinds' heads (:class:`~wgangp.model.heads.OutputHeads`, Gumbel noise keyed by
    ``seed``); a table of numbers only needs none (its output is the numbers)."""
    if layout is not None and layout_width(layout) != n_features:
        raise ValueError(f"the layout spans {layout_width(layout)} columns, not {n_features}")
    z = keras.Input((latent_dim,), name="z")
    y = keras.Input((N_CLASSES,), name="label_onehot")
    h = keras.layers.Concatenate(name="generator_concat")([z, y])
    h = _mlp(h, hidden, negative_slope, "generator")
    # float32 output keeps samples exact under mixed precision.
    out = keras.layers.Dense(n_features, dtype="float32", name="generator_out")(h)
    if layout is not None and any(block.activation != "identity" for block in layout):
        out = OutputHeads(layout, seed=seed, name="generator_heads")(out)
    return keras.Model([z, y], out, name="generator")


def pack_rows(rows: tf.Tensor, pac: int) -> tf.Tensor:
    """[batch, k] -> [batch / pac, pac * k]: each run of ``pac`` consecutive rows side by side."""
    return rows if pac == 1 else tf.reshape(rows, [-1, pac * rows.shape[-1]])


def build_critic(
    n_features: int,
    hidden: Sequence[int],
    negative_slope: float = 0.2,
    output: str = "linear",
    pac: int = 1,
) -> keras.Model:
    x = keras.Input((pac * n_features,), name="x")
    y = keras.Input((pac * N_CLASSES,), name="label_onehot")
    h = keras.layers.Concatenate(name="critic_concat")([x, y])
    h = _mlp(h, hidden, negative_slope, "critic")
    out = keras.layers.Dense(1, dtype="float32", name="critic_out")(h)
    if output not in CRITIC_OUTPUTS:
        raise ValueError(f"unknown critic output {output!r}; choose one of {CRITIC_OUTPUTS}")
    if output == "tanh":
        out = keras.layers.Activation("tanh", dtype="float32", name="critic_tanh")(out)
    return keras.Model([x, y], out, name="critic")
