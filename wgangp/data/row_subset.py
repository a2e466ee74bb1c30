"""The one rule for rows after reading: what fits or scores uses one bounded subset of each class.

Training draws its batches from every row read, so more rows cost it memory, not time. Everything
else that touches rows (the transform's scales, the calibration, the copula, the step selection's
probes, the evaluation's fidelity, detection, utility and privacy) would cost time in proportion
to the rows read. So ONE subset of the table is drawn before the split, uniform by seed, and each
split's rows in it are that split's subset (each split holds about its share of it):

- ``data.rest_subset`` rows of the rest (every class but the rare one): what fits and scores use;
- ``data.rare_subset`` rare-class rows: what scores compare against (the probe's validation rows,
  the evaluation's training and test rows). Fits (scales, calibration, copula) and privacy's
  distances use every rare-class row: fitting on them costs little, and a copy of any training
  row of the class that ships must be found.

Below both budgets nothing is left out and every phase sees exactly the rows it always did. Each
subset keeps the rows' order and is logged once.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from wgangp.data.schema.table_schema import RARE

if TYPE_CHECKING:
    from wgangp.data.split import Split

#: A table's parts, in order.
PARTS = ("train", "val", "test")


@dataclass(frozen=True)
class Splits:
    """The three parts of a table, or of its subset."""

    train: pd.DataFrame
    val: pd.DataFrame
    test: pd.DataFrame


@dataclass(frozen=True)
class RowBudget:
    """Rows of the rest and of the rare class in the subset, over the whole table."""

    rest: int
    rare: int
    seed: int

    def masks(
        self, classes: np.ndarray, every_row_fits: bool = False
    ) -> tuple[np.ndarray | None, np.ndarray | None]:
        """``(fits, scores)``: masks over the table's rows of what fits use (the subset of the
        rest, every rare-class row) and what scores use (the subsets of both classes); None
        where it is every row (fits), or what fits use (scores). ``every_row_fits`` (under
        ``privacy.epsilon``: a subset of a fixed count of rows depends on the others' count):
        fits use every row, scores keep their subsets."""
        classes = np.asarray(classes)
        rest = self._subset(classes != RARE, self.rest, "rest")
        rare = self._subset(classes == RARE, self.rare, "rare")
        fits = None if rest is None else rest | (classes == RARE)
        scores = None if rare is None else (rest if rest is not None else classes != RARE) | rare
        if every_row_fits:
            return None, fits if scores is None else scores
        return fits, scores  # scores None: what fits use

    def subsets(
        self, split: Split, classes: np.ndarray, every_row_fits: bool = False
    ) -> tuple[Splits | None, Splits | None]:
        """``(fits, scores)``: each part of ``split`` cut to the rows of :meth:`masks` (drawn
        over the table's rows, ``classes``, before the split); None where that is every row of
        each part (fits), or what fits use (scores)."""

        def parts(keep: np.ndarray | None) -> Splits | None:
            if keep is None:
                return None
            cut = [subset_rows(getattr(split, p), keep[split.rows[p]]) for p in PARTS]
            return Splits(*cut)

        fits, scores = self.masks(classes, every_row_fits)
        return parts(fits), parts(scores)

    def _subset(self, mask: np.ndarray, size: int, what: str) -> np.ndarray | None:
        """A uniform subset of ``size`` of the rows in ``mask`` (by seed and ``what``); None
        when they are no more."""
        rows = np.flatnonzero(mask)
        if len(rows) <= size:
            return None
        rng = np.random.Generator(np.random.PCG64([self.seed, zlib.crc32(what.encode())]))
        keep = np.zeros(len(mask), dtype=bool)
        keep[rng.choice(rows, size=size, replace=False)] = True
        return keep


def subset_rows(frame: pd.DataFrame, keep: np.ndarray | None) -> pd.DataFrame:
    """The rows of ``frame`` in the subset (``keep``: its mask); ``frame`` itself without one."""
    if keep is None or keep.all():
        return frame
    return frame[keep].reset_index(drop=True)
