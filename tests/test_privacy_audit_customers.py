"""Issue 67's audit: a customers table trained and sampled without ``data.entity``, and with it,
then every file the product wrote, what it printed and 3,000 sampled frauds searched for every
planted identifier, e-mail or phone of a memo, exact date of birth and home coordinate.

The table (:func:`support.customers.customers_table`, the "exported" layout: names a team might
use, ``contact``, ``tel``, ``hw_addr``, ``geburtsdatum``, ``pan_tail``) holds 150 customers of 1 to
200 rows each and no account column: their names under ``Customer``, ``CardHolder`` and
``Beneficiary``, e-mails (a quarter obfuscated), phones of five countries, MAC addresses, 16-hex
and UUID device ids, national ids, usernames, plates, IP:port and bracketed IPv6, postcodes,
dates of birth, home coordinates and a card's last four digits; a memo in four languages with
their e-mails and phones, and "transfer to <name>" phrases 7 and 8 customers share. Before,
at 12-40 rows a customer every one of those identifier columns was a feature
(``tests/data/schema/test_customer_identifiers.py`` counts them at the schema).
"""

from __future__ import annotations

import pandas as pd
import pytest
from support.audit import Audit, audit_run, found_values
from support.customers import IDENTIFIER_COLUMNS, LAYOUTS, customers_table, planted

pytestmark = pytest.mark.slow

LAYOUT = "exported"


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> tuple[pd.DataFrame, object]:
    folder = tmp_path_factory.mktemp("customers")
    frame = customers_table(rows=(1, 200), layout=LAYOUT)
    path = folder / "customers.csv"
    frame.to_csv(path, index=False)
    return frame, path


@pytest.fixture(scope="module")
def audits(table, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Audit]:
    _, path = table
    folder = tmp_path_factory.mktemp("customers_audit")
    entity = f"data.entity={LAYOUTS[LAYOUT]['email']}"
    return {
        "without an entity": audit_run(folder / "rows", path, "data.positive=fraud"),
        # The evaluation's files are searched in the run above; here the schema, the bundle,
        # MLflow and the samples (case 4: names inside shared phrases, with data.entity).
        "with data.entity": audit_run(
            folder / "entity", path, "data.positive=fraud", entity, "evaluate.enabled=false"
        ),
    }


@pytest.mark.parametrize("run", ["without an entity", "with data.entity"])
def test_no_planted_value_appears_anywhere(table, audits: dict[str, Audit], run: str) -> None:
    frame, _ = table
    audit = audits[run]
    wanted = planted(frame, LAYOUT)
    samples = audit.samples.to_csv(index=False)
    leaks = {
        f"{kind} in {where}": sorted(values)[:3]
        for where, text in {**audit.texts, "samples": samples}.items()
        for kind, values in ((k, found_values(text, v)) for k, v in wanted.items())
        if values
    }
    assert leaks == {}


@pytest.mark.parametrize("run", ["without an entity", "with data.entity"])
def test_the_samples_hold_no_identifier_column_and_years_of_birth(
    audits: dict[str, Audit], run: str
) -> None:
    samples = audits[run].samples
    names = LAYOUTS[LAYOUT]
    assert not set(samples.columns) & {names[c] for c in IDENTIFIER_COLUMNS}
    born = pd.to_datetime(samples[names["dob"]])
    assert ((born.dt.month == 1) & (born.dt.day == 1)).all()
    for coordinate in (names["home_lat"], names["home_lon"]):
        values = samples[coordinate].to_numpy(float)
        assert (abs(values * 10 - (values * 10).round()) < 1e-6).all()
    assert not samples["memo"].astype(str).str.contains("@| at |transfer to [A-Z]").any()


def test_the_run_says_what_it_dropped_coarsened_and_counted(audits: dict[str, Audit]) -> None:
    log = audits["without an entity"].log
    names = LAYOUTS[LAYOUT]
    for column in IDENTIFIER_COLUMNS:
        assert f"column {names[column]} " in log and "an identifier, dropped" in log, column
    assert f"column {names['dob']} is a date of birth (a quasi-identifier)" in log
    assert "without data.entity, the 150 customers that column(s)" in log
    assert "level(s) contain an identifier" in log
    assert "without data.entity" not in audits["with data.entity"].log
