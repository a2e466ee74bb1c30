"""Train/validation/test split, stratified by Class, that never leaves a split without frauds.

With 0.17% frauds a plain stratified split of a small table can round a split's fraud count to
zero, and every fraud metric on it becomes undefined; each class is therefore split on its own,
with at least one row of each class in every non-empty split. (A seeded numpy permutation per
class does this exactly; sklearn's ``train_test_split`` would add a multi-second import for it.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from wgangp.data import schema
from wgangp.errors import DataError


@dataclass(frozen=True)
class Split:
    """Disjoint parts of one table; each keeps the original row order, with a fresh index."""

    train: pd.DataFrame
    val: pd.DataFrame
    test: pd.DataFrame


def stratified_split(
    df: pd.DataFrame, *, val_fraction: float = 0.1, test_fraction: float = 0.2, seed: int = 0
) -> Split:
    """Split ``df`` per Class into train/val/test, deterministically by ``seed``.

    ``val_fraction`` may be 0 (empty validation frame); the fractions are the schema's
    (``DataConfig``: each below 0.5). Each class needs at least one row per non-empty split
    (3 frauds, or 2 without validation), else DataError.
    """
    n_parts = 3 if val_fraction > 0 else 2
    labels = df[schema.LABEL].to_numpy()
    rng = np.random.Generator(np.random.PCG64(seed))
    parts: dict[str, list[np.ndarray]] = {"train": [], "val": [], "test": []}
    for cls, name in zip(schema.CLASSES, ("normal", "fraud"), strict=True):
        rows = np.flatnonzero(labels == cls)
        if len(rows) < n_parts:
            raise DataError(
                f"only {len(rows)} {name} row(s) (Class {cls}) to split; at least {n_parts} are "
                f"needed so that train, {'validation and ' if n_parts == 3 else ''}test each get "
                "one: use a larger table"
            )
        n_test, n_val = _class_sizes(len(rows), val_fraction, test_fraction)
        shuffled = rng.permutation(rows)
        parts["test"].append(shuffled[:n_test])
        parts["val"].append(shuffled[n_test : n_test + n_val])
        parts["train"].append(shuffled[n_test + n_val :])

    def take(name: str) -> pd.DataFrame:
        rows = np.sort(np.concatenate(parts[name]))
        return df.iloc[rows].reset_index(drop=True)

    return Split(train=take("train"), val=take("val"), test=take("test"))


def _class_sizes(n: int, val_fraction: float, test_fraction: float) -> tuple[int, int]:
    """Rows of one class for (test, val): rounded fractions, each >= 1, leaving train >= 1."""
    n_test = max(1, round(n * test_fraction))
    n_val = max(1, round(n * val_fraction)) if val_fraction > 0 else 0
    while n - n_test - n_val < 1:
        if n_val > n_test or (n_val == n_test and n_val > 1):
            n_val -= 1
        else:
            n_test -= 1
    return n_test, n_val
