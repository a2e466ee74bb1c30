"""Whose rows belong together: the unit every privacy rule counts, not the row.

In a transactions table one customer holds many rows, so a rule such as "a value fewer than k rows
hold never ships" lets a customer with six transactions ship their e-mail, card number and merchant.
Every rule that protects values therefore counts *entities*: distinct customers (cards, accounts)
named by ``data.entity=<column>``, or, without one, distinct rows, where rows identical in every
column count once (one fraud row repeated five times is one entity, not five). The entity column
itself is never a feature and never ships: validation keeps it only as integer codes
(:func:`entity_codes`), numbered by first appearance, so no customer's identifier travels with the
rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from wgangp.errors import DataError

#: Without ``data.entity``, the column that holds the customers the identifier columns name
#: (:class:`~wgangp.data.schema.identifiers.InferredEntity`), as codes beside the schema's columns:
#: the split, the transform's k-entity rules and the evaluation count them as they would
#: ``data.entity``'s. Like ``data.entity``'s column it never trains or ships.
INFERRED_ENTITY = "(inferred customer)"


def entity_label(entity: str) -> str:
    """How a line names the entity column: ``customer_id`` values, or the inferred customers."""
    if entity == INFERRED_ENTITY:
        return "customers (inferred from their identifier columns)"
    return f"{entity} value(s)"


def entity_codes(values: pd.Series, column: str, source: str) -> np.ndarray:
    """The entity column's cells as integers (equal cells, equal codes; by first appearance);
    a gap is refused in one line, since every row needs its entity."""
    codes, _ = pd.factorize(values, use_na_sentinel=True)
    gaps = codes < 0
    if gaps.any():
        first = int(np.flatnonzero(gaps)[0]) + 1
        raise DataError(
            f"{source}: data.entity column {column} has {int(gaps.sum())} empty cell(s) (first "
            f"at data row {first}); every row needs its entity: fill or drop those rows"
        )
    return codes.astype(np.int64)


def row_entities(
    frame: pd.DataFrame, columns: Sequence[str], entity: str | None = None
) -> np.ndarray:
    """Each row's entity: the codes in ``frame[entity]`` when an entity column is given, else
    its group of rows identical in ``columns`` (:func:`identical_row_groups`)."""
    if entity is not None:
        return frame[entity].to_numpy(np.int64)
    return identical_row_groups(frame.loc[:, list(columns)])


def entity_count(owners: np.ndarray | None, rows: int) -> int:
    """How many entities ``owners`` (one per row) name; ``rows`` when each row is its own."""
    return rows if owners is None else len(pd.unique(owners))


def identical_row_groups(table: pd.DataFrame) -> np.ndarray:
    """One integer per row, equal exactly for rows equal in every column (gaps equal gaps),
    numbered by first appearance. Hashing each row (0.6 s for a million rows of 40 mixed
    columns, where a groupby takes 4 s) and then checking each row against its group's first
    row keeps it exact: a hash collision falls back to the groupby."""
    hashes = pd.util.hash_pandas_object(table, index=False).to_numpy()
    codes, _ = pd.factorize(hashes)
    first = first_rows(codes)[codes]
    # Column by column: one column's copy at a time, not the whole table's twice.
    for name in table.columns:
        values = table[name].reset_index(drop=True)
        firsts = values.iloc[first].reset_index(drop=True)
        same = values.eq(firsts).fillna(False).to_numpy(bool)
        if not (same | (values.isna() & firsts.isna()).to_numpy(bool)).all():
            grouped = table.groupby(list(table.columns), sort=False, dropna=False).ngroup()
            return grouped.to_numpy().astype(np.int64)
    return codes.astype(np.int64)


def first_rows(groups: np.ndarray) -> np.ndarray:
    """The index of each group's first row (groups numbered 0..G-1)."""
    return np.unique(groups, return_index=True)[1]


def linked_row_groups(columns: Sequence[np.ndarray]) -> np.ndarray:
    """One integer per row (numbered by first appearance): rows that share a value of any of
    ``columns`` (each a column's value codes, -1 a gap) belong together, and so, transitively,
    do their partners: a customer's rows joined by their e-mail on some and their phone on
    others. Label propagation, each pass halving chains by pointer jumping."""
    rows = len(columns[0]) if columns else 0
    labels = np.arange(rows, dtype=np.int64)
    present = [(codes >= 0, np.asarray(codes, np.int64)) for codes in columns]
    while True:
        before = labels.copy()
        for here, codes in present:
            if not here.any():
                continue
            least = np.full(int(codes[here].max()) + 1, rows, dtype=np.int64)
            np.minimum.at(least, codes[here], labels[here])
            old = labels[here]
            new = np.minimum(old, least[codes[here]])
            labels[here] = new
            np.minimum.at(labels, old, new)  # the old label's row learns it too
        while not np.array_equal(jumped := labels[labels], labels):
            labels = jumped
        if np.array_equal(labels, before):
            return pd.factorize(labels)[0].astype(np.int64)
