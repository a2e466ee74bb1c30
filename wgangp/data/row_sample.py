"""The one rule for rows after reading: what fits or scores uses a bounded sample of each class.

Training draws its batches from every row read, so more rows cost it memory, not time. Everything
else that touches rows (the transform's scales, the calibration, the copula, the step selection's
probes, the evaluation's utility, detection and privacy) would cost time in proportion to the rows
read, so each uses at most:

- ``data.rest_sample`` rows of the rest (every class but the rare one) over the three splits:
  ONE uniform sample of the table's rest, drawn by seed before the split, whose rows in each split
  are that split's sample (so each split holds about its share of it);
- ``data.rare_sample`` rare-class rows of a split, for a score (the probe's validation rows, the
  evaluation's training and test rows); fits use every rare-class row.

Below both budgets nothing is sampled and every phase sees exactly the rows it always did. Each
sample is uniform, by the run's seed and what it is for, keeps the rows' order, and is logged
once: which rows, how many of how many.
"""

from __future__ import annotations

import logging
import zlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from wgangp.data.table_schema import RARE

log = logging.getLogger("wgangp.data")


@dataclass(frozen=True)
class RowBudget:
    """Rows of the rest (over the splits) and of the rare class (per split and score)."""

    rest: int
    rare: int
    seed: int

    def rest_sample(self, classes: np.ndarray) -> np.ndarray | None:
        """A mask of the rows in the sample of the rest (every rare-class row is in it); None
        when the rest fits the budget (no row left out)."""
        rest = np.flatnonzero(np.asarray(classes) != RARE)
        if len(rest) <= self.rest:
            return None
        keep = np.ones(len(classes), dtype=bool)
        keep[rest] = False
        keep[self._rng("rest").choice(rest, size=self.rest, replace=False)] = True
        return keep

    def rare_keep(self, classes: np.ndarray, what: str) -> np.ndarray | None:
        """A mask keeping at most ``rare`` of the rare-class rows (a uniform sample by seed and
        ``what``, which names it in the log) and every other row; None under the budget."""
        rare = np.flatnonzero(np.asarray(classes) == RARE)
        if len(rare) <= self.rare:
            return None
        keep = np.ones(len(classes), dtype=bool)
        keep[rare] = False
        keep[self._rng(what).choice(rare, size=self.rare, replace=False)] = True
        log.info(
            "%s: a uniform sample of %d of the %d rare-class rows (data.rare_sample, seed %d)",
            what, self.rare, len(rare), self.seed,
        )  # fmt: skip
        return keep

    def _rng(self, what: str) -> np.random.Generator:
        """A stream of its own for each sample: by seed and purpose."""
        return np.random.Generator(np.random.PCG64([self.seed, zlib.crc32(what.encode())]))


def sampled_rows(frame: pd.DataFrame, keep: np.ndarray | None) -> pd.DataFrame:
    """The rows of ``frame`` in the sample (``keep``: its mask); ``frame`` itself without one."""
    if keep is None or keep.all():
        return frame
    return frame[keep].reset_index(drop=True)
