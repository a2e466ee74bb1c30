"""Train/validation/test split, stratified by class, that keeps identical rows together and never
leaves a split without rows of the rare class.

With 0.17% frauds (Kaggle's file) a plain stratified split of a small table can round a split's rare
count to zero, and every metric of the rare class on it becomes undefined; each class is therefore
split on its own, with at least one row of each class in every non-empty split. (A seeded numpy
permutation per class does this exactly; sklearn's ``train_test_split`` would add a multi-second
import for it.)

Real tables hold exact duplicate rows (Kaggle's file has 1,081, 19 of them frauds). Split row by
row, a duplicate lands in training and its copy in test, and every test metric then measures a
memorised row. So the unit the split assigns is a *group* of identical rows (every column equal):
each group goes whole to one split, and the split fractions are met as closely as whole groups
allow.

The training split needs :data:`MIN_TRAIN_ROWS` distinct rows of each class: with one fraud row,
half of every class-balanced batch would be copies of that row, and the generator could only learn
to repeat it. :func:`rows_needed` is the one statement of how many rows of each class a table
needs; validation asks for it too (:func:`wgangp.data.prepare.prepare_data`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from wgangp.data.entities import (
    INFERRED_ENTITY,
    entity_label,
    first_rows,
    identical_row_groups,
)
from wgangp.data.schema.table_schema import CLASSES, RARE
from wgangp.errors import DataError

#: Distinct rows of each class the training split needs (see the module docstring).
MIN_TRAIN_ROWS = 2


def rows_needed(val_fraction: float) -> int:
    """Distinct rows of each class a table needs: :data:`MIN_TRAIN_ROWS` for training, one for
    validation (when ``val_fraction > 0``) and one for test."""
    return MIN_TRAIN_ROWS + (1 if val_fraction > 0 else 0) + 1


@dataclass(frozen=True)
class Split:
    """Disjoint parts of one table; each keeps the original row order, with a fresh index.

    ``duplicate_rows`` counts the rows that repeat an earlier row exactly (``duplicate_rare``
    those of the rare class); each copy is in the same part as its original.
    """

    train: pd.DataFrame
    val: pd.DataFrame
    test: pd.DataFrame
    duplicate_rows: int = 0
    duplicate_rare: int = 0
    #: Each part's row numbers in the table split, sorted: "train", "val", "test".
    rows: dict[str, np.ndarray] = field(default_factory=dict)


def stratified_split(
    df: pd.DataFrame,
    classes: np.ndarray,
    class_names: tuple[str, str],
    *,
    val_fraction: float = 0.1,
    test_fraction: float = 0.2,
    seed: int = 0,
    source: str = "data",
    columns: Sequence[str] | None = None,
    entities: np.ndarray | None = None,
    entity: str | None = None,
    independent: bool = False,
) -> Split:
    """Split ``df`` per class (``classes``: each row's 0 or 1, named ``class_names`` in errors)
    into train/val/test by groups of rows identical in ``columns`` (None: every column), or by
    ``entities`` (each row's entity code, the column ``entity``: all of an entity's rows in one
    part), by ``seed``.

    An entity with a row of the rare class is split among the rare class's entities (by its rare
    rows), its other rows following it. ``independent`` (under ``privacy.epsilon``): each entity's
    part is drawn from its own rows and the seed alone (:func:`independent_parts`), so adding or
    removing one entity moves no other between parts; the parts then meet the fractions only in
    expectation. ``val_fraction`` may be 0 (empty validation frame); the
    fractions are the schema's (``DataConfig``: each below 0.5). Each class needs
    :func:`rows_needed` distinct rows (entities), else DataError (one line mentioning
    ``source``). Without duplicates or entities the parts are the same as a row-by-row split
    with the same seed.
    """
    has_val = val_fraction > 0
    needed = rows_needed(val_fraction)
    labels = np.asarray(classes)
    identical = identical_row_groups(df if columns is None else df.loc[:, list(columns)])
    groups = identical if entities is None else np.asarray(entities, np.int64)
    # A group's class: the rare class when any of its rows is (identical rows share a class).
    rare_group = np.zeros(int(groups.max()) + 1 if len(groups) else 0, dtype=bool)
    rare_group[groups[labels == RARE]] = True
    group_class = np.where(rare_group, RARE, 1 - RARE)
    rng = np.random.Generator(np.random.PCG64(seed))
    drawn = None
    if independent:
        content = df if columns is None else df.loc[:, list(columns)]
        drawn = independent_parts(content, groups, val_fraction, test_fraction, seed)
    parts: dict[str, list[np.ndarray]] = {"train": [], "val": [], "test": []}
    for cls, name in zip(CLASSES, class_names, strict=True):
        rows = np.flatnonzero(group_class[groups] == cls)
        # Group ids number groups by first appearance, so np.unique keeps that order.
        _, group_of_row = np.unique(groups[rows], return_inverse=True)
        sizes = np.bincount(group_of_row, weights=(labels[rows] == cls).astype(np.float64))
        sizes = sizes.astype(np.int64)
        if len(sizes) < needed:
            raise DataError(
                f"{source}: only {_units(len(sizes), int(sizes.sum()), name, entity)}; at "
                f"least {needed} are needed so that training gets {MIN_TRAIN_ROWS} and "
                f"{'validation and ' if has_val else ''}test one each: use a larger table"
                + (
                    f" or another data.entity than {entity}"
                    if entity and entity != INFERRED_ENTITY
                    else ""
                )
            )
        if drawn is not None:
            part_of_row = drawn[groups[rows]]
            _check_drawn(part_of_row, group_of_row, name, source, seed)
            for index, part in enumerate(("test", "val", "train")):
                parts[part].append(rows[part_of_row == index])
            continue
        n_test, n_val = _class_sizes(int(sizes.sum()), val_fraction, test_fraction)
        order = rng.permutation(len(sizes))
        test_end, val_end = _cuts(sizes[order], n_test, n_val, has_val)
        part_of_group = np.empty(len(sizes), dtype=np.int8)
        part_of_group[order[:test_end]] = 0
        part_of_group[order[test_end:val_end]] = 1
        part_of_group[order[val_end:]] = 2
        part_of_row = part_of_group[group_of_row]
        for index, part in enumerate(("test", "val", "train")):
            parts[part].append(rows[part_of_row == index])

    rows_of = {name: np.sort(np.concatenate(found)) for name, found in parts.items()}
    duplicated = _repeats(identical)
    return Split(
        train=df.iloc[rows_of["train"]].reset_index(drop=True),
        val=df.iloc[rows_of["val"]].reset_index(drop=True),
        test=df.iloc[rows_of["test"]].reset_index(drop=True),
        duplicate_rows=int(duplicated.sum()),
        duplicate_rare=int((duplicated & (labels == RARE)).sum()),
        rows=rows_of,
    )


def independent_parts(
    content: pd.DataFrame,
    groups: np.ndarray,
    val_fraction: float,
    test_fraction: float,
    seed: int,
) -> np.ndarray:
    """Each group's part (0 test, 1 validation, 2 train), drawn from its own rows and the seed
    alone: the group's key is the sum (mod 2**64) of its rows' content hashes, mixed with the
    seed into a uniform u; u below ``test_fraction`` is test, below it plus ``val_fraction``
    validation, the rest train. A group's part never depends on another group's rows, nor on
    the row order."""
    hashes = pd.util.hash_pandas_object(content, index=False).to_numpy(np.uint64)
    keys = np.zeros(int(groups.max()) + 1 if len(groups) else 0, np.uint64)
    np.add.at(keys, groups, hashes)
    u = (_mix(keys ^ _mix(np.array([seed], np.uint64))) >> np.uint64(11)) / float(2**53)
    return np.where(u < test_fraction, 0, np.where(u < test_fraction + val_fraction, 1, 2))


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser: a bijection of uint64 that scatters nearby keys."""
    x = np.asarray(x, np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _check_drawn(
    part_of_row: np.ndarray, group_of_row: np.ndarray, name: str, source: str, seed: int
) -> None:
    """An independent draw must leave training :data:`MIN_TRAIN_ROWS` groups of the class and
    test one: else one line (a larger table, or another seed, draws again)."""
    train = len(np.unique(group_of_row[part_of_row == 2]))
    test = len(np.unique(group_of_row[part_of_row == 0]))
    if train < MIN_TRAIN_ROWS or test < 1:
        raise DataError(
            f"{source}: under privacy.epsilon each entity's part is drawn on its own, and seed "
            f"{seed} leaves {train} entities with {name} in training and {test} in test (at "
            f"least {MIN_TRAIN_ROWS} and 1 are needed): use a larger table or another seed"
        )


def _units(groups: int, rows: int, name: str, entity: str | None) -> str:
    """How a shortfall names what the split counts: entities, or distinct rows."""
    if entity is not None:
        return f"{groups} {entity_label(entity)} hold rows with {name}"
    copies = f" among {rows} (the others are exact copies)" if rows > groups else ""
    return f"{groups} distinct row(s) with {name}{copies}"


def _repeats(groups: np.ndarray) -> np.ndarray:
    """A mask of the rows whose group appeared on an earlier row."""
    return first_rows(groups)[groups] != np.arange(len(groups))


def _class_sizes(n: int, val_fraction: float, test_fraction: float) -> tuple[int, int]:
    """Rows of one class for (test, val): rounded fractions, each >= 1, leaving train >=
    MIN_TRAIN_ROWS."""
    n_test = max(1, round(n * test_fraction))
    n_val = max(1, round(n * val_fraction)) if val_fraction > 0 else 0
    while n - n_test - n_val < MIN_TRAIN_ROWS:
        if n_val > n_test or (n_val == n_test and n_val > 1):
            n_val -= 1
        else:
            n_test -= 1
    return n_test, n_val


def _cuts(sizes: np.ndarray, n_test: int, n_val: int, has_val: bool) -> tuple[int, int]:
    """How many of the shuffled groups go to test, and where validation ends: the cut whose
    row count is closest to each target, leaving one group for validation (when there is one)
    and MIN_TRAIN_ROWS groups for training. With single-row groups the cuts are the targets."""
    total = np.concatenate([[0], np.cumsum(sizes)])  # total[k]: rows in the first k groups
    last = len(sizes) - MIN_TRAIN_ROWS
    test_end = _closest(total, n_test, 1, last - (1 if has_val else 0))
    if not has_val:
        return test_end, test_end
    return test_end, _closest(total, total[test_end] + n_val, test_end + 1, last)


def _closest(total: np.ndarray, target: int, low: int, high: int) -> int:
    """The k in [low, high] whose total[k] is closest to ``target`` (the smallest on a tie)."""
    return low + int(np.argmin(np.abs(total[low : high + 1] - target)))
