"""A share of every sample drawn from a Gaussian copula instead of the generator, row by row.

The GAN and a Gaussian copula of the same training rows put their excess rows in different places
(the copula keeps only the linear dependence of the columns' normal scores), so a draw that mixes
both can be harder to tell from real rows than either alone; ``ship.copula_share`` sets the share
and docs/quality.md measures it. Each row comes from the copula with probability ``share``, decided
by its own random stream, so the first rows of a larger draw are the rows of the smaller one, as
without a copula.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from wgangp.data.numbers import short_number
from wgangp.serving.bundle import COPULA_FILE, META_FILE, REEXPORT, DamagedBundleError
from wgangp.serving.copula import GaussianCopula

#: Stream keys beside a draw's seed: the copula's normals and the choice of rows (never the
#: generator's noise, which is ``default_rng(seed)``).
_NORMALS, _CHOICE = 1, 2


@dataclass
class CopulaMixture:
    """The copula and the share of rows it replaces, in (0, 1)."""

    copula: GaussianCopula
    share: float

    def __post_init__(self) -> None:
        if 0 < self.share < 1:
            return
        if not self.copula.source:
            raise ValueError(f"copula share {self.share} not in (0, 1)")
        # A loaded bundle: its copula.json and the share in synthesizer.json disagree.
        meta = Path(self.copula.source).with_name(META_FILE)
        raise DamagedBundleError(
            f"{meta} gives copula_share {short_number(self.share)}, but the bundle holds "
            f"{COPULA_FILE}, which only a share in (0, 1) draws from; {REEXPORT}"
        )

    def mix(self, x: np.ndarray, label: int, seed: int) -> np.ndarray:
        """``x`` (generated rows of class ``label``) with each row replaced by a copula row with
        probability ``share``."""
        chosen = np.random.default_rng([seed, _CHOICE]).random(len(x)) < self.share
        mixed = np.array(x, np.float64)
        drawn = self.copula.draw(len(x), label, np.random.default_rng([seed, _NORMALS]))
        mixed[chosen] = drawn[chosen]
        return mixed
