"""Columns that identify a person, found by what they hold and not only by their names.

An identifier (a customer id, an e-mail, a card number, a phone, a name) must never ship: as a
feature its values would be learned, stored in the model and come back verbatim in samples. Names
miss most of them (``col7`` holding e-mails, ``ref`` holding card numbers), so a column is judged
by its content (the formats its values are written in, :mod:`.identifier_patterns`), by how few
entities share its values, by whether it holds many codes of one entity or few rows each, codes
under a person's or a device's ID name, text named as a person's details, personal names, and by
whether it is one-to-one with an identifier found so (a name beside an e-mail).

Without ``data.entity`` a customer's 40 rows would count as 40 entities, and their name, device
and postcode would pass every rule that counts. So the customers are inferred first: rows that
share a value of an identifier found by its content or its ID name are one customer's
(:func:`~wgangp.data.entities.linked_row_groups`), and every rule runs again counting them
(:func:`identify`). Detection only: pure functions; the pipeline drops what they find and says why.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from functools import cache

import numpy as np
import pandas as pd

from wgangp.data.entities import identical_row_groups, linked_row_groups
from wgangp.data.knots import DEFAULT_MIN_ROWS
from wgangp.data.schema.column_values import ColumnValues, column_values
from wgangp.data.schema.identifier_names import NameSays, name_says
from wgangp.data.schema.identifier_patterns import (
    WHOLE_KINDS,
    card,
    code,
    identifier_cells,
    known_values,
    personal_name,
)

__all__ = [
    "Identification", "Identifier", "InferredEntity", "find_identifiers", "identifier_cells",
    "identify", "known_values", "proposed_entity",
]  # fmt: skip

#: The share of sampled values of one kind (or of any kinds, a contact column) that identifies.
CONTENT_SHARE = 0.9
#: Fewer present cells than this never make a column "mostly rare".
MIN_RARE_ROWS = 20
#: The share of rows holding a value fewer than k entities share that identifies.
RARE_SHARE = 0.5
#: Code-like values, few rows each: at least this many distinct values.
MIN_CODES = 50
#: Codes under a person's ID name, and columns linked to an identifier: this many values at least.
MIN_NAMED_CODES = 20
#: A joining column's value beside this many values of another is shared, not one person's.
MAX_PARTNERS = DEFAULT_MIN_ROWS
#: The share of a column's rows one-to-one with an identifier's that links it.
LINKED_SHARE = 0.95
#: Content kinds that are codes rather than a person's own details: a hashed merchant id of
#: hundreds of rows each is a feature, a hashed customer of a few rows each an ID (rules 3, 4).
CODE_KINDS = frozenset({"UUIDs", "hash-like tokens"})
#: Content kinds shared by many people (a household's or an office's network): never used to
#: join rows into customers.
SHARED_KINDS = CODE_KINDS | {"IP addresses"}


@dataclass(frozen=True)
class Identifier:
    """A column that identifies a person, why (completing "column X ..."), and its size."""

    column: str
    reason: str
    values: int  # distinct present values
    rows: int  # present (non-empty) cells
    #: The rule that found it (:data:`JOINING_RULES`): whether its values join rows into customers.
    rule: str = field(default="", compare=False)

    @property
    def rows_per_value(self) -> float:
        """Present rows per distinct value."""
        return self.rows / self.values

    @property
    def groups_rows(self) -> bool:
        """Whether it could name an entity (data.entity): its values repeat, at least 2 rows each
        on average, and there are at least k (``DEFAULT_MIN_ROWS``) of them (fewer entities than
        k could share no value)."""
        return self.rows_per_value >= 2 and self.values >= DEFAULT_MIN_ROWS


#: Rules whose columns' values each name one person, so rows sharing one are one customer's:
#: the strong ones (content, IDs) are used when any column meets them, else the weak ones (names,
#: details, links; two customers may share a name).
JOINING_RULES = {"strong": ("content", "codes", "named codes"), "weak": ("details", "names")}


@dataclass(frozen=True)
class InferredEntity:
    """Who the customers are when ``data.entity`` names no one: rows sharing a value of one of
    ``columns`` (or identical in every column) are one customer's."""

    columns: tuple[str, ...]
    codes: np.ndarray  # each row's customer, numbered by first appearance
    count: int


@dataclass(frozen=True)
class Identification:
    """The identifier columns, in the frame's order, and the customers inferred from them."""

    found: tuple[Identifier, ...]
    entity: InferredEntity | None = None


