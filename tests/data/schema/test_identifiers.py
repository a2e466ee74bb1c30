"""Columns that identify a person are found by content, by rarity, by codes and by links."""

from __future__ import annotations

import base64
import hashlib
import uuid

import numpy as np
import pandas as pd
import pytest

from wgangp.data.schema.identifiers import Identifier, find_identifiers, identify, proposed_entity

CUSTOMERS = 30
EACH = 7
FIRST = ["Ann", "Bob", "Cleo", "Dan", "Eve", "Finn"]
LAST = ["Smith", "Jones", "Brown", "Khan", "Novak"]


def _luhn_completed(body: str) -> str:
    """``body`` with the check digit that makes it pass the Luhn check."""
    for check in "0123456789":
        digits = [int(c) for c in reversed(body + check)]
        total = sum(
            d if i % 2 == 0 else (2 * d - 9 if d > 4 else 2 * d) for i, d in enumerate(digits)
        )
        if total % 10 == 0:
            return body + check
    raise AssertionError("no check digit")


def _cards(count: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    return [_luhn_completed("4" + "".join(map(str, rng.integers(0, 10, 14)))) for _ in range(count)]


def _iban(country: str, bban: str) -> str:
    moved = bban + country + "00"
    number = int("".join(str(int(c, 36)) for c in moved))
    return f"{country}{98 - number % 97:02d}{bban}"


def _by_row(values: list, times: int = 5, name: str = "value", **kwargs) -> list[Identifier]:
    """``values`` each in ``times`` rows, each row its own entity (no value is rare)."""
    frame = pd.DataFrame({name: [v for v in values for _ in range(times)]})
    return find_identifiers(frame, owners=np.arange(len(frame)), **kwargs)


def _reasons(found: list[Identifier]) -> dict[str, str]:
    return {f.column: f.reason for f in found}


def _customers(**columns: list) -> pd.DataFrame:
    """CUSTOMERS customers of EACH rows, an e-mail and a name each, a distinct amount per row."""
    frame = pd.DataFrame(
        {
            "email": [f"customer{c}@example.com" for c in range(CUSTOMERS) for _ in range(EACH)],
            "alias": [
                f"{FIRST[c % 6]} {LAST[c // 6]}" for c in range(CUSTOMERS) for _ in range(EACH)
            ],
            "amount": np.arange(CUSTOMERS * EACH) * 3,
        }
    )
    return frame.assign(**columns)


CONTENT = {
    "e-mail addresses": [f"First.Last{i}@Mail.Example.COM" for i in range(40)],
    "payment card numbers": [
        f"{c[:4]} {c[4:8]}-{c[8:12]} {c[12:]}" if i % 2 else c[:4] + " " + c[4:]
        for i, c in enumerate(_cards(40))
    ],
    "IBANs": [
        _iban("GB", f"WEST{12345698765400 + 17 * i}").lower()
        if i % 2
        else _iban("DE", f"{37040044 + i:08d}{532013000 + i:010d}")
        for i in range(40)
    ],
    "phone numbers": [
        [f"+44 20 7946 {i:04d}", f"({500 + i}) 123-4567", f"555.123.{i:04d}", f"555-{i:03d}-4567"][
            i % 4
        ]
        for i in range(40)
    ],
    "IP addresses": [f"10.{i}.0.{i * 3}" if i % 2 else f"2001:db8::{i:x}" for i in range(40)],
    "UUIDs": [
        f"{{{uuid.uuid5(uuid.NAMESPACE_DNS, str(i))}}}"
        if i % 2
        else str(uuid.uuid5(uuid.NAMESPACE_URL, str(i))).upper()
        for i in range(40)
    ],
    "hash-like tokens": [
        hashlib.sha256(str(i).encode()).hexdigest()[: 16 + i]
        if i % 2
        else base64.b64encode(hashlib.sha1(str(i).encode()).digest()).decode()
        for i in range(40)
    ],
}


PERSONAL = [kind for kind in CONTENT if kind not in ("UUIDs", "hash-like tokens")]


@pytest.mark.parametrize("kind", PERSONAL)
def test_each_content_kind_is_found(kind: str) -> None:
    assert _reasons(_by_row(CONTENT[kind])) == {"value": f"holds {kind}"}


@pytest.mark.parametrize("kind", ["UUIDs", "hash-like tokens"])
def test_uuids_and_hashes_are_codes_an_id_when_many_of_few_rows_each(kind: str) -> None:
    """A hashed merchant of hundreds of rows is a feature; hashed customers of a few rows each,
    or a hashed customer id however many rows each, an ID."""
    assert _by_row(CONTENT[kind], times=200) == []
    many = CONTENT[kind] + [f"{v}0" if kind == "hash-like tokens" else v for v in _more(kind)]
    assert _reasons(_by_row(many, times=5)) == {
        "value": "holds 60 code-like values of about 5 rows each (an ID)"
    }
    named = _reasons(_by_row(CONTENT[kind], times=200, name="customer_ref"))
    assert named == {"customer_ref": "holds 40 code-like values and is named like a person's ID"}


def _more(kind: str) -> list[str]:
    """20 more values of ``kind``, none among CONTENT's."""
    if kind == "UUIDs":
        return [str(uuid.uuid5(uuid.NAMESPACE_OID, str(i))) for i in range(20)]
    return [hashlib.sha256(f"more{i}".encode()).hexdigest()[:24] for i in range(20)]


def _not_luhn(count: int) -> list[str]:
    cards = _cards(count, seed=1)
    return [c[:-1] + str((int(c[-1]) + 1) % 10) for c in cards]


NEAR_MISSES = {
    "16 digits failing Luhn": [f"{c[:4]} {c[4:8]} {c[8:12]} {c[12:]}" for c in _not_luhn(40)],
    "16 digits failing Luhn, plain": _not_luhn(40),
    "ZIP+4": [f"{10000 + 37 * i}-{1000 + i}" for i in range(40)],
    "ISO dates": [f"2024-{1 + i % 12:02d}-{1 + i // 12:02d}" for i in range(40)],
    "versions": [f"{i % 3}.{i % 7}.{i}" for i in range(40)],
    "amounts as text": [f"{1000 + 7 * i:,}.50" for i in range(40)],
    "yes/no": ["yes", "no"] * 20,
    "IBANs failing mod-97": [v[:2] + "00" + v[4:] for v in CONTENT["IBANs"][::2]]
    + [v[:2] + "00 " + v[4:] for v in CONTENT["IBANs"][1::2]],
}


@pytest.mark.parametrize("case", NEAR_MISSES)
def test_near_misses_are_no_content(case: str) -> None:
    assert _by_row(NEAR_MISSES[case]) == []


def test_an_iban_failing_mod_97_without_spaces_is_only_a_code() -> None:
    """Not an IBAN: a hash-like code, which 40 values of 5 rows each do not make an ID."""
    values = [v[:2] + "00" + v[4:] for v in CONTENT["IBANs"]]
    assert _by_row(values) == []


@pytest.mark.parametrize("case", ["ISO dates", "amounts as text"])
def test_dates_and_numbers_as_text_are_never_rare_names(case: str) -> None:
    """Each value in one row only: as text they would be rare (rule 2)."""
    assert _by_row(NEAR_MISSES[case], times=1) == []
    assert _by_row([f"x{v}" for v in NEAR_MISSES[case]], times=1) != []


def test_a_contact_column_names_its_kinds_most_common_first() -> None:
    values = CONTENT["phone numbers"][:15] + CONTENT["e-mail addresses"][:25]
    assert _reasons(_by_row(values)) == {"value": "holds e-mail addresses and phone numbers"}


def test_integer_card_numbers_are_found_and_unix_times_are_not() -> None:
    cards = np.array([int(c) for c in _cards(300)], dtype=np.int64)
    times = 1_700_000_000 + np.arange(300) * 3_601
    frame = pd.DataFrame({"ref": cards, "Time": times, "timestamp": times + 7})
    assert _reasons(find_identifiers(frame)) == {"ref": "holds payment card numbers"}


def test_names_are_rare_when_owners_are_customers() -> None:
    owners = np.repeat(np.arange(CUSTOMERS), EACH)
    rows = CUSTOMERS * EACH
    assert _reasons(find_identifiers(_customers(), owners=owners)) == {
        "email": "holds e-mail addresses",
        "alias": f"holds a value fewer than 5 entities share in {rows} of its {rows} rows "
        "(names, per-person codes, free text)",
    }


def test_names_are_linked_to_the_email_when_each_row_is_its_own() -> None:
    assert _reasons(find_identifiers(_customers())) == {
        "email": "holds e-mail addresses",
        "alias": "names the same rows as column email (one value each)",
    }


def test_skip_is_respected() -> None:
    assert find_identifiers(_customers(), skip=["email"]) == []
    assert [f.column for f in find_identifiers(_customers(), skip=["alias"])] == ["email"]


def test_a_city_of_many_customers_is_not_linked() -> None:
    """20 cities of 6 customers each: not one-to-one with the e-mail, and no customer's own; 40
    cities of 3 customers each are: counted in the customers the e-mail names, each is held by
    fewer than 5 (before, counted in rows, 21 rows each passed)."""
    customers = CUSTOMERS * 4

    def frame(cities: int) -> pd.DataFrame:
        names = [f"City {chr(65 + c % 20)}{c % cities // 20}" for c in range(customers)]
        return pd.DataFrame(
            {
                "email": [f"c{c}@example.com" for c in range(customers) for _ in range(EACH)],
                "city": [city for city in names for _ in range(EACH)],
                "amount": np.arange(customers * EACH),
            }
        )

    assert frame(20)["city"].nunique() == 20
    assert [f.column for f in find_identifiers(frame(20))] == ["email"]
    assert frame(40)["city"].nunique() == 40
    assert _reasons(find_identifiers(frame(40)))["city"] == (
        f"holds a value fewer than 5 entities share in {customers * EACH} of its "
        f"{customers * EACH} rows (names, per-person codes, free text)"
    )


def test_a_column_finer_than_the_identifier_is_a_customers_own() -> None:
    """Each device names one customer (in 10 rows), and each customer holds two devices: not
    one-to-one with the e-mail, but each device is one customer's (before: not found)."""
    rows = np.arange(CUSTOMERS * 20)
    frame = pd.DataFrame(
        {
            "email": [f"c{r // 20}@example.com" for r in rows],
            "device": [f"{FIRST[r // 10 % 6]}s phone {r // 60}" for r in rows],
            "amount": rows,
        }
    )
    assert frame["device"].nunique() == 2 * CUSTOMERS
    assert _reasons(find_identifiers(frame))["device"] == (
        "holds a value fewer than 5 entities share in 600 of its 600 rows "
        "(names, per-person codes, free text)"
    )
    assert find_identifiers(frame, owners=np.arange(len(frame))) == find_identifiers(
        frame.drop(columns="device"), owners=np.arange(len(frame))
    )  # counted in rows, as before
    frame["device"] = [f"{FIRST[r // 20 % 6]}s phone {r // 20}" for r in rows]
    assert _reasons(find_identifiers(frame))["device"] == (
        "names the same rows as column email (one value each)"
    )


def _codes(values: int, rows: int, **columns: object) -> pd.DataFrame:
    """``values`` codes of ``rows`` rows each, each row distinct (an amount per row)."""
    frame = pd.DataFrame({"code": np.repeat(np.arange(values), rows)})
    return frame.assign(amount=np.arange(len(frame)) * 13 % 997, **columns)


def test_many_codes_of_few_rows_are_an_id() -> None:
    frame = _codes(320, 7)
    frame["customer_id"] = frame.pop("code").map("C{:05d}".format)
    assert _reasons(find_identifiers(frame)) == {
        "customer_id": "holds 320 code-like values of about 7 rows each (an ID)"
    }


def test_values_without_digits_or_with_spaces_are_no_codes() -> None:
    words = [f"{a}{b}" for a in ["Ka", "Lo", "Mi", "Nu", "Po"] for b in LAST + FIRST + ["Zed"] * 1]
    frame = _codes(60, 6)
    frame["customer_code"] = frame.pop("code").map(dict(enumerate(words)))
    assert frame["customer_code"].nunique() == 60
    assert find_identifiers(frame) == []
    frame["customer_code"] = frame["customer_code"] + " 7"
    assert find_identifiers(frame) == []


def test_merchant_codes_of_many_rows_are_not() -> None:
    frame = _codes(50, 200)
    frame["merchant_id"] = frame.pop("code").map("M{:04d}".format)
    assert find_identifiers(frame) == []
    assert _reasons(find_identifiers(frame.rename(columns={"merchant_id": "customer_id"})))


def test_integer_ids_need_an_id_name() -> None:
    frame = _codes(300, 3)
    assert find_identifiers(frame.rename(columns={"code": "Amount"})) == []
    assert _reasons(find_identifiers(frame.rename(columns={"code": "deviceNo"}))) == {
        "deviceNo": "holds 300 code-like values of about 3 rows each (an ID)"
    }


def test_person_named_integer_codes_are_an_id_whatever_their_rows() -> None:
    frame = _codes(30, 100).rename(columns={"code": "customer_id"})
    assert _reasons(find_identifiers(frame)) == {
        "customer_id": "holds 30 code-like values and is named like a person's ID"
    }
    assert find_identifiers(frame.rename(columns={"customer_id": "customer_age"})) == []
    assert find_identifiers(_codes(50, 200).rename(columns={"code": "merchant_id"})) == []


def test_exact_duplicates_count_once_without_owners() -> None:
    names = [f"{first} {last}" for first in FIRST for last in LAST]
    alone = pd.DataFrame({"alias": [n for n in names for _ in range(6)]})
    assert [f.column for f in find_identifiers(alone)] == ["alias"]
    assert find_identifiers(alone.assign(n=np.arange(len(alone)))) == []


def test_proposed_entity_is_the_coarsest_grouping_identifier() -> None:
    rows = CUSTOMERS * EACH
    cards = _cards(2 * CUSTOMERS)
    frame = _customers(
        card=[cards[2 * (i // EACH) + i % 2] for i in range(rows)],
        transaction=[f"T{i:07d}" for i in range(rows)],
    )
    found = find_identifiers(frame)
    assert [f.column for f in found] == ["email", "alias", "card", "transaction"]
    assert [f.groups_rows for f in found] == [True, True, True, False]
    assert found[2].rows_per_value == pytest.approx(3.5)
    assert proposed_entity(found) == found[0]
    assert proposed_entity(found[2:]) == found[2]
    assert proposed_entity(found[3:]) is None


@pytest.mark.parametrize("dtype", ["str", object])
def test_cells_are_stripped_and_blanks_are_empty(dtype: object) -> None:
    emails = [f"  {v}\t" if i % 2 else v for i, v in enumerate(CONTENT["e-mail addresses"])]
    cells = [v for v in emails for _ in range(5)] + ["", "   ", None] * 10
    frame = pd.DataFrame({"contact": pd.Series(cells, dtype=dtype)})
    found = find_identifiers(frame, owners=np.arange(len(frame)))
    assert found == [Identifier("contact", "holds e-mail addresses", values=40, rows=200)]


@pytest.mark.parametrize("name", ["card_amount", "user_age", "customer_spend"])
def test_a_measurement_named_after_a_person_is_no_identifier(name: str) -> None:
    """Many whole numbers of few rows each under a person's word but no ID word: a feature."""
    values = list(range(1000, 1300))
    assert _by_row(values, times=2, name=name) == []
    assert _by_row(values, times=2, name=f"{name}_id") != []


@pytest.mark.parametrize(
    "name", ["first_name", "customer_name", "billing_address", "Surname", "contact_email"]
)
def test_text_named_as_a_persons_details_is_an_identifier(name: str) -> None:
    """A customer's name repeated on each of their rows: neither rare nor code-like, but its
    column's name says what it holds; another thing's name is a feature."""
    names = [f"{first} {last}" for first in FIRST for last in LAST]
    frame = pd.DataFrame({name: [n for n in names for _ in range(7)], "n": range(7 * len(names))})
    assert _reasons(find_identifiers(frame)) == {
        name: f"holds {len(names)} values and is named like a person's details"
    }
    for other in ("merchant_name", "product_name", "city"):
        assert find_identifiers(frame.rename(columns={name: other})) == []


def test_masked_cards_e_mails_with_names_and_person_named_integers() -> None:
    """Layouts a team exports: a masked card, an e-mail with its display name, account numbers
    as integers under a person's word alone."""
    rng = np.random.default_rng(4)
    masked = [f"4{rng.integers(100, 999)} **** **** {rng.integers(1000, 9999)}" for _ in range(60)]
    mailed = [f"Holder {i} <holder{i}@bank.example>" for i in range(60)]
    frame = pd.DataFrame(
        {
            "card": [m for m in masked for _ in range(5)],
            "who": [m for m in mailed for _ in range(5)],
            "account": np.repeat(np.arange(7_000_000, 7_000_060), 5),
            "account_balance": rng.integers(0, 5000, 300),
        }
    )
    assert _reasons(find_identifiers(frame)) == {
        "card": "holds 60 code-like values of about 5 rows each (an ID)",
        "who": "holds e-mail addresses",
        "account": "holds 60 code-like values of about 5 rows each (an ID)",
    }


# --- customers of many rows, without data.entity ------------------------------------------------


def _many_rows(customers: int = 60, each: int = 30) -> pd.DataFrame:
    """``customers`` customers of ``each`` rows: an e-mail, a 16-hex device (a name that says
    nothing), two postcodes each (home and work, alternate rows); a distinct amount per row."""
    who = np.repeat(np.arange(customers), each)
    return pd.DataFrame(
        {
            "email": [f"c{c}@example.com" for c in who],
            "d": [hashlib.sha256(str(c).encode()).hexdigest()[:16] for c in who],
            "area": [f"SW{c % 9 + 1}A {c}A{'BW'[r % 2]}" for r, c in enumerate(who)],
            "amount": np.arange(len(who)) * 7 % 1009,
        }
    )


def test_a_value_one_customers_many_rows_hold_is_that_customers() -> None:
    """30 rows a customer, two postcodes each: counted in rows a postcode is held by 15
    entities and one-to-one with no other column (before: kept); counted in the customers the
    e-mails name, by one."""
    found = identify(_many_rows())
    assert _reasons(list(found.found))["area"] == (
        "holds a value fewer than 5 entities share in 1800 of its 1800 rows (names, per-person "
        "codes, free text)"
    )
    assert found.entity is not None and found.entity.count == 60
    assert found.entity.columns == ("email",)
    counted_in_rows = identify(_many_rows(), owners=np.arange(60 * 30))
    assert [f.column for f in counted_in_rows.found] == ["email", "d"]


def test_a_shared_value_joins_no_customers() -> None:
    """A household's phone beside five e-mails (and a placeholder beside all) is no one's: it
    joins nobody, and the 60 customers stay 60."""
    frame = _many_rows()
    who = np.repeat(np.arange(60), 30)
    frame["phone"] = [
        "+44 7700 900000" if c < 5 else "+44 20 7946 0000" if c >= 55 else f"+44 7700 9{c:05d}"
        for c in who
    ]
    assert identify(frame).entity.count == 60


GIVEN = ("Anna", "Jean", "Peter", "Sofia", "Lukas", "Emma", "Carlos", "Olivia")


def test_names_devices_and_card_digits_are_found_by_what_they_are() -> None:
    """Without another identifier to count customers by: full names under a person's word,
    a device's hashes under ``device``, a card's last digits by name."""
    rows = np.arange(40 * 25)
    frame = pd.DataFrame(
        {
            "Beneficiary": [f"{GIVEN[c % 8]} {LAST[c // 8]}" for c in rows // 25],
            "device": [str(uuid.uuid5(uuid.NAMESPACE_DNS, str(r // 25))) for r in rows],
            "card_last4": 1000 + (rows // 25) * 37 % 9000,
            "amount": rows,
        }
    )
    assert _reasons(find_identifiers(frame)) == {
        "Beneficiary": "holds 40 personal names",
        "device": "holds 40 code-like values and is named like a device's ID",
        "card_last4": "is named like a card number's last digits (part of a card number)",
    }
    renamed = find_identifiers(frame.rename(columns={"Beneficiary": "merchant_name"}))
    assert [f.column for f in renamed] == ["merchant_name", "device", "card_last4"]
    assert renamed[0].reason == "names the same rows as column device (one value each)"
