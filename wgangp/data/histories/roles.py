"""What each column of a history table is: the entity, the time, the label, attributes (constant
within every entity: a home city, a card type, generated once per history), records (the rest,
one value per row) and shared ids (a terminal, device or merchant id many customers share).

A shared id is no feature: its values are places, and a real one would name where a customer
shops. It leaves the table before the schema is inferred and comes back in samples as new
pseudonymous ids (:mod:`wgangp.serving.pseudonyms`). ``data.shared`` names such columns; left
null, a column is taken for one by its content: text codes (a digit in most values) or more than
a thousand levels, or whole numbers under an id-like name (``terminal_id``), of at least
:data:`MIN_SHARED_VALUES` values, most of the rows at a value two or more entities hold, and not
constant within entities (that would be an attribute)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from wgangp.data.schema.cells import no_such_column, present
from wgangp.data.schema.review import MAX_LEVELS
from wgangp.data.schema.table_schema import TableSchema
from wgangp.errors import DataError

#: Distinct values a shared id has at least.
MIN_SHARED_VALUES = 20
#: The share of a shared id's rows at a value two or more entities hold, at least.
SHARED_ROWS = 0.5
#: Name tokens of a place many customers use: whole numbers under one of these are ids.
SHARED_TOKENS = frozenset(
    {"id", "terminal", "device", "merchant", "ip", "atm", "pos", "store", "shop", "site", "mcc"}
)
_TOKENS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


@dataclass(frozen=True)
class HistoryRoles:
    """The columns of a history table by role, each in the table's order."""

    entity: str
    time: str
    label: str
    attributes: tuple[str, ...]
    records: tuple[str, ...]
    shared: tuple[str, ...]
    #: Every column a sample holds, in the table's order.
    order: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return {key: list(value) if isinstance(value, tuple) else value
                for key, value in self.__dict__.items()}  # fmt: skip

    @classmethod
    def from_dict(cls, raw: dict) -> HistoryRoles:
        values: dict[str, Any] = {
            key: tuple(value) if isinstance(value, list) else value for key, value in raw.items()
        }
        return cls(**values)


def check_time_column(frame: pd.DataFrame, time: str, source: str) -> None:
    """The time column is in the table and holds a time in every row (one line otherwise)."""
    names = [str(name) for name in frame.columns]
    if time not in set(names):
        raise DataError(f"{source}: data.time={time}: {no_such_column(time, names)}")
    gaps = frame[time].isna().to_numpy() | frame[time].astype(str).str.strip().eq("").to_numpy()
    if gaps.any():
        raise DataError(
            f"{source}: data.time column {time} has {int(gaps.sum())} empty cell(s) (first at "
            f"data row {int(np.flatnonzero(gaps)[0]) + 1}); every row needs its time: fill or "
            "drop those rows"
        )


def check_time_kind(schema: TableSchema, time: str, frame: pd.DataFrame, source: str) -> None:
    """The time column's kind orders rows: dates and times, or numbers (seconds)."""
    if time not in set(schema.names):
        raise DataError(
            f"{source}: data.time={time} is not a column of the schema (an identifier, or deleted "
            "from data.schema); keep it in the schema as kind: datetime"
        )
    column = schema.column(time)
    if column.kind == "categorical":
        example = present(frame[time]).iloc[0]
        raise DataError(
            f"{source}: data.time column {time} holds text that is no date or time (e.g. "
            f"{str(example)[:40]!r}), so its rows cannot be put in order; write its cells as "
            "2024-03-01 12:30:00, or set its format: in data.schema"
        )


def shared_columns(
    frame: pd.DataFrame, owners: np.ndarray, excluded: Sequence[str], named: Sequence[str] | None
) -> tuple[str, ...]:
    """The shared-id columns: ``named`` (``data.shared``), each checked to be in the table, else
    those found by content among the columns not ``excluded`` (module doc)."""
    names = [str(name) for name in frame.columns]
    if named is not None:
        for name in named:
            if name not in set(names):
                raise DataError(f"data.shared={name}: {no_such_column(name, names)}")
        return tuple(name for name in names if name in set(named))
    return tuple(
        name for name in names if name not in set(excluded) and _shared(frame[name], name, owners)
    )


def _shared(values: pd.Series, name: str, owners: np.ndarray) -> bool:
    cells = present(values)
    distinct = int(cells.nunique())
    if distinct < MIN_SHARED_VALUES or not _id_like(cells, name, distinct):
        return False
    held = pd.DataFrame({"value": values.to_numpy(), "owner": owners}).dropna()
    per_value = held.groupby("value", sort=False)["owner"].nunique()
    per_owner = held.groupby("owner", sort=False)["value"].nunique()
    if per_owner.max() <= 1:  # constant within every entity: an attribute
        return False
    shared_rows = held["value"].map(per_value).to_numpy() >= 2
    return bool(shared_rows.mean() >= SHARED_ROWS)


def _id_like(cells: pd.Series, name: str, distinct: int) -> bool:
    """Codes in text (a digit in most values), thousands of levels, or whole numbers under an
    id-like name."""
    if pd.api.types.is_bool_dtype(cells):
        return False
    if pd.api.types.is_numeric_dtype(cells):
        numbers = pd.to_numeric(cells, errors="coerce").to_numpy(np.float64)
        whole = bool(np.all(np.mod(numbers, 1) == 0))
        tokens = {t.lower() for t in _TOKENS.findall(name)}
        return whole and bool(tokens & SHARED_TOKENS)
    if not pd.api.types.is_string_dtype(cells) and cells.dtype != object:
        return False
    texts = pd.Series(pd.unique(cells.astype(str)))
    if distinct > MAX_LEVELS:
        return True
    return bool(texts.str.contains(r"\d", regex=True).mean() >= 0.9)


def attribute_columns(
    frame: pd.DataFrame, owners: np.ndarray, candidates: Sequence[str]
) -> tuple[str, ...]:
    """The ``candidates`` constant within every entity (a gap equal to a gap), when some entity
    has two rows or more (else nothing tells an attribute from a record)."""
    if len(frame) == 0 or np.bincount(pd.factorize(owners)[0]).max() < 2:
        return ()
    found = []
    grouped = pd.DataFrame({"owner": owners})
    for name in candidates:
        grouped["value"] = frame[name].to_numpy()
        if grouped.groupby("owner", sort=False)["value"].nunique(dropna=False).max() <= 1:
            found.append(name)
    return tuple(found)


def free_prefix(values: pd.Series, base: str) -> str:
    """``base`` lengthened until no value of ``values`` (as text) starts with it: ids made of it
    are never a real one (the prefix is all a model stores of them)."""
    texts = pd.Series(pd.unique(values.dropna())).astype(str)
    prefix = base
    while len(texts) and texts.str.startswith(prefix).any():
        prefix = prefix[:-1] + "x-"
    return prefix
