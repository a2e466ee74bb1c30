"""Generator weight averaging (an exponential moving average of the weights, as in Yazıcı et al.
2019, "The Unusual Effectiveness of Averaging in GAN Training").

A WGAN's generator keeps circling the equilibrium as the critic chases it; an average of its
recent weights sits nearer the centre and samples more faithfully than any single step. The
average is updated on the host after every compiled call, for all the steps the call ran at once,
so the training function and its speed are unchanged. The quality loop, the export and the served
model use the averaged generator; the training keeps its own.

The average is bias-corrected as Adam's moments are: the weights of steps 1..t with weights
``decay ** (t - s)``, normalized. A plain moving average started at the initial weights keeps
``decay ** t`` of the random initialization (a twentieth after 3,000 steps at 0.999), which
no trained generator holds.
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

    def update(self, start_step: int, steps: int) -> None:
        """Move the average over the ``steps`` generator steps after ``start_step``, each with the
        weights the call ended with (the host sees no step inside a call)."""
        if steps <= 0:
            return
        keep = self.keep(start_step, steps)
        for average, current in zip(self.model.weights, self.source.weights, strict=True):
            average.assign(keep * average + (1.0 - keep) * tf.cast(current, average.dtype))

    def keep(self, start_step: int, steps: int) -> float:
        """The share the average keeps of itself: the bias-corrected per-step factors
        ``decay * (1 - decay**(s-1)) / (1 - decay**s)`` over steps s, multiplied out (they
        telescope); 0 at the first step, where the average becomes the weights."""
        d = self.decay
        return d**steps * (1.0 - d**start_step) / (1.0 - d ** (start_step + steps))
