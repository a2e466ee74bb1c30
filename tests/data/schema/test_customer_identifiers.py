"""Issue 67's privacy cases 1-4, at what ships from the schema and the transform: a customers table
(:func:`support.customers.customers_table`: five countries' formats, 1 to 200 rows a customer, no
account column, free text in four languages) gives a ``schema.yaml`` and a ``preprocessing.json``
that hold no identifier, no e-mail or phone of a memo, no exact date of birth, and no customer's
name inside a shared phrase, without ``data.entity`` and with it. Every planted value is searched
for as written (phones and ID numbers as bare digits too; dates as ISO text and as seconds).
``tests/test_privacy_audit_customers.py`` trains and samples the same table end to end.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pandas as pd
import pytest
from support.audit import found_values
from support.customers import (
    IDENTIFIER_COLUMNS,
    LAYOUTS,
    MEMO_ONLY_BENEFICIARY,
    SHARED_BENEFICIARY,
    customers_table,
    planted,
)
from support.docs import documented

from wgangp.data.schema.inference import Inference, infer_table
from wgangp.data.schema.validation import validate_table
from wgangp.data.transform.table_transform import TableTransform

#: (layout, rows a customer): names as named here, as a team exports them, saying nothing.
CASES = [
    ("named", (12, 40)),
    ("exported", (12, 40)),
    ("neutral", (12, 40)),
    ("exported", (1, 3)),
    ("exported", (3, 15)),
    ("exported", (1, 200)),
    ("neutral", (1, 200)),
    ("exported", (50, 200)),
]
IDS = [f"{layout}-{lo}-{hi}" for layout, (lo, hi) in CASES]


@cache
def _shipped(layout: str, rows: tuple[int, int], entity: bool = False):
    """The table, its inference, and what ships of it: schema.yaml and preprocessing.json."""
    frame = customers_table(rows=rows, layout=layout)
    column = LAYOUTS[layout]["email"] if entity else None
    inference = infer_table(frame, "status", "fraud", source="t.csv", entity=column)
    clean = validate_table(
        frame, inference.schema, source="t.csv", min_rows_per_class=1, entity=column
    )
    owners = None if column is None else clean[column].to_numpy()
    fitted = TableTransform.fit(
        clean, inference.schema, inference.schema.classes(clean["status"]), entities=owners
    )
    return frame, inference, clean, {"schema.yaml": inference.schema.to_yaml(),
                                     "preprocessing.json": fitted.to_json()}  # fmt: skip


def _leaks(texts: dict[str, str], wanted: dict[str, set[str]]) -> dict[str, int]:
    """How many of each kind's planted values some text holds (kinds without one left out)."""
    found = {
        kind: set().union(*(found_values(t, v) for t in texts.values()))
        for kind, v in wanted.items()
    }
    return {kind: len(values) for kind, values in found.items() if values}


def _wanted(frame: pd.DataFrame, layout: str, *kinds: str) -> dict[str, set[str]]:
    values = planted(frame, layout)
    return {kind: values[kind] for kind in kinds}


IDENTIFIER_KINDS = (
    *(c for c in IDENTIFIER_COLUMNS if c != "card_last4"), "phone digits", "national_id digits",
)  # fmt: skip


# --- case 1: identifiers survive when each customer has more than about 10 rows ----------------


@pytest.mark.parametrize(("layout", "rows"), CASES, ids=IDS)
def test_no_identifier_column_is_a_feature_without_an_entity(
    layout: str, rows: tuple[int, int]
) -> None:
    """Before: at 12-40 rows, every one of the 13 identifier columns of the exported and neutral
    layouts was a feature (names, e-mails, phones, MACs, devices, national ids, usernames,
    plates, IP:port, postcodes, card_last4), and the postcode in every layout."""
    frame, inference, _, _ = _shipped(layout, rows)
    names = LAYOUTS[layout]
    kept = [c for c in IDENTIFIER_COLUMNS if names[c] in inference.schema.names]
    assert kept == []
    assert set(inference.schema.names) >= {"merchant", "amount", "ts", "status"}
    # At 1-3 rows most memos are one customer's transfer: free text, dropped whole.
    assert ("memo" in inference.schema.names) == (rows != (1, 3))


@pytest.mark.parametrize(("layout", "rows"), CASES, ids=IDS)
def test_no_identifier_value_ships_without_an_entity(layout: str, rows: tuple[int, int]) -> None:
    """Before (12-40 rows, exported layout): all 150 names, devices, MACs, usernames, plates,
    postcodes of schema.yaml's levels, and 187 of 188 phones."""
    frame, _, _, texts = _shipped(layout, rows)
    assert _leaks(texts, _wanted(frame, layout, *IDENTIFIER_KINDS)) == {}


def test_the_customers_are_inferred_and_said_in_one_line() -> None:
    frame, inference, _, _ = _shipped("exported", (12, 40))
    assert inference.customers is not None and inference.customers.count == 150
    line = next(line for line in inference.lines("t.csv") if "without data.entity" in line)
    assert line == (
        "t.csv: without data.entity, the 150 customers that column(s) contact, tel, hw_addr, "
        "device, nid, vehicle name (rows sharing a value are one customer's) are what the schema, "
        "the split, the transform and the evaluation's privacy count, not rows; set data.entity "
        "to name them yourself"
    )
    documented(line.replace("150", "<n>").replace(
        "contact, tel, hw_addr, device, nid, vehicle", "<columns>"), path="t.csv")  # fmt: skip
    assert inference.proposed is not None and inference.proposed.column == "contact"


# --- case 2: e-mails and phones inside free text ship -----------------------------------------