class Owners:
    """Each row's entity, computed when a rule first needs it: the codes and their count."""

    def __init__(self, make: Callable[[], np.ndarray]) -> None:
        self._make = make

    @cache  # noqa: B019 - one object per call of identify, dropped with it
    def codes(self) -> tuple[np.ndarray, int]:
        codes, uniques = pd.factorize(np.asarray(self._make()))
        return codes.astype(np.int64), len(uniques)

    def per_value(self, cells: ColumnValues) -> np.ndarray:
        """How many entities hold each of the column's values."""
        owners, count = self.codes()
        here = cells.codes >= 0
        pairs = pd.unique(cells.codes[here].astype(np.int64) * count + owners[here])
        return np.bincount(pairs // count, minlength=len(cells.counts))


def find_identifiers(
    frame: pd.DataFrame,
    *,
    skip: Collection[str] = (),
    owners: np.ndarray | None = None,
    min_entities: int = DEFAULT_MIN_ROWS,
) -> list[Identifier]:
    """The columns of ``frame`` (but ``skip``) that identify a person, in the frame's order.
    ``owners``: each row's entity code (None: the customers :func:`identify` infers)."""
    return list(identify(frame, skip=skip, owners=owners, min_entities=min_entities).found)


def identify(
    frame: pd.DataFrame,
    *,
    skip: Collection[str] = (),
    owners: np.ndarray | None = None,
    min_entities: int = DEFAULT_MIN_ROWS,
) -> Identification:
    """The identifier columns of ``frame`` (but ``skip``), and, without ``owners`` (each row's
    entity, ``data.entity``), the customers they name: the rules run once counting rows
    (identical rows once), then again counting the customers that the columns found by their
    content or as IDs join (:data:`JOINING_RULES`), so that a value one customer's 40 rows hold
    is one customer's. A column either pass finds is an identifier (with the first's reason)."""
    if owners is not None and len(owners) != len(frame):
        raise ValueError(f"owners has {len(owners)} entries for {len(frame)} rows")
    names = [str(name) for name in frame.columns]
    columns = {
        i: cells
        for i, name in enumerate(frame.columns)
        if name not in skip and (cells := column_values(frame.iloc[:, i])) is not None
    }
    # What each column's content and name say: the same in both passes.
    contents = {i: _content(cells) for i, cells in columns.items()}
    said = {i: name_says(names[i]) for i in columns}
    if owners is not None:
        given = np.asarray(owners)
        found = _found(names, columns, contents, said, Owners(lambda: given), min_entities)
        return Identification(tuple(found))
    rows = Owners(lambda: identical_row_groups(frame))
    first = _found(names, columns, contents, said, rows, min_entities)
    entity = _inferred_entity(first, names, columns, rows)
    if entity is None:
        return Identification(tuple(first))
    second = _found(names, columns, contents, said, Owners(lambda: entity.codes), min_entities)
    by_name = {f.column: f for f in second} | {f.column: f for f in first}
    return Identification(tuple(by_name[name] for name in names if name in by_name), entity)


def proposed_entity(found: Sequence[Identifier]) -> Identifier | None:
    """The identifier to propose as data.entity: among those that group rows, the one with the
    fewest values (the coarsest: a customer over their cards), found by the strongest joining
    rule any is found by (an e-mail before a name, a name before a postcode); None when none
    groups rows."""
    grouping = [f for f in found if f.groups_rows]
    for rules in (JOINING_RULES["strong"], JOINING_RULES["weak"], None):
        chosen = [f for f in grouping if rules is None or f.rule in rules]
        if chosen:
            return min(chosen, key=lambda f: f.values)
    return None


def _found(
    names: list[str],
    columns: dict[int, ColumnValues],
    contents: dict[int, tuple[str, set[str]] | None],
    said: dict[int, NameSays],
    owners: Owners,
    k: int,
) -> list[Identifier]:
    """One pass of the rules over ``columns`` (``contents``: rule 1's answers; ``said``: what
    their names say), counting ``owners``' entities."""
    found: dict[int, Identifier] = {}
    for i, cells in columns.items():
        content = contents[i]
        if content is not None:
            rule = "content" if content[1] - SHARED_KINDS else "shared content"
            found[i] = _identifier(names[i], content[0], cells, rule)
            continue
        if not cells.number_like and (ruled := _by_rules(cells, said[i], owners, k)):
            found[i] = _identifier(names[i], ruled[1], cells, ruled[0])
    named = [(names[j], columns[j]) for j in found]
    for i, cells in columns.items():
        if i not in found and (reason := _linked(cells, named)):
            found[i] = _identifier(names[i], reason, cells, "linked")
    return [found[i] for i in sorted(found)]


def _by_rules(
    cells: ColumnValues, name: NameSays, owners: Owners, k: int
) -> tuple[str, str] | None:
    """The first rule after content that finds the column: (the rule, the reason)."""
    rules: list[tuple[str, Callable[[], str | None]]] = [
        ("rare", lambda: None if cells.integer else _mostly_rare(cells, owners, k)),
        ("codes", lambda: _codes(cells, name, k, owners)),
        ("named codes", lambda: _named_codes(cells, name)),
        ("details", lambda: _details(cells, name)),
        ("names", lambda: _names(cells, name)),
        ("card part", lambda: _card_part(name)),
        ("rare", lambda: _rare_numbered(cells, owners, k, name)),
    ]
    return next(((rule, reason) for rule, test in rules if (reason := test())), None)


def _inferred_entity(
    found: list[Identifier], names: list[str], columns: dict[int, ColumnValues], rows: Owners
) -> InferredEntity | None:
    """The customers the joining identifiers name (:data:`JOINING_RULES`, strong ones first),
    or None when they join no two rows that identical-row counting kept apart."""
    index = {name: i for i, name in enumerate(names)}
    joining = []
    for strength in ("strong", "weak"):
        joining = [f for f in found if f.rule in JOINING_RULES[strength] and f.groups_rows]
        if joining:
            break
    if not joining:
        return None
    codes = _personal_codes([columns[index[f.column]] for f in joining])
    groups = linked_row_groups([*codes, rows.codes()[0]])
    count = int(groups.max()) + 1 if len(groups) else 0
    if count >= rows.codes()[1]:
        return None
    return InferredEntity(tuple(f.column for f in joining), groups, count)


def _personal_codes(joining: list[ColumnValues]) -> list[np.ndarray]:
    """Each joining column's codes without its shared values (-1): a value that sits beside
    ``MAX_PARTNERS`` or more values of another joining column (a household's phone beside five
    e-mails, a placeholder) is no one person's, and would join many customers into one."""
    out = []
    for i, cells in enumerate(joining):
        shared = np.zeros(len(cells.counts), dtype=bool)
        for j, other in enumerate(joining):
            if i != j:
                both = (cells.codes >= 0) & (other.codes >= 0)
                mine = cells.codes[both].astype(np.int64)
                pairs = pd.unique(mine * len(other.counts) + other.codes[both])
                partners = np.bincount(pairs // len(other.counts), minlength=len(cells.counts))
                shared |= partners >= MAX_PARTNERS
        codes = cells.codes.astype(np.int64)
        codes[(codes >= 0) & shared[np.maximum(codes, 0)]] = -1
        out.append(codes)
    return out


def _identifier(name: str, reason: str, cells: ColumnValues, rule: str) -> Identifier:
    return Identifier(name, reason, len(cells.counts), int(cells.counts.sum()), rule)


def _content(cells: ColumnValues) -> tuple[str, set[str]] | None:
    """Rule 1: the sampled values are of one kind (integers: card numbers only), or of several
    (a contact column), in at least ``CONTENT_SHARE`` of them; the reason and the kinds."""
    if cells.integer:
        cards = [v.isdigit() and card(v) for v in cells.sample]
        if np.mean(cards) >= CONTENT_SHARE:
            return "holds payment card numbers", {"payment card numbers"}
        return None
    hits = {kind: np.array([test(v) for v in cells.sample]) for kind, test in WHOLE_KINDS.items()}
    share = {kind: float(hit.mean()) for kind, hit in hits.items()}
    best = max(share, key=lambda kind: share[kind])
    if share[best] >= CONTENT_SHARE:
        return None if best in CODE_KINDS else (f"holds {best}", {best})
    order = sorted(hits, key=lambda kind: -share[kind])  # each value: its likeliest kind
    kinds = Counter(next((k for k in order if hits[k][i]), "") for i in range(len(cells.sample)))
    names = [kind for kind, _ in kinds.most_common() if kind]
    if sum(kinds[kind] for kind in names) < CONTENT_SHARE * len(cells.sample):
        return None
    return f"holds {', '.join(names[:-1])} and {names[-1]}", set(names)


def _mostly_rare(cells: ColumnValues, owners: Owners, k: int) -> str | None:
    """Rule 2: at least ``RARE_SHARE`` of a column's rows hold a value fewer than ``k``
    entities share (values of fewer than k rows need no owners to tell)."""
    rows = int(cells.counts.sum())
    if rows < MIN_RARE_ROWS:
        return None
    rare = int(cells.counts[cells.counts < k].sum())
    if rare < RARE_SHARE * rows:
        rare = int(cells.counts[owners.per_value(cells) < k].sum())
    if rare < RARE_SHARE * rows:
        return None
    return (
        f"holds a value fewer than {k} entities share in {rare} of its {rows} rows "
        "(names, per-person codes, free text)"
    )


def _rare_numbered(cells: ColumnValues, owners: Owners, k: int, name: NameSays) -> str | None:
    """Rule 2 for whole numbers named as a postcode (``zip``, ``plz``): codes of places, not
    measurements (other integers with ID names are rules 3 and 4's, or the review's)."""
    if not cells.integer or not name.postcode:
        return None
    return _mostly_rare(cells, owners, k)


def _codes(cells: ColumnValues, name: NameSays, k: int, owners: Owners) -> str | None:
    """Rule 3: code-like values (text: a digit and no space in nine of ten; integers), many
    of few rows each or of one entity each (integers: under an ID-like name)."""
    values = len(cells.counts)
    if values < MIN_CODES or not _code_like(cells):
        return None
    if cells.integer and not name.integer_id:
        return None
    median = float(np.median(cells.counts))
    if median <= 2 * k:
        each = round(median)
        return (
            f"holds {values} code-like values of about {each} row{'s' * (each != 1)} each (an ID)"
        )
    if np.median(owners.per_value(cells)) <= 1:
        return f"holds {values} code-like values of one entity each (an ID)"
    return None


def _named_codes(cells: ColumnValues, name: NameSays) -> str | None:
    """Rule 4: code-like values under a person's ID name (``customer_id``) or a device's
    (``device_id``; a device's UUIDs or hashes under ``device`` alone), whatever their rows."""
    values = len(cells.counts)
    if values < MIN_NAMED_CODES or not _code_like(cells):
        return None
    if name.person_id:
        return f"holds {values} code-like values and is named like a person's ID"
    hashed = np.mean([_hashed(v) for v in cells.sample]) >= CONTENT_SHARE
    if name.device_id or name.device and hashed:
        return f"holds {values} code-like values and is named like a device's ID"
    return None


def _hashed(value: str) -> bool:
    return any(WHOLE_KINDS[kind](value) for kind in CODE_KINDS)


def _code_like(cells: ColumnValues) -> bool:
    """Integers, or text of which nine values in ten are codes (a placeholder or two allowed)."""
    return cells.integer or bool(np.mean([code(v) for v in cells.sample]) >= CONTENT_SHARE)


def _details(cells: ColumnValues, name: NameSays) -> str | None:
    """Rule 5: text named as a person's details (``first_name``, ``customer_name``,
    ``billing_address``, ``username``, ``plate``), of ``MIN_NAMED_CODES`` values or more."""
    if cells.integer or len(cells.counts) < MIN_NAMED_CODES or not name.detail:
        return None
    return f"holds {len(cells.counts)} values and is named like a person's details"


def _names(cells: ColumnValues, name: NameSays) -> str | None:
    """Rule 6: personal names (``Anna Schmidt``, ``DUPONT, Jean``) in nine values of ten,
    unless the column's name says whose they are not (``merchant_name``, ``city``)."""
    if cells.integer or len(cells.counts) < MIN_NAMED_CODES or name.thing:
        return None
    if np.mean([personal_name(v) for v in cells.sample]) < CONTENT_SHARE:
        return None
    return f"holds {len(cells.counts)} personal names"


def _card_part(name: NameSays) -> str | None:
    """Rule 7: a card number's last digits (``card_last4``, ``pan_tail``): a quasi-identifier
    that, beside a date or an amount, finds the card; nothing a model needs."""
    if name.card_part:
        return "is named like a card number's last digits (part of a card number)"
    return None


def _linked(cells: ColumnValues, found: list[tuple[str, ColumnValues]]) -> str | None:
    """Rule 5: one-to-one with an identifier's values on ``LINKED_SHARE`` of the column's rows.
    Only a column whose values repeat (2 rows each on average): two columns unique in every row
    are one-to-one by chance (a timestamp beside a transaction id)."""
    values, rows = len(cells.counts), int(cells.counts.sum())
    if values < MIN_NAMED_CODES or rows < 2 * values:
        return None
    for name, other in found:
        both = (cells.codes >= 0) & (other.codes >= 0)
        mine, theirs = cells.codes[both].astype(np.int64), other.codes[both].astype(np.int64)
        pairs = pd.unique(mine * len(other.counts) + theirs)
        partners = np.bincount(pairs // len(other.counts), minlength=values)
        back = np.bincount(pairs % len(other.counts), minlength=len(other.counts))
        single = (partners[mine] == 1) & (back[theirs] == 1)
        if single.sum() >= LINKED_SHARE * rows:
            return f"names the same rows as column {name} (one value each)"
    return None
