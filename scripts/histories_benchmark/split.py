"""Entities, not rows, are split: every customer's rows land in one part. Three parts, each with
the same share of fraud-touched customers: ``train`` (what every system fits; wgangp splits it
again for its own step selection), ``floor`` and ``test`` (never fitted by anyone, of equal size:
the two real halves whose distance is the noise floor, and the held-out customers that detection
and utility are scored on)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from wgangp.histories.behavior import HistoryColumns
from wgangp.histories.timelines import fraud_rows

#: Shares of the entities in train, floor and test.
FRACTIONS = (0.6, 0.2, 0.2)


@dataclass(frozen=True)
class HistorySplit:
    train: pd.DataFrame
    floor: pd.DataFrame
    test: pd.DataFrame

    def entities(self, part: str, cols: HistoryColumns) -> int:
        return int(getattr(self, part)[cols.entity].nunique())


def _touched(frame: pd.DataFrame, cols: HistoryColumns) -> pd.Series:
    """Per entity, whether any of its rows is a fraud row."""
    return pd.Series(fraud_rows(frame, cols)).groupby(frame[cols.entity].to_numpy()).any()


def entity_split(frame: pd.DataFrame, cols: HistoryColumns, seed: int) -> HistorySplit:
    """The three parts by ``seed``: fraud-touched entities and the rest each dealt 60/20/20."""
    touched = _touched(frame, cols)
    rng = np.random.default_rng([seed, 68])
    parts: list[list[object]] = [[], [], []]
    for group in (touched.index[touched.to_numpy()], touched.index[~touched.to_numpy()]):
        ids = rng.permutation(np.asarray(group, dtype=object))
        held = int(round(FRACTIONS[1] * len(ids)))
        parts[1] += list(ids[:held])
        parts[2] += list(ids[held : 2 * held])
        parts[0] += list(ids[2 * held :])
    train, floor, test = (
        frame[frame[cols.entity].isin(ids)].reset_index(drop=True) for ids in parts
    )
    return HistorySplit(train, floor, test)


def entity_subset(frame: pd.DataFrame, cols: HistoryColumns, n: int, seed: int) -> pd.DataFrame:
    """The rows of ``n`` of ``frame``'s entities, with its share of fraud-touched ones (all of
    them when it has no more): a peer whose cost grows with the customers it fits can be given
    fewer on a small machine, and still see fraud at the table's share."""
    touched = _touched(frame, cols)
    if n <= 0 or n >= len(touched):
        return frame
    rng = np.random.default_rng([seed, 69])
    fraud = min(int(touched.sum()), max(1, int(round(n * touched.mean()))))
    chosen: list[object] = []
    for group, k in (
        (touched.index[touched.to_numpy()], fraud),
        (touched.index[~touched.to_numpy()], n - fraud),
    ):
        ids = np.asarray(group, dtype=object)
        chosen += list(rng.choice(ids, size=min(k, len(ids)), replace=False))
    return frame[frame[cols.entity].isin(chosen)].reset_index(drop=True)
