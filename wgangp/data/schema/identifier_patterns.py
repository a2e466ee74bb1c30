"""What an identifier looks like, kind by kind: a test for a value that IS one (a column's cell)
and a finder for one INSIDE free text ("refund request, contact jane@example.com", "please call
07700 900123", "transfer to Anna Schmidt").

A value that contains an identifier is one: as a categorical level it would ship in the schema
and the model and come back verbatim in samples, however many customers wrote it. So a text is
searched for every kind known here, and for the values of the table's own identifier columns as
whole words (:class:`KnownValues`: a beneficiary's name the given-name list lacks, a username). A
lone word of those columns (a surname, a city) is not searched for: it is too often an ordinary
word.

The finders inside text are stricter than the tests of whole values: a column is judged on
nine in ten of its values, a memo on one phrase, so a pattern that common words or amounts can
meet (a US plate, a bare 9-digit number) only counts as a whole value. Each kind that has a check
digit is checked (Luhn, mod-97, the Spanish DNI's letter, INSEE's key, the German tax number's
ISO 7064 digit). Pure functions; :mod:`wgangp.data.schema.identifiers` judges columns with them,
and inference withholds the levels :func:`identifier_cells` finds.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

import numpy as np
import pandas as pd

from wgangp.data.schema.given_names import GIVEN_NAMES

_EMAIL = re.compile(r"[^@\s]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
#: ``jane at example dot com``, ``jane[at]example.com``, ``jane (at) example (dot) org``: an
#: ``at`` spelled out, then a domain whose last part is a known top-level domain.
_AT = r"(?:\s*[\[({<]\s*at\s*[\])}>]\s*|\s+at\s+)"
_DOT = r"(?:\s*[\[({<]\s*dot\s*[\])}>]\s*|\s+dot\s+|\.)"
_TLD = r"(?:com|org|net|edu|gov|info|biz|io|co|me|eu|uk|de|fr|es|it|nl|be|ch|at|pl|pt|us|ca|au)"
_OBFUSCATED = re.compile(
    rf"(?<![\w.])[A-Za-z0-9._%+-]+{_AT}[A-Za-z0-9-]+(?:{_DOT}[A-Za-z0-9-]+)*{_DOT}{_TLD}\b",
    re.IGNORECASE,
)
_CARD = re.compile(r"[\d -]+")
_CARD_IN = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")
_IBAN = re.compile(r"[A-Z]{2}\d{2}[A-Z0-9]{11,30}")
_IBAN_IN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b")
_PHONE = re.compile(r"\+?[\d\s().-]+")
_PHONE_IN = re.compile(r"(?<![\w+.,/-])(?:\+|\(\+?)?\d[\d ().-]{6,20}\d(?![\w.,/-]*\d)")
_DATE_LIKE = re.compile(r"\d{4}-\d{2}-\d{2}|\d{1,2}[./-]\d{1,2}[./-]\d{2,4}|\d{1,2}:\d{2}")
_HEX = "[0-9a-f]"
_UUID = re.compile(rf"(\{{)?{_HEX}{{8}}(?:-{_HEX}{{4}}){{3}}-{_HEX}{{12}}(?(1)\}})", re.IGNORECASE)
_UUID_IN = re.compile(rf"\b{_HEX}{{8}}(?:-{_HEX}{{4}}){{3}}-{_HEX}{{12}}\b", re.IGNORECASE)
_HEX_TOKEN = re.compile(r"[0-9a-fA-F]{16,}")
_HEX_IN = re.compile(r"\b(?=[0-9a-fA-F]*[a-fA-F])(?=[0-9a-fA-F]*\d)[0-9a-fA-F]{16,}\b")
_TOKEN = re.compile(r"(?=.*[A-Za-z])(?=.*\d)[A-Za-z0-9_+/=-]{20,}")
_TOKEN_IN = re.compile(r"(?<![\w+/=-])(?=[\w+/=-]*[A-Za-z])(?=[\w+/=-]*\d)[\w+/=-]{20,}")
_MAC = re.compile(
    r"\b[0-9A-Fa-f]{2}([:-])[0-9A-Fa-f]{2}(?:\1[0-9A-Fa-f]{2}){4}\b"
    r"|\b[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\b"
)
_IPV4_IN = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?(?![\w.])")
_IPV6_IN = re.compile(
    r"\[[0-9A-Fa-f:.]+\](?::\d{1,5})?|(?<![\w:])[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?![\w:])"
)
_SSN = re.compile(r"(?<![\d-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d-])")
_NI = re.compile(
    r"\b(?!BG|GB|NK|KN|TN|NT|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b"
)
_INSEE = re.compile(
    r"(?<![\d ])[12] ?\d{2} ?(?:0[1-9]|1[0-2]|[2-9]\d) ?(?:\d{2}|2[AB]) ?\d{3} ?\d{3} ?\d{2}(?!\d)"
)
_DNI = re.compile(r"\b(?:\d{8}|[XYZ]-?\d{7})-?[A-Z]\b")
_TAX_DE = re.compile(r"(?<![\d.,])[1-9]\d{10}(?![\d.,])")
#: Plates whose shape common words and codes seldom take: British, French (SIV), German.
_PLATE_IN = re.compile(
    r"\b[A-Z]{2}\d{2} ?[A-Z]{3}\b|\b[A-Z]{2}-\d{3}-[A-Z]{2}\b"
    r"|(?<![\w-])[A-ZÄÖÜ]{1,3}-[A-Z]{1,2} \d{1,4}[EH]?\b"
)
#: As whole values, Spanish (1234 BCD) and Californian (7ABC123) plates too.
_PLATE = re.compile(rf"(?:{_PLATE_IN.pattern}|\d{{4}} ?[B-DF-HJ-NP-TV-Z]{{3}}|\d[A-Z]{{3}}\d{{3}})")
#: A code: no space once spaces are read as underscores, and a digit (``C00017``).
_CODE = re.compile(r"\S*\d\S*")
_HANDLE_IN = re.compile(r"(?<![\w@.])@[A-Za-z0-9_]{3,30}\b(?!\.\w)")
_PARTICLES = r"(?:(?:van|von|de|del|della|di|da|du|la|le|der|den|ter|y|al|el|bin)\s+)*"
_WORD = r"[A-ZÀ-Ý][a-zà-ÿß'’-]+|[A-ZÀ-Ý]{2}[A-ZÀ-Ý'’-]*"
#: A capitalised word, then a surname (lookahead: "Payment Anna Schmidt" is tried at Anna too).
_NAME_IN = re.compile(
    rf"(?<!\w)([A-ZÀ-Ý][a-zà-ÿ]+|[A-ZÀ-Ý]{{2,}})(?=\s+(?:[A-Z]\.\s*)?{_PARTICLES}(?:{_WORD})(?!\w))"
)
_NAME = re.compile(rf"({_WORD})(?:\s+(?:{_WORD}|[A-Z]\.)){{0,2}}\s+{_PARTICLES}(?:{_WORD})")
_NAME_REVERSED = re.compile(rf"(?:{_WORD})(?:[ -](?:{_WORD}))?,\s*({_WORD})(?:\s+(?:{_WORD}))?")


def luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def card(value: str) -> bool:
    digits = value.replace(" ", "").replace("-", "")
    return bool(_CARD.fullmatch(value)) and 13 <= len(digits) <= 19 and luhn(digits)


def iban(value: str) -> bool:
    text = "".join(value.split()).upper()
    if not _IBAN.fullmatch(text):
        return False
    return int("".join(str(int(ch, 36)) for ch in text[4:] + text[:4])) % 97 == 1


def phone(value: str) -> bool:
    """8 to 15 digits in a phone's layout: an international ``+``, an area code in brackets,
    three groups or more, or a national number (a trunk 0 and 10 to 12 digits: ``07700 900123``)."""
    if not _PHONE.fullmatch(value) or _DATE_LIKE.fullmatch(value.strip()):
        return False
    groups = re.findall(r"\d+", value)
    digits = sum(len(g) for g in groups)
    if not 8 <= digits <= 15:
        return False
    text = value.strip()
    national = text.startswith("0") and 10 <= digits <= 12
    return text.startswith(("+", "(")) or len(groups) >= 3 or national


def ip(value: str) -> bool:
    """An IPv4 or IPv6 address, with a port (``10.0.0.1:443``, ``[2001:db8::1]:8080``)."""
    text = value.strip()
    if text.startswith("["):
        text = text[1:].split("]", 1)[0]
    elif text.count(":") == 1 and "." in text:
        text, port = text.split(":")
        if not port.isdigit():
            return False
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def national_id(value: str) -> bool:
    """A US SSN, a UK National Insurance number, a French INSEE number (its key checked), a
    Spanish DNI or NIE (its letter checked), a German tax number (its check digit)."""
    return any(_national_id(m) for m in _national_matches(value, whole=True))


def _national_matches(text: str, whole: bool) -> list[str]:
    patterns = (_SSN, _NI, _INSEE, _DNI, _TAX_DE)
    if whole:
        text = text.strip()
        return [text] if any(p.fullmatch(text) for p in patterns) else []
    return [m.group(0) for p in patterns for m in p.finditer(text)]


def _national_id(text: str) -> bool:
    compact = re.sub(r"[ -]", "", text)
    if _SSN.fullmatch(text) or _NI.fullmatch(text):
        return True
    if re.fullmatch(r"[12]\d{4}(?:\d{2}|2[AB])\d{8}", compact):
        body = compact[:13].replace("2A", "19").replace("2B", "18")
        return 97 - int(body) % 97 == int(compact[13:])
    if re.fullmatch(r"(?:\d{8}|[XYZ]\d{7})[A-Z]", compact):
        digits = str("XYZ".find(compact[0])) + compact[1:8] if compact[0] in "XYZ" else compact[:8]
        number = int(digits)
        return "TRWAGMYFPDXBNJZSQVHLCKE"[number % 23] == compact[-1]
    if re.fullmatch(r"[1-9]\d{10}", compact):
        product = 10
        for digit in compact[:10]:
            total = (int(digit) + product) % 10 or 10
            product = total * 2 % 11
        return (11 - product) % 10 == int(compact[10])
    return False


def code(value: str) -> bool:
    """Code-like: a digit, and no space or at most two letters (``C00017``, ``4111 **** 1111``;
    not ``12 Main St``)."""
    if not _CODE.fullmatch(value.replace(" ", "_")):
        return False
    return " " not in value or sum(ch.isalpha() for ch in value) <= 2


def personal_name(value: str) -> bool:
    """``Anna Schmidt``, ``JEAN DUPONT``, ``María de la Cruz``, ``Schmidt, Anna``: two to four
    capitalised words whose given name is a common one (:mod:`~wgangp.data.schema.given_names`)."""
    text = value.strip()
    match = _NAME.fullmatch(text) or _NAME_REVERSED.fullmatch(text)
    return match is not None and match.group(1).lower() in GIVEN_NAMES


#: Kinds of whole values, the more specific first (the first wins a tie): what they are, how to
#: tell. Personal names are judged apart: their column's name matters.
WHOLE_KINDS: dict[str, Callable[[str], bool]] = {
    "e-mail addresses": lambda v: bool(_EMAIL.search(v) or _OBFUSCATED.fullmatch(v.strip())),
    "UUIDs": lambda v: bool(_UUID.fullmatch(v)),
    "IBANs": iban,
    "payment card numbers": card,
    "MAC addresses": lambda v: bool(_MAC.fullmatch(v.strip())),
    "IP addresses": ip,
    "national ID numbers": national_id,
    "phone numbers": phone,
    "vehicle registration plates": lambda v: bool(_PLATE.fullmatch(v.strip())),
    "hash-like tokens": lambda v: bool(_HEX_TOKEN.fullmatch(v) or _TOKEN.fullmatch(v)),
}


def _found(pattern: re.Pattern, test: Callable[[str], bool]) -> Callable[[str], bool]:
    return lambda text: any(test(m.group(0)) for m in pattern.finditer(text))


def _phone_inside(text: str) -> bool:
    for match in _PHONE_IN.finditer(text):
        found = match.group(0)
        if not _DATE_LIKE.search(found) and not _IPV4_IN.fullmatch(found) and phone(found):
            return True
    return False


def _name_inside(text: str) -> bool:
    return any(m.group(1).lower() in GIVEN_NAMES for m in _NAME_IN.finditer(text))


#: Kinds found inside free text: (kind, finder), the cheaper and more specific first.
INSIDE_KINDS: tuple[tuple[str, Callable[[str], bool]], ...] = (
    ("e-mail addresses", lambda t: bool(_EMAIL.search(t) or _OBFUSCATED.search(t))),
    ("UUIDs", lambda t: bool(_UUID_IN.search(t))),
    ("MAC addresses", lambda t: bool(_MAC.search(t))),
    ("IP addresses", lambda t: _found(_IPV4_IN, ip)(t) or _found(_IPV6_IN, ip)(t)),
    ("IBANs", _found(_IBAN_IN, iban)),
    ("payment card numbers", _found(_CARD_IN, card)),
    ("national ID numbers", lambda t: any(_national_id(m) for m in _national_matches(t, False))),
    ("phone numbers", _phone_inside),
    ("vehicle registration plates", lambda t: bool(_PLATE_IN.search(t))),
    ("social media handles", lambda t: bool(_HANDLE_IN.search(t))),
    ("hash-like tokens", lambda t: bool(_HEX_IN.search(t) or _TOKEN_IN.search(t))),
    ("personal names", _name_inside),
)


def kind_inside(text: str) -> str | None:
    """The first kind of identifier found inside ``text``, or None."""
    return next((kind for kind, finds in INSIDE_KINDS if finds(text)), None)


#: Words as text holds them: letters and digits, joined by inner dots, apostrophes, @, + or -
#: (``jane.doe@example.com``, ``O'Neil``, ``Müller-Lüdenscheidt`` are one word each).
_WORDS = re.compile(r"[^\W_]+(?:[.'’@+-][^\W_]+)*")
#: The longest value of an identifier column searched for inside text, in words.
MAX_WORDS = 6


def words(text: str) -> list[str]:
    """``text``'s words, case-folded and without accents (``Müller`` and ``MULLER`` are one)."""
    folded = unicodedata.normalize("NFKD", text.casefold()).encode("ascii", "ignore").decode()
    return _WORDS.findall(folded)


