"""Columns that identify a person, found by what they hold and not only by their names.

An identifier (a customer id, an e-mail, a card number, a phone, a name) must never ship: as a
feature its values would be learned, stored in the model and come back verbatim in samples. Names
miss most of them (``col7`` holding e-mails, ``ref`` holding card numbers), so a column is judged
by its content (the formats its values are written in), by how few entities share its values,
by whether it holds many codes of few rows each, codes under a person's ID name or text named as
a person's details, and by whether it is one-to-one with an identifier found so (a name beside
an e-mail). Detection only:
pure functions; the pipeline drops what they find and says why.
"""

from __future__ import annotations

import ipaddress
import re
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
import pandas as pd

from wgangp.data.entities import identical_row_groups
from wgangp.data.knots import DEFAULT_MIN_ROWS
from wgangp.data.schema.cells import as_numbers
from wgangp.data.schema.text_formats import (
    number_format,
    number_like_example,
    parse_numbers,
    read_dates,
)

#: The distinct values (the first ones) whose formats are read, whatever the table's size.
SAMPLE = 2000
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
#: The share of a column's rows one-to-one with an identifier's that links it.
LINKED_SHARE = 0.95
#: Name tokens of an ID, and of a person (rule 4 wants one of each: ``customer_id``).
ID_TOKENS = frozenset(
    {"id", "uid", "uuid", "guid", "no", "num", "number", "nr", "ref", "key", "code"}
)
PERSON_TOKENS = frozenset(
    {"customer", "cust", "client", "account", "acct", "user", "member", "holder", "card", "pan"}
    | {"patient", "subscriber", "person"}
)
#: Name tokens that make an integer column's many values of few rows each an ID (a person
#: token alone does not: ``card_amount`` and ``user_age`` are measurements).
ID_LIKE_TOKENS = ID_TOKENS | frozenset(
    {"phone", "mobile", "tel", "msisdn", "iban", "ssn", "device", "email"}
)
#: Name tokens of a person's own details: a text column named only with these and person tokens
#: (``first_name``, ``customer_name``, ``billing_address``; not ``merchant_name``) identifies.
DETAIL_TOKENS = frozenset(
    {"name", "names", "firstname", "lastname", "surname", "fullname", "address", "addr"}
    | {"street", "email", "mail", "phone", "mobile", "passport", "ssn", "dob", "birth"}
)
#: Words that qualify a person's detail without naming something else (``first``, ``billing``).
QUALIFIER_TOKENS = frozenset(
    {"first", "last", "middle", "given", "family", "full", "home", "billing", "shipping"}
    | {"line", "of", "date", "e", "contact", "primary"}
)
#: Content kinds that are codes rather than a person's own details: a hashed merchant id of
#: hundreds of rows each is a feature, a hashed customer of a few rows each an ID (rules 3, 4).
CODE_KINDS = frozenset({"UUIDs", "hash-like tokens"})