@pytest.mark.parametrize(("layout", "rows"), CASES, ids=IDS)
def test_no_e_mail_or_phone_of_a_memo_ships(layout: str, rows: tuple[int, int]) -> None:
    """Before (12-40 rows): 32 of 143 memo e-mails and 26 of 154 memo phones were levels (58
    and 154 in the exported layout). The memo stays a feature: its shared phrases are levels."""
    frame, inference, clean, texts = _shipped(layout, rows)
    assert _leaks(texts, _wanted(frame, layout, "memo e-mails", "memo phones")) == {}
    if "memo" not in inference.schema.names:
        return  # 1-3 rows: dropped whole (above)
    memo = inference.schema.column("memo")
    assert "online purchase" in memo.levels and memo.other in memo.levels
    assert not any("@" in str(level) for level in memo.levels)


def test_a_level_holding_an_identifier_is_read_as_other() -> None:
    """Counted in rows, each customer's "refund request, contact <e-mail>" (50 to 200 rows) was a
    level; counted in customers it is one customer's, and read as other either way. The two
    transfers many customers share are withheld for the name they hold, and said so."""
    frame, inference, clean, _ = _shipped("named", (50, 200))
    other = inference.schema.column("memo").other
    contact = frame["memo"].str.contains("@")
    assert contact.sum() > 1000
    assert (clean.loc[contact, "memo"] == other).all()
    assert (frame.loc[contact, "memo"].value_counts() >= 5).sum() > 100  # levels, in rows
    line = next(line for line in inference.lines("t.csv") if line.startswith("t.csv: column memo:"))
    assert line == (
        "t.csv: column memo: 2 level(s) contain an identifier (an e-mail, a phone, a name, ...): "
        "read as its other level, never listed (docs/privacy.md)"
    )
    documented(line.replace(" 2 ", " <n> "), path="t.csv")


# --- case 3: exact dates of birth ship ----------------------------------------------------------


@pytest.mark.parametrize(("layout", "rows"), CASES, ids=IDS)
def test_dates_of_birth_train_as_their_year(layout: str, rows: tuple[int, int]) -> None:
    """Before: every date of birth a customer's 5 rows or more hold was stored in
    preprocessing.json (149 of 149 at 12-40 rows), as seconds. Named (dob, geburtsdatum) or
    not (neutral: decades before the transactions), the column trains as years."""
    frame, inference, clean, texts = _shipped(layout, rows)
    assert _leaks(texts, _wanted(frame, layout, "dob", "dob as seconds")) == {}
    dob = LAYOUTS[layout]["dob"]
    dates = pd.to_datetime(clean[dob])
    assert ((dates.dt.month == 1) & (dates.dt.day == 1)).all()
    column = inference.schema.column(dob)
    assert column.kind == "datetime" and column.coarsen == "year"
    assert all(str(bound).endswith("-01-01T00:00:00") for bound in column.bounds)


@pytest.mark.parametrize("layout", ["named", "exported"])
def test_home_coordinates_train_to_a_tenth_of_a_degree(layout: str) -> None:
    """Coordinates named as such are kept to 0.1 degrees (before: 299 of 299 exact values in
    preprocessing.json); the card's last four digits are dropped."""
    frame, inference, clean, texts = _shipped(layout, (12, 40))
    names = LAYOUTS[layout]
    assert _leaks(texts, _wanted(frame, layout, "home coordinates")) == {}
    assert names["card_last4"] not in inference.schema.names
    for name in (names["home_lat"], names["home_lon"]):
        np.testing.assert_allclose(clean[name] * 10, np.round(clean[name] * 10), atol=1e-9)
        assert inference.schema.column(name).coarsen == 0.1
    lines = inference.lines("t.csv")
    assert (
        f"t.csv: column {names['home_lat']} holds coordinates (a quasi-identifier): kept to 0.1 "
        "degrees, about 11 km (coarsen: 0.1), so no one's exact value trains or ships "
        "(docs/privacy.md)"
    ) in lines
    birth = next(line for line in lines if "date of birth" in line)
    documented(birth.replace(names["dob"], "<column>"), path="t.csv")


# --- case 4: a customer's name inside a shared phrase ships even with data.entity --------------


@pytest.mark.parametrize("layout", ["named", "exported", "neutral"])
def test_a_name_inside_a_phrase_many_customers_share_is_withheld(layout: str) -> None:
    """With data.entity: "transfer to Marta Kowalska" (8 customers, the beneficiary column's
    value) and "transfer to Peter Novak" (7, in no other column) held by 5 entities or more each
    were levels; now neither is, and no identifier ships (before: 1 beneficiary, 2 of 2)."""
    frame, inference, _, texts = _shipped(layout, (12, 40), entity=True)
    memo = inference.schema.column("memo")
    for name in (SHARED_BENEFICIARY, MEMO_ONLY_BENEFICIARY):
        held = frame.loc[frame["memo"] == f"transfer to {name}", LAYOUTS[layout]["email"]]
        assert held.nunique() >= 5
        assert f"transfer to {name}" not in memo.levels
    kinds = (*IDENTIFIER_KINDS, "beneficiaries in memos", "memo e-mails", "memo phones", "dob")
    assert _leaks(texts, _wanted(frame, layout, *kinds)) == {}


def test_inference_keeps_its_old_api() -> None:
    """``Inference`` built as before (three fields) still reads and says the same."""
    _, inference, _, _ = _shipped("named", (1, 3))
    old = Inference(inference.schema, inference.identifiers, inference.proposed)
    assert old.customers is None and old.withheld == ()