class KnownValues:
    """The values of a table's identifier columns, found inside text as whole words: those of
    two to :data:`MAX_WORDS` words, and single words with a digit or an @ (``jsmith87``)."""

    def __init__(self, values: Iterable[object] = ()) -> None:
        phrases: set[str] = set()
        for value in values:
            found = words(str(value))
            if len(found) > MAX_WORDS or not found:
                continue
            if len(found) == 1 and not re.search(r"[\d@]", found[0]):
                continue
            phrases.add(" ".join(found))
        self.phrases = frozenset(phrases)
        self.longest = max((p.count(" ") + 1 for p in phrases), default=0)

    def __bool__(self) -> bool:
        return bool(self.phrases)

    def inside(self, text: str) -> bool:
        """Whether one of the values is a run of ``text``'s words."""
        if not self.phrases:
            return False
        found = words(text)
        for size in range(1, min(self.longest, len(found)) + 1):
            for start in range(len(found) - size + 1):
                if " ".join(found[start : start + size]) in self.phrases:
                    return True
        return False


def identifier_kind(text: str, known: KnownValues | None = None) -> str | None:
    """The kind of identifier ``text`` is or contains (``e-mail addresses``, ``personal names``,
    ``values of identifier columns``), or None."""
    whole = next((kind for kind, test in WHOLE_KINDS.items() if test(text)), None)
    if whole is not None:
        return whole
    if personal_name(text):
        return "personal names"
    inside = kind_inside(text)
    if inside is not None:
        return inside
    if known is not None and known.inside(text):
        return "values of identifier columns"
    return None


