"""New ids for generated histories: the customers themselves, and each shared id (a terminal, a
device, a merchant id) whose real values never reach the model.

**Customers.** Each generated history gets an id no real customer has: a prefix that no real id
starts with (chosen at training, the only thing stored), a tag of the sampling seed and a number.

**Shared ids (P3 of docs/histories.md).** The generator draws, per record and shared column,
whether the record's id is one its history used before or a new one (``wgangp:repeat:<column>``);
what it cannot draw is which other customers share an id. That comes from the structure fitted
here, as k-anonymous knots (:func:`~wgangp.data.knots.grouped_knots`, groups of ``min_rows``
ids), never a real id:

- among the rest's rows, how many customers use one id (its degree) and how many distinct ids
  the table has per customer: a new id of a rest row is drawn from a pool of that many ids per
  history, each as likely as its drawn degree;
- among rare-class rows, the degree of an id (the victims of a compromised terminal): the
  histories' new rare-class ids are taken in time order and dealt out in runs of drawn
  degrees, so each such id's victims are customers whose frauds are close in time, as a
  terminal's victims fall in one window.

A repeat reuses an id the history drew before for a row of its class (uniformly among them; of
the other class when it has none), so a burst at one terminal stays at that terminal and the
normal rows keep to the customer's usual ones. Ids are meaningful within one sample: two samples
share none."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from wgangp.data.knots import grouped_knots

#: The knots of a degree distribution at most.
_KNOTS = 32
#: Token values of ``wgangp:repeat:<column>`` (as :mod:`wgangp.data.histories.encoding` writes).
NEW, REPEATED, EMPTY = 0, 1, 2


@dataclass(frozen=True)
class Degrees:
    """A degree distribution as knots: its inverse CDF, never one id's degree."""

    references: tuple[float, ...]
    quantiles: tuple[float, ...]

    @classmethod
    def fit(cls, degrees: np.ndarray, min_rows: int) -> Degrees:
        if len(degrees) == 0:
            return cls((0.0, 1.0), (1.0, 1.0))
        refs, knots = grouped_knots(np.asarray(degrees, np.float64)[:, None], min_rows, _KNOTS)
        return cls(tuple(map(float, refs)), tuple(float(q) for q in knots[:, 0]))

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        values = np.interp(rng.random(n), self.references, self.quantiles)
        return np.maximum(1, np.round(values)).astype(np.int64)


@dataclass(frozen=True)
class SharedIds:
    """One shared column's pseudonyms (module doc)."""

    column: str
    prefix: str
    ids_per_history: float
    rest: Degrees
    rare: Degrees

    @classmethod
    def fit(
        cls,
        column: str,
        prefix: str,
        codes: np.ndarray,
        owners: np.ndarray,
        row_classes: np.ndarray,
        histories: int,
        min_rows: int,
    ) -> SharedIds:
        """Fit on the training rows: each row's id code (-1: empty), entity and class; ``prefix``
        one that no real value starts with (:func:`~wgangp.data.histories.roles.free_prefix`)."""
        held = pd.DataFrame({"id": codes, "owner": owners, "rare": row_classes})
        held = held[held["id"] >= 0]
        rest = held[held["rare"] == 0].groupby("id")["owner"].nunique().to_numpy()
        rare = held[held["rare"] == 1].groupby("id")["owner"].nunique().to_numpy()
        return cls(
            column=column,
            prefix=prefix,
            ids_per_history=len(rest) / max(histories, 1),
            rest=Degrees.fit(rest, min_rows),
            rare=Degrees.fit(rare, min_rows),
        )

    def assign(
        self,
        history: np.ndarray,
        seconds: np.ndarray,
        rare: np.ndarray,
        token: np.ndarray,
        histories: int,
        rng: np.random.Generator,
        tag: str,
    ) -> np.ndarray:
        """Ids for rows sorted by history then time: each row's history, time, class and
        repeat token -> an object array of new ids (None where the token says empty)."""
        pool = max(1, round(self.ids_per_history * histories))
        weights = self.rest.draw(rng, pool).astype(np.float64)
        rest_ids = rng.choice(pool, size=len(history), p=weights / weights.sum())
        ids = np.full(len(history), -1, np.int64)
        new = token != REPEATED
        starts_rare = new & (rare == 1) & (token != EMPTY)
        order = np.flatnonzero(starts_rare)[np.argsort(seconds[starts_rare], kind="stable")]
        next_id, left = pool, 0
        owners: set[int] = set()
        for row in order:  # runs of close-in-time victims, each run one new id
            if left == 0 or history[row] in owners:
                next_id, left, owners = next_id + 1, int(self.rare.draw(rng, 1)[0]), set()
            ids[row] = next_id - 1
            owners.add(history[row])
            left -= 1
        plain = new & (token != EMPTY) & ~starts_rare
        ids[plain] = rest_ids[plain]
        used: dict[tuple[int, int], list[int]] = {}
        for row in range(len(history)):
            same = used.setdefault((int(history[row]), int(rare[row])), [])
            if token[row] == REPEATED:
                other = used.get((int(history[row]), 1 - int(rare[row])), [])
                pool_ = same or other
                ids[row] = pool_[rng.integers(len(pool_))] if pool_ else rest_ids[row]
            if ids[row] >= 0 and ids[row] not in same:
                same.append(int(ids[row]))
        out = np.empty(len(history), dtype=object)
        present = ids >= 0
        out[present] = [f"{self.prefix}{tag}-{i}" for i in ids[present]]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "column": self.column,
            "prefix": self.prefix,
            "ids_per_history": self.ids_per_history,
            "rest": [list(self.rest.references), list(self.rest.quantiles)],
            "rare": [list(self.rare.references), list(self.rare.quantiles)],
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> SharedIds:
        return cls(
            column=str(raw["column"]),
            prefix=str(raw["prefix"]),
            ids_per_history=float(raw["ids_per_history"]),
            rest=Degrees(*(tuple(map(float, part)) for part in raw["rest"])),
            rare=Degrees(*(tuple(map(float, part)) for part in raw["rare"])),
        )
