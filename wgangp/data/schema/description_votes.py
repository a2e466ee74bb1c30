"""The description of an undeclared table that a private run ships, released by noisy entity
votes: which columns are features, each one's kind, whether it may be empty.

Inferred from the rows, each such fact can hang on one customer: one gap makes a column nullable
(and the networks one wider), one fraction makes integers continuous, one e-mail can make a column
an identifier. Under ``privacy.epsilon`` with no ``data.schema``, each entity instead votes per
column, on its cells as :mod:`~wgangp.data.schema.cell_reading` reads them alone:

- the kind most of its present cells have (boolean, number, date or text; ties: that order);
- whether it has a gap, a number with a fraction, a cell that is or holds an identifier.

An entity moves a column's seven counts by at most 2 in L2 (one kind, and three flags), so all the
columns' counts are one Gaussian release costing as much as one statistic a column
(:data:`SENSITIVITY`). The facts are read off the noisy counts (post-processing), each against
the threshold T = :data:`THRESHOLD_SIGMAS` noise deviations:

- a column with T or more entities holding identifiers is dropped;
- its kind is the one with the most votes, and it is dropped when that one has fewer than T;
- a number column is an integer unless T or more entities have a fraction;
- it is nullable when T or more entities have a gap, or T or more vote for another kind.

A fact that fewer than about T entities show is not seen: their fractions round, their gaps are
filled, their cells of another kind become gaps (:mod:`wgangp.data.private_table`).
"""

from __future__ import annotations

from dataclasses import dataclass

import dp_accounting
import numpy as np

from wgangp.data.schema.cell_reading import (
    BOOLEAN,
    COLUMN_KINDS,
    DATE,
    GAP,
    NUMBER,
    CellReading,
)
from wgangp.privacy.accountant import gaussian_event

#: The seven counts of a column, in order.
VOTES = ("boolean", "number", "date", "text", "gap", "fraction", "identifier")
_GAP, _FRACTION, _IDENTIFIER = 4, 5, 6
#: One entity's largest move of a column's counts (L2): one kind vote and three flags.
SENSITIVITY = 2.0
#: A fact is read as held when its noisy count reaches this many noise deviations.
THRESHOLD_SIGMAS = 3.0


@dataclass(frozen=True)
class ColumnDescription:
    """One column as released: its kind (a schema kind), whether it is the booleans' kind and may
    be empty; or why it was dropped."""

    name: str
    kind: str | None  # categorical | integer | continuous | datetime; None when dropped
    boolean: bool = False
    nullable: bool = False
    dropped: str | None = None


@dataclass(frozen=True)
class ReleasedDescription:
    """Every column's description, the release's event and its threshold (in entities)."""

    columns: tuple[ColumnDescription, ...]
    event: dp_accounting.DpEvent
    threshold: float

    def kept(self) -> list[ColumnDescription]:
        return [column for column in self.columns if column.kind is not None]

    def dropped(self) -> list[ColumnDescription]:
        return [column for column in self.columns if column.kind is None]


def entity_votes(reading: CellReading, owners: np.ndarray, entities: int) -> np.ndarray:
    """Each entity's votes on one column: ``[entities, 7]`` zeros and ones, in :data:`VOTES`'
    order (``owners``: each cell's entity, codes 0 to ``entities`` - 1)."""
    owners = np.asarray(owners, np.int64)
    votes = np.zeros((entities, len(VOTES)))
    held = np.zeros((entities, len(COLUMN_KINDS)))
    for i, kind in enumerate(COLUMN_KINDS):
        held[:, i] = np.bincount(owners[reading.kinds == kind], minlength=entities)
    any_present = held.sum(axis=1) > 0
    majority = np.argmax(held, axis=1)  # the first kind wins a tie
    votes[np.flatnonzero(any_present), majority[any_present]] = 1.0
    fraction = (reading.kinds == NUMBER) & (np.mod(reading.numbers, 1.0) != 0)
    for index, flags in (
        (_GAP, reading.kinds == GAP),
        (_FRACTION, fraction),
        (_IDENTIFIER, reading.identifier),
    ):
        votes[np.unique(owners[flags]), index] = 1.0
    return votes


def release_description(
    readings: dict[str, CellReading],
    owners: np.ndarray,
    noise_multiplier: float,
    rng: np.random.Generator,
) -> ReleasedDescription:
    """Every column's votes summed over entities, plus N(0, (``noise_multiplier`` x
    :data:`SENSITIVITY`)^2) each, and the facts read off them (module doc). The event is that of
    one release a column at ``noise_multiplier``."""
    codes, owners = np.unique(np.asarray(owners), return_inverse=True)
    sigma = noise_multiplier * SENSITIVITY
    threshold = THRESHOLD_SIGMAS * sigma
    described = []
    for name, reading in readings.items():
        counts = entity_votes(reading, owners, len(codes)).sum(axis=0)
        noisy = counts + rng.normal(0.0, sigma, len(VOTES))
        described.append(_decide(name, noisy, threshold))
    event = gaussian_event(noise_multiplier, max(len(readings), 1))
    return ReleasedDescription(tuple(described), event, threshold)


def _decide(name: str, noisy: np.ndarray, threshold: float) -> ColumnDescription:
    """One column's facts off its noisy counts (module doc)."""
    if noisy[_IDENTIFIER] >= threshold:
        return ColumnDescription(name, None, dropped="holds identifiers")
    kinds = noisy[: len(COLUMN_KINDS)]
    best = int(np.argmax(kinds))
    if kinds[best] < threshold:
        return ColumnDescription(name, None, dropped="too few entities hold a value")
    others = np.delete(kinds, best)
    nullable = bool(noisy[_GAP] >= threshold or (others >= threshold).any())
    kind = COLUMN_KINDS[best]
    if kind == NUMBER:
        schema_kind = "continuous" if noisy[_FRACTION] >= threshold else "integer"
    elif kind == DATE:
        schema_kind = "datetime"
    else:
        schema_kind = "categorical"
    return ColumnDescription(name, schema_kind, boolean=kind == BOOLEAN, nullable=nullable)