class _Named(Protocol):
    column: str


def identifier_cells(values: pd.Series, known: KnownValues | None = None) -> np.ndarray:
    """Whether each cell is, or contains, an identifier of a kind this module knows (an e-mail,
    a phone, a card or national ID number, a personal name, ... :mod:`.identifier_patterns`),
    or one of ``known``'s values (the table's identifier columns') as whole words. One test per
    distinct value; numbers are card numbers or nothing, booleans and dates never."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        values = values.astype(object)
    out = np.zeros(len(values), dtype=bool)
    if pd.api.types.is_bool_dtype(values) or pd.api.types.is_datetime64_any_dtype(values):
        return out
    if pd.api.types.is_numeric_dtype(values):
        array = values.to_numpy(np.float64, na_value=np.nan)
        whole = np.isfinite(array) & (array % 1 == 0) & (np.abs(array) >= 1e12)
        out[whole] = [card(str(int(v))) for v in array[whole]]
        return out
    text = values.astype("str").str.strip()
    codes, uniques = pd.factorize(text.where(values.notna() & (text != "")))
    flags = np.array([identifier_kind(str(u), known) is not None for u in uniques], dtype=bool)
    here = codes >= 0
    out[here] = flags[codes[here]]
    return out


def known_values(frame: pd.DataFrame, found: Sequence[_Named]) -> KnownValues:
    """The text values of ``frame``'s identifier columns, to be found inside other text."""
    text = [
        frame[f.column]
        for f in found
        if not pd.api.types.is_numeric_dtype(frame[f.column])
        and not pd.api.types.is_bool_dtype(frame[f.column])
    ]
    return KnownValues(v for column in text for v in pd.unique(column.dropna()))
