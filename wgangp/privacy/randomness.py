"""Where a private run's noise comes from: the operating system's cryptographic source, never
the run's ``seed``.

The seed is a public MLflow param. Noise drawn from it can be replayed by anyone holding the
bundle: with the seed, a released count's noise is recomputed and subtracted, and a run on the
table with and without one customer is told apart with certainty. So every draw a DP release
depends on (the statistics' Gaussian noise, DP-SGD's Poisson sampling and noise) is keyed by
128 bits from :func:`secrets.randbits`, held in memory only: never logged, written or
checkpointed. What is not private (the split's hash, the networks' initial weights, the fake rows'
latent noise) keeps following the seed.

Tests that need a private run to repeat set :data:`REPLAYABLE_ENV` to an integer. The run then
says so in one warning line, the bundle records ``noise: replayable``, and ``wgangp.sample`` and
:attr:`Synthesizer.privacy <wgangp.serving.synthesizer.Synthesizer.privacy>` present it as no
guarantee at all.
"""

from __future__ import annotations

import logging
import os
import secrets
from dataclasses import dataclass, field

import numpy as np

from wgangp.errors import ConfigError

log = logging.getLogger("wgangp.train")

#: The test-only switch: an integer here keys a private run's noise instead of the OS.
REPLAYABLE_ENV = "WGANGP_REPLAYABLE_DP_NOISE"
#: How a bundle's ``privacy.noise`` names its source.
SECRET, REPLAYABLE = "secret", "replayable"
#: Independent numpy streams of one run (:meth:`NoiseSource.numpy`).
STATISTICS_STREAM, CALIBRATION_STREAM, TRAINING_STREAM, DESCRIPTION_STREAM = 0, 1, 2, 3


@dataclass(frozen=True)
class NoiseSource:
    """The key every DP draw of one run derives from; ``repr`` shows no key."""

    key: int = field(repr=False)
    replayable: bool = False

    @property
    def kind(self) -> str:
        """``secret`` or ``replayable``: what the bundle records."""
        return REPLAYABLE if self.replayable else SECRET

    def numpy(self, stream: int) -> np.random.Generator:
        """Stream ``stream``'s generator: independent of every other stream of the key."""
        return np.random.default_rng(np.random.SeedSequence(self.key, spawn_key=(stream,)))

    def tf_key(self, stream: int = TRAINING_STREAM) -> tuple[int, int]:
        """Two signed 64-bit words for TensorFlow's stateless ops (a ``[2]`` int64 seed), from
        stream ``stream``: 128 bits of the key, so no guess of one word replays a draw."""
        words = self.numpy(stream).integers(-(2**63), 2**63, size=2, dtype=np.int64)
        return int(words[0]), int(words[1])


def noise_source() -> NoiseSource:
    """A fresh secret key, or the replayable test key of :data:`REPLAYABLE_ENV`."""
    text = os.environ.get(REPLAYABLE_ENV, "").strip()
    if not text:
        return NoiseSource(secrets.randbits(128))
    try:
        key = int(text)
    except ValueError:
        raise ConfigError(
            f"{REPLAYABLE_ENV}={text!r} is not an integer; unset it (tests only: it makes a "
            "private run's noise replayable)"
        ) from None
    if key < 0:
        raise ConfigError(f"{REPLAYABLE_ENV}={key} must be >= 0; unset it outside tests")
    log.warning(
        "privacy: %s is set: this run's DP noise is replayable by anyone who knows it, so it "
        "carries no guarantee (tests only)",
        REPLAYABLE_ENV,
    )
    return NoiseSource(key, replayable=True)
