"""Identifiers inside text: "refund request, contact jane@example.com", "please call 07700
900123", "transfer to Anna Schmidt".

A value that contains an identifier is one: as a categorical level it would ship in the schema
and the model and come back verbatim in samples, however many customers wrote it. So a text is
searched for every kind :mod:`wgangp.data.schema.identifier_patterns` knows, and for the values
of the table's own identifier columns as whole words (a beneficiary's name the given-name list
lacks, a username). A lone word of those columns (a surname, a city) is not searched for: it is
too often an ordinary word.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Protocol

import numpy as np
import pandas as pd

from wgangp.data.schema.identifier_patterns import WHOLE_KINDS, card, kind_inside, personal_name

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
