"""``identifier_cells``: whether each cell is, or contains, an identifier, in the formats of
several countries and inside free text in English, French, German and Spanish; and the phrases,
amounts, dates and shop names that must stay features."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from wgangp.data.schema.identifier_patterns import KnownValues, identifier_kind
from wgangp.data.schema.identifiers import identifier_cells

#: Whole values, by kind, as tables write them.
WHOLE = {
    "e-mail addresses": [
        "jane.doe@example.com", "Jane Doe <jane@example.co.uk>", "jane.doe at example dot com",
        "jane[at]example.org", "jane (at) example (dot) net", "JANE{at}EXAMPLE{dot}DE",
    ],
    "phone numbers": [
        "07700 900123", "+44 7700 900123", "06 12 34 56 78", "+33 6 12 34 56 78",
        "0151 23456789", "+49 151 23456789", "(555) 123-4567", "+1 555 123 4567",
        "612 34 56 78", "+34 612 34 56 78", "030 1234567",
    ],
    "MAC addresses": ["00:1A:2B:3C:4D:5E", "00-1a-2b-3c-4d-5e", "001a.2b3c.4d5e"],
    "IP addresses": ["203.0.113.7", "203.0.113.7:8443", "[2001:db8::1]:443", "2001:db8::1"],
    "national ID numbers": [
        "123-45-6789",  # US SSN
        "AB 12 34 56 C", "AB123456C",  # UK NI
        "185057512345673", "1 85 05 75 123 456 73",  # FR INSEE (key checked)
        "12345678Z", "X1234567L",  # ES DNI, NIE (letter checked)
        "65929970489",  # DE Steuer-ID (check digit)
    ],
    "vehicle registration plates": ["AB12 CDE", "AB-123-CD", "M-AB 1234", "1234 BCD", "7ABC123"],
    "UUIDs": ["123e4567-e89b-12d3-a456-426614174000", "{123E4567-E89B-12D3-A456-426614174000}"],
    "hash-like tokens": ["4256b6849400dc61", "e40b120d3031260a9f"],
    "personal names": ["Anna Schmidt", "JEAN DUPONT", "María de la Cruz", "Schmidt, Anna"],
}  # fmt: skip
#: Free text holding one identifier, in four languages.
INSIDE = [
    "refund request, contact jane.doe@example.com",
    "please call 07700 900123 about the charge",
    "call (555) 123-4567 after 6pm",
    "demande de remboursement, contactez jean.dupont at exemple dot fr",
    "merci de rappeler au 06 12 34 56 78",
    "virement à Jean Dupont",
    "Rückerstattung, Kontakt anna.mueller[at]beispiel.de",
    "bitte rufen Sie 0151 23456789 an",
    "Überweisung an Anna Müller",
    "solicitud de reembolso, contacto maria@ejemplo.es",
    "por favor llame al +34 612 34 56 78",
    "transferencia a María García",
    "TRANSFER TO JEAN DUPONT",
    "login from 203.0.113.7:8443",
    "new device 00:1A:2B:3C:4D:5E",
    "car AB12 CDE towed",
    "SSN 123-45-6789 on file",
    "IBAN DE89 3704 0044 0532 0130 00",
    "card 4111 1111 1111 1111 declined",
    "follow @jsmith87",
    "token 4256b6849400dc61 expired",
]
#: Text that holds none: phrases, shop names, amounts, dates, times, versions, short refs.
NONE = [
    "online purchase", "achat en ligne", "Lebensmitteleinkauf", "compra en línea", "Bill Payment",
    "grocery at Blue Grocer", "Corner Cafe", "paid 1,234.56 EUR on 2024-06-01 12:30",
    "order 12345 shipped", "version 1.2.3", "meeting at 10:30", "call back on 12/03/2024",
    "amount 12 345 678,90", "costs 100 EUR at noon. Then home", "ZIP 94105-1234", "yes", "other",
    "refund request", "Mark as paid", "May Sale", "Rose Garden Florist", "ref 2024-06-01",
]  # fmt: skip


@pytest.mark.parametrize(("kind", "value"), [(k, v) for k, values in WHOLE.items() for v in values])
def test_each_kind_is_found_as_a_whole_value(kind: str, value: str) -> None:
    assert identifier_kind(value) is not None, (kind, value)
    assert identifier_cells(pd.Series([value])).tolist() == [True]


@pytest.mark.parametrize("text", INSIDE)
def test_an_identifier_inside_text_is_found(text: str) -> None:
    assert identifier_kind(text) is not None


@pytest.mark.parametrize("text", NONE)
def test_phrases_amounts_dates_and_shops_are_not(text: str) -> None:
    assert identifier_kind(text) is None


@pytest.mark.parametrize(
    "value",
    ["185057512345628", "12345678A", "65929970488", "4111 1111 1111 1112"],
)
def test_a_failed_check_digit_is_no_identifier(value: str) -> None:
    """INSEE's key, the DNI's letter, the Steuer-ID's digit and Luhn are checked."""
    assert identifier_kind(value) is None


def test_values_of_identifier_columns_are_found_inside_text_as_whole_words() -> None:
    """A beneficiary the given-name list lacks (Wojtek Brzęczyszczykiewicz), a username: found
    as whole words, accents and case aside; a lone surname is too common a word to search."""
    known = KnownValues(["Wojtek Brzęczyszczykiewicz", "jsmith87", "Smith", "a@b.example"])
    assert identifier_kind("transfer to wojtek brzeczyszczykiewicz", known) is not None
    assert identifier_kind("login jsmith87 failed", known) is not None
    assert identifier_kind("login jsmith870 failed", known) is None
    assert identifier_kind("Smith & Co hardware", known) is None
    assert identifier_kind("transfer to Wojtek", known) is None


def test_cells_of_every_dtype() -> None:
    """One answer per cell: gaps, booleans and dates never; numbers only as card numbers; a
    categorical as its values."""
    text = pd.Series(["online purchase", None, "contact a@b.com", "", "online purchase"])
    assert identifier_cells(text).tolist() == [False, False, True, False, False]
    assert identifier_cells(text.astype("category")).tolist() == [False, False, True, False, False]
    assert identifier_cells(text.astype("str")).tolist() == [False, False, True, False, False]
    cards = pd.Series([4111111111111111, 4111111111111112, 12, np.nan])
    assert identifier_cells(cards).tolist() == [True, False, False, False]
    assert not identifier_cells(pd.Series([True, False])).any()
    assert not identifier_cells(pd.Series(pd.to_datetime(["1987-05-13", "2001-02-03"]))).any()
    assert identifier_cells(pd.Series([], dtype=object)).shape == (0,)
