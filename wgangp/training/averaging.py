"""Generator weight averaging (an exponential moving average of the weights, as in Yazıcı et al.
2019, "The Unusual Effectiveness of Averaging in GAN Training").

A WGAN's generator keeps circling the equilibrium as the critic chases it; an average of its
recent weights sits nearer the centre and samples more faithfully than any single step. The
average is updated on the host after every compiled call, ``decay ** steps`` at once for the
``steps`` the call ran, so the training function and its speed are unchanged. The quality loop,
the export and the served model use the averaged generator; the training keeps its own.
"""

from __future__ import annotations

import keras
import tensorflow as tf


class GeneratorAverage:
    """A copy of the generator whose weights follow the trained ones with ``decay`` per step."""

    def __init__(self, generator: keras.Model, decay: float) -> None:
        self.source = generator
        self.decay = decay
        self.model = keras.models.clone_model(generator)
        self.model.set_weights(generator.get_weights())

    def update(self, steps: int) -> None:
        """Move the average after ``steps`` generator steps."""
        if steps <= 0:
            return
        keep = self.decay**steps
        for average, current in zip(self.model.weights, self.source.weights, strict=True):
            average.assign(keep * average + (1.0 - keep) * tf.cast(current, average.dtype))