_EMAIL = re.compile(r"[^@\s]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_CARD = re.compile(r"[\d -]+")
_IBAN = re.compile(r"[A-Z]{2}\d{2}[A-Z0-9]{11,30}")
_PHONE = re.compile(r"\+?[\d\s().-]+")
_HEX = "[0-9a-f]"
_UUID = re.compile(rf"(\{{)?{_HEX}{{8}}(?:-{_HEX}{{4}}){{3}}-{_HEX}{{12}}(?(1)\}})", re.IGNORECASE)
_HEX_TOKEN = re.compile(r"[0-9a-fA-F]{16,}")
_TOKEN = re.compile(r"(?=.*[A-Za-z])(?=.*\d)[A-Za-z0-9_+/=-]{20,}")
_CODE = re.compile(r"\S*\d\S*")
_NAME_TOKENS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


@dataclass(frozen=True)
class Identifier:
    """A column that identifies a person, why (completing "column X ..."), and its size."""

    column: str
    reason: str
    values: int  # distinct present values
    rows: int  # present (non-empty) cells

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


@dataclass(frozen=True)
class _Cells:
    """One column's present cells: whole numbers or text, each row's value code (-1: empty)."""

    integer: bool
    codes: np.ndarray
    counts: np.ndarray  # rows per value
    sample: list[str]  # the first SAMPLE distinct values as text (integers: their digits)
    #: Numbers written in a format no reader takes (``1.234,50``): the schema review asks for
    #: them to be rewritten, so only their content can make them an identifier.
    number_like: bool = False


def find_identifiers(
    frame: pd.DataFrame,
    *,
    skip: Collection[str] = (),
    owners: np.ndarray | None = None,
    min_entities: int = DEFAULT_MIN_ROWS,
) -> list[Identifier]:
    """The columns of ``frame`` (but ``skip``) that identify a person, in the frame's order.
    ``owners``: each row's entity code (None: each row its own, identical rows one)."""
    if owners is not None and len(owners) != len(frame):
        raise ValueError(f"owners has {len(owners)} entries for {len(frame)} rows")

    @cache
    def owner_codes() -> tuple[np.ndarray, int]:  # only rule 2 needs them, once
        given = identical_row_groups(frame) if owners is None else np.asarray(owners)
        codes, uniques = pd.factorize(given)
        return codes.astype(np.int64), len(uniques)

    columns: dict[int, _Cells] = {}
    found: dict[int, Identifier] = {}
    for i, name in enumerate(frame.columns):
        cells = None if name in skip else _cells(frame.iloc[:, i])
        if cells is None:
            continue
        columns[i] = cells
        tokens = _tokens(str(name))
        reason = _content(cells) or (
            None
            if cells.number_like
            else _mostly_rare(cells, owner_codes, min_entities)
            or _codes(cells, tokens, min_entities)
            or _details(cells, tokens)
        )
        if reason:
            found[i] = _identifier(str(name), reason, cells)
    named = [(str(frame.columns[j]), columns[j]) for j in found]
    for i, cells in columns.items():
        if i not in found and (reason := _linked(cells, named)):
            found[i] = _identifier(str(frame.columns[i]), reason, cells)
    return [found[i] for i in sorted(found)]


def proposed_entity(found: Sequence[Identifier]) -> Identifier | None:
    """The identifier to propose as data.entity: among those that group rows, the one with the
    fewest values (the coarsest: a customer over their cards); None when none groups rows."""
    grouping = [f for f in found if f.groups_rows]
    return min(grouping, key=lambda f: f.values) if grouping else None


def _identifier(name: str, reason: str, cells: _Cells) -> Identifier:
    return Identifier(name, reason, len(cells.counts), int(cells.counts.sum()))


def _cells(series: pd.Series) -> _Cells | None:
    """The column's present cells (text stripped, blanks empty), or None when it can never be an
    identifier: no cells, booleans, datetimes, numbers with fractions, text that reads as dates."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        series = series.astype(object)
    if pd.api.types.is_bool_dtype(series):
        return None
    if pd.api.types.is_integer_dtype(series) or pd.api.types.is_float_dtype(series):
        values = series.to_numpy()
        if pd.api.types.is_float_dtype(series):
            values = values[~np.isnan(values)]
            if not np.isfinite(values).all() or (values % 1 != 0).any():
                return None
        codes, uniques = pd.factorize(series)
        return _made(True, codes, len(uniques), [str(int(u)) for u in uniques[:SAMPLE]])
    if not (pd.api.types.is_object_dtype(series) or pd.api.types.is_string_dtype(series)):
        return None
    text = series.astype("str").str.strip()  # pandas' str dtype: vectorized, gaps kept
    codes, uniques = pd.factorize(text.where(text != ""))
    values = pd.Series(uniques)
    if values.empty:
        return None
    sample = [str(v) for v in values.iloc[:SAMPLE]]
    numbers = _numbers(values)
    if numbers is not None:
        if not np.isfinite(numbers).all() or (numbers % 1 != 0).any():
            return None
        digits = [t if t.isdigit() else str(int(n)) for t, n in zip(sample, numbers, strict=False)]
        return _made(True, codes, len(values), digits)
    if read_dates(values.iloc[:SAMPLE]) is not None and read_dates(values) is not None:
        return None
    number_like = number_like_example(values.iloc[:SAMPLE]) is not None
    return _made(False, codes, len(values), sample, number_like)


def _made(
    integer: bool, codes: np.ndarray, values: int, sample: list[str], number_like: bool = False
) -> _Cells | None:
    codes = codes.astype(np.int32 if len(codes) < 2**31 else np.int64)
    counts = np.bincount(codes[codes >= 0], minlength=values)
    return _Cells(integer, codes, counts, sample, number_like) if counts.sum() else None


def _numbers(values: pd.Series) -> np.ndarray | None:
    """Distinct text ``values`` as numbers when every one reads as a number (plain, or in the one
    number format schema inference reads, ``$1,234.5``); else None. The sample decides first."""
    head = values.iloc[:SAMPLE]
    if not (as_numbers(head).notna().all() or number_format(head)):
        return None
    numbers = as_numbers(values)
    if numbers.notna().all():
        return numbers.to_numpy(np.float64)
    fmt = number_format(values)
    return None if fmt is None else parse_numbers(values, fmt).to_numpy(np.float64)


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def _card(value: str) -> bool:
    digits = value.replace(" ", "").replace("-", "")
    return bool(_CARD.fullmatch(value)) and 13 <= len(digits) <= 19 and _luhn(digits)


def _iban(value: str) -> bool:
    text = "".join(value.split()).upper()
    if not _IBAN.fullmatch(text):
        return False
    return int("".join(str(int(ch, 36)) for ch in text[4:] + text[:4])) % 97 == 1


def _phone(value: str) -> bool:
    if not _PHONE.fullmatch(value):
        return False
    groups = re.findall(r"\d+", value)
    digits = sum(len(g) for g in groups)
    return 8 <= digits <= 15 and (value.startswith("+") or len(groups) >= 3)


def _ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


#: Content kinds, the more specific first (the first wins a tie): what they are, how to tell.
_KINDS: dict[str, Callable[[str], bool]] = {
    "e-mail addresses": lambda v: bool(_EMAIL.search(v)),  # also "Jane <jane@example.com>"
    "UUIDs": lambda v: bool(_UUID.fullmatch(v)),
    "IBANs": _iban,
    "payment card numbers": _card,
    "IP addresses": _ip,
    "phone numbers": _phone,
    "hash-like tokens": lambda v: bool(_HEX_TOKEN.fullmatch(v) or _TOKEN.fullmatch(v)),
}


def _content(cells: _Cells) -> str | None:
    """Rule 1: the sampled values are of one kind (integers: card numbers only), or of several
    (a contact column), in at least ``CONTENT_SHARE`` of them."""
    if cells.integer:
        cards = [v.isdigit() and _card(v) for v in cells.sample]
        return "holds payment card numbers" if np.mean(cards) >= CONTENT_SHARE else None
    hits = {kind: np.array([test(v) for v in cells.sample]) for kind, test in _KINDS.items()}
    share = {kind: float(hit.mean()) for kind, hit in hits.items()}
    best = max(share, key=lambda kind: share[kind])
    if share[best] >= CONTENT_SHARE:
        return None if best in CODE_KINDS else f"holds {best}"
    order = sorted(hits, key=lambda kind: -share[kind])  # each value: its likeliest kind
    kinds = Counter(next((k for k in order if hits[k][i]), "") for i in range(len(cells.sample)))
    names = [kind for kind, _ in kinds.most_common() if kind]
    if sum(kinds[kind] for kind in names) < CONTENT_SHARE * len(cells.sample):
        return None
    return f"holds {', '.join(names[:-1])} and {names[-1]}"


def _mostly_rare(
    cells: _Cells, owner_codes: Callable[[], tuple[np.ndarray, int]], k: int
) -> str | None:
    """Rule 2: at least ``RARE_SHARE`` of a text column's rows hold a value fewer than ``k``
    entities share (values of fewer than k rows need no owners to tell)."""
    rows = int(cells.counts.sum())
    if cells.integer or rows < MIN_RARE_ROWS:
        return None
    rare = int(cells.counts[cells.counts < k].sum())
    if rare < RARE_SHARE * rows:
        owners, count = owner_codes()
        here = cells.codes >= 0
        pairs = pd.unique(cells.codes[here].astype(np.int64) * count + owners[here])
        sharing = np.bincount(pairs // count, minlength=len(cells.counts))
        rare = int(cells.counts[sharing < k].sum())
    if rare < RARE_SHARE * rows:
        return None
    return (
        f"holds a value fewer than {k} entities share in {rare} of its {rows} rows "
        "(names, per-person codes, free text)"
    )


def _codes(cells: _Cells, tokens: set[str], k: int) -> str | None:
    """Rules 3 and 4: code-like values (text: a digit and no space in nine of ten; integers),
    many of few rows each (integers: under an ID-like name), or under a person's ID name
    (``customer_id``) whatever their rows."""
    values = len(cells.counts)
    if values < MIN_NAMED_CODES:
        return None
    codes = [_code(v) for v in cells.sample]
    if not (cells.integer or np.mean(codes) >= CONTENT_SHARE):  # a placeholder or two allowed
        return None
    median = float(np.median(cells.counts))
    # An integer's name says it is an ID: an ID word, or nothing but a person's (``account``).
    id_name = bool(tokens & ID_LIKE_TOKENS) or bool(tokens) and tokens <= PERSON_TOKENS
    if values >= MIN_CODES and median <= 2 * k and (id_name or not cells.integer):
        each = round(median)
        return (
            f"holds {values} code-like values of about {each} row{'s' * (each != 1)} each (an ID)"
        )
    if tokens & PERSON_TOKENS and tokens & ID_TOKENS:
        return f"holds {values} code-like values and is named like a person's ID"
    return None


def _code(value: str) -> bool:
    """Code-like: a digit, and no space or at most two letters (``C00017``, ``4111 **** 1111``;
    not ``12 Main St``)."""
    if not _CODE.fullmatch(value.replace(" ", "_")):
        return False
    return " " not in value or sum(ch.isalpha() for ch in value) <= 2


def _details(cells: _Cells, tokens: set[str]) -> str | None:
    """Rule 4b: text named as a person's details (``first_name``, ``customer_name``,
    ``billing_address``), of ``MIN_NAMED_CODES`` values or more."""
    if cells.integer or len(cells.counts) < MIN_NAMED_CODES or not tokens & DETAIL_TOKENS:
        return None
    if not tokens <= DETAIL_TOKENS | PERSON_TOKENS | QUALIFIER_TOKENS:
        return None  # merchant_name, product_name: another thing's name
    return f"holds {len(cells.counts)} values and is named like a person's details"


def _linked(cells: _Cells, found: list[tuple[str, _Cells]]) -> str | None:
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


def _tokens(name: str) -> set[str]:
    """A column name's words, lower-cased: split on non-alphanumerics and camelCase."""
    return {t.lower() for t in _NAME_TOKENS.findall(name)}


def identifier_cells(values: pd.Series) -> np.ndarray:
    """Per cell, whether its content is (or holds) an identifier of a kind this module knows
    (e-mail, UUID, IBAN, card number, IP, phone, hash-like token), read by the cell alone: a
    private run votes on it per entity (:mod:`wgangp.data.schema.private_reading`)."""
    out = np.zeros(len(values), bool)
    if pd.api.types.is_bool_dtype(values) or pd.api.types.is_datetime64_any_dtype(values):
        return out
    text = values.astype(object).map(_cell_text).to_numpy(object)
    unique, inverse = np.unique(text.astype(str), return_inverse=True)
    hits = np.array([bool(t) and any(test(t) for test in _KINDS.values()) for t in unique], bool)
    return hits[inverse] & (text != "")


def _cell_text(value: object) -> str:
    """A cell as text for the content tests: whole numbers as their digits, gaps empty."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    return str(value).strip()
