"""What a column's name says about whose values it holds: the words of an ID, a person, a
device, a postcode, a person's details, another thing, a card's last digits.

A name alone never makes a column an identifier except where the name is unambiguous
(``card_last4``); it decides between readings of the content that content alone cannot tell
apart (``customer_id`` codes of 40 rows each are an ID, ``merchant_id`` codes of 40 rows a
feature). Names are split into lower-cased words on non-alphanumerics and camelCase, and each
column's name is read once (:func:`name_says`) for every rule that asks it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NAME_TOKENS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")

#: Name tokens of an ID, and of a person (rule 4 wants one of each: ``customer_id``).
ID_TOKENS = frozenset(
    {"id", "uid", "uuid", "guid", "no", "num", "number", "nr", "ref", "key", "code"}
)
PERSON_TOKENS = frozenset(
    {"customer", "cust", "client", "account", "acct", "user", "member", "holder", "card", "pan"}
    | {"patient", "subscriber", "person", "cardholder", "beneficiary", "payee", "payer"}
    | {"recipient", "sender", "owner", "policyholder", "borrower", "debtor", "employee"}
)
#: Name tokens of a person's device: its codes (a UUID, a hash) are an ID whatever their rows.
DEVICE_TOKENS = frozenset(
    {"device", "imei", "mac", "hw", "hwaddr", "fingerprint", "cookie", "install", "handset"}
)
#: Name tokens of a postcode: a place few customers share, judged like text even as integers.
POSTCODE_TOKENS = frozenset({"zip", "zipcode", "postcode", "postal", "plz", "postleitzahl"})
#: Name tokens that make an integer column's many values of few rows each an ID (a person
#: token alone does not: ``card_amount`` and ``user_age`` are measurements).
ID_LIKE_TOKENS = (
    ID_TOKENS
    | DEVICE_TOKENS
    | frozenset({"phone", "mobile", "tel", "msisdn", "iban", "ssn", "email"})
)
#: Name tokens of a person's own details: a text column named only with these and person tokens
#: (``first_name``, ``customer_name``, ``billing_address``; not ``merchant_name``) identifies.
DETAIL_TOKENS = frozenset(
    {"name", "names", "firstname", "lastname", "surname", "fullname", "address", "addr"}
    | {"street", "email", "mail", "phone", "mobile", "passport", "ssn", "dob", "birth"}
    | {"username", "login", "handle", "nickname", "plate", "numberplate", "kennzeichen"}
    | {"immatriculation", "matricula", "vin", "nid", "nino", "insee", "dni", "nie"}
)
#: Words that qualify a person's detail without naming something else (``first``, ``billing``).
QUALIFIER_TOKENS = frozenset(
    {"first", "last", "middle", "given", "family", "full", "home", "billing", "shipping"}
    | {"line", "of", "date", "e", "contact", "primary", "license", "licence", "vehicle", "car"}
    | {"number", "no", "nr", "id", "national", "screen"}
)
#: Name tokens of another thing than a person: personal names under them are a feature (a shop
#: named after its owner, ``merchant_name``).
THING_TOKENS = frozenset(
    {"merchant", "shop", "store", "company", "brand", "vendor", "business", "firm", "city"}
    | {"town", "street", "place", "location", "bank", "branch", "employer", "school", "hotel"}
    | {"restaurant", "product", "item", "title", "category"}
)
#: A card's last digits (``card_last4``, ``pan_tail``): one token of each set.
CARD_TOKENS = frozenset({"card", "pan", "cc", "carte", "tarjeta", "karte"})
TAIL_TOKENS = frozenset({"last4", "last", "tail", "suffix", "ending", "lastfour", "l4"})


def name_tokens(name: str) -> set[str]:
    """A column name's words, lower-cased: split on non-alphanumerics and camelCase."""
    return {t.lower() for t in _NAME_TOKENS.findall(name)}


def integer_id_name(tokens: set[str]) -> bool:
    """An integer's name says it is an ID: an ID word, or nothing but a person's (``account``)."""
    return bool(tokens & ID_LIKE_TOKENS) or bool(tokens) and tokens <= PERSON_TOKENS


def detail_name(tokens: set[str]) -> bool:
    """Named only as a person's details (``first_name``, ``billing_address``), with one detail
    word at least; ``merchant_name`` names another thing's."""
    allowed = DETAIL_TOKENS | PERSON_TOKENS | QUALIFIER_TOKENS
    return bool(tokens & DETAIL_TOKENS) and tokens <= allowed


def card_part_name(tokens: set[str]) -> bool:
    """Named as a card number's last digits (``card_last4``, ``pan_tail``)."""
    return bool(tokens & CARD_TOKENS and tokens & TAIL_TOKENS)


@dataclass(frozen=True)
class NameSays:
    """What one column's name says, read once for every rule (:func:`name_says`)."""

    #: A person's ID (``customer_id``): a person's word and an ID word.
    person_id: bool
    #: A person's device (``device``, ``imei``); with an ID word (``device_id``).
    device: bool
    device_id: bool
    #: An integer column's many values of few rows each are an ID (:func:`integer_id_name`).
    integer_id: bool
    #: A person's own details (:func:`detail_name`).
    detail: bool
    #: Another thing than a person (``merchant_name``, ``city``).
    thing: bool
    #: A card number's last digits (:func:`card_part_name`).
    card_part: bool
    #: A postcode (``zip``, ``plz``).
    postcode: bool


def name_says(name: str) -> NameSays:
    """Everything the rules ask of a column's name, from its words."""
    tokens = name_tokens(name)
    named_id = bool(tokens & ID_TOKENS)
    device = bool(tokens & DEVICE_TOKENS)
    return NameSays(
        person_id=bool(tokens & PERSON_TOKENS) and named_id,
        device=device,
        device_id=device and named_id,
        integer_id=integer_id_name(tokens),
        detail=detail_name(tokens),
        thing=bool(tokens & THING_TOKENS),
        card_part=card_part_name(tokens),
        postcode=bool(tokens & POSTCODE_TOKENS),
    )
