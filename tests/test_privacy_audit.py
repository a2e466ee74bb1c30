"""The privacy audit: a card-transactions table trained and sampled as a fraud team would, then
every file the product wrote searched for each real customer's identifiers and each value fewer
than k customers hold.

The table (:func:`support.tables.transactions_table`) has several rows per customer with their
customer id, e-mail, card number and phone on each; one fraud customer whose rows alone hold a
merchant and an amount; one fraud row repeated five times, holding a merchant, the largest amount
and the latest time. Counted in rows, every identifier, that customer's merchant and amount and
the repeated row's values pass "a value fewer than 5 rows hold never ships". Counted in entities
they do not: without ``data.entity`` identifiers are dropped by their content, the customers
they name count once each and so does the repeated row; with ``data.entity=customer_id`` the
customers are that column's. Searched: stdout and stderr of ``wgangp.train`` and
``wgangp.sample``, every file of the run folder and of the MLflow store (the sqlite file and the
artifacts, zip members opened), and the sampled rows.
"""

from __future__ import annotations

import re

import pytest
from support.audit import Audit, audit_run
from support.tables import (
    ONE_CUSTOMERS_AMOUNT,
    ONE_CUSTOMERS_MERCHANT,
    PRIVATE_FRAUDSTERS,
    REPEATED_AMOUNT,
    REPEATED_MERCHANT,
    REPEATED_TIME,
    transactions_table,
)

pytestmark = pytest.mark.slow

#: The customers' run under differential privacy.
PRIVATE = ("data.entity=customer_id", "data.positive=fraud", "privacy.epsilon=3")


@pytest.fixture(scope="module")
def audits(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Audit]:
    folder = tmp_path_factory.mktemp("audit")
    table = folder / "input" / "transactions.csv"
    table.parent.mkdir()
    transactions_table(fraudsters=PRIVATE_FRAUDSTERS).to_csv(table, index=False)
    return {
        "rows": audit_run(folder / "rows", table),
        "customers": audit_run(folder / "customers", table, "data.entity=customer_id"),
        "private": audit_run(folder / "private", table, *PRIVATE),
    }


def _identifiers() -> dict[str, set[str]]:
    """Each real identifier as written, and card numbers and phones as their digits too."""
    frame = transactions_table(fraudsters=PRIVATE_FRAUDSTERS)
    digits = {re.sub(r"\D", "", v) for v in (*frame["card"], *frame["phone"])}
    return {
        "customer ids": set(frame["customer_id"]),
        "e-mails": set(frame["email"]),
        "cards and phones as written": set(frame["card"]) | set(frame["phone"]),
        "cards and phones as digits": digits,
    }


def _tokens(text: str) -> set[str]:
    """Every token that could be an identifier: words, e-mail addresses, and digit runs with
    their spaces and dashes (as written and as bare digits)."""
    found = set(re.findall(r"[\w.+-]+@[\w.-]+|\w+", text))
    for run in re.findall(r"\+?\d[\d \-]{5,24}\d", text):
        found |= {run, run.strip(), re.sub(r"\D", "", run)}
    return found


def _number(value: float) -> re.Pattern:
    """A number as a whole token: 4321.09, never a part of 14321.091."""
    return re.compile(rf"(?<![\d.]){re.escape(f'{value:.2f}')}(?![\d])")


def _rare_values() -> dict[str, re.Pattern]:
    """The values fewer than 5 entities hold, as patterns: the repeated row's (one entity either
    way), and the one customer's merchant and amount (the schema and the transform count the
    customers the identifiers name, with data.entity or without)."""
    day, time = REPEATED_TIME.split()
    return {
        REPEATED_MERCHANT: re.compile(re.escape(REPEATED_MERCHANT)),
        f"{REPEATED_AMOUNT}": _number(REPEATED_AMOUNT),
        REPEATED_TIME: re.compile(rf"{day}[ T]{time}"),
        ONE_CUSTOMERS_MERCHANT: re.compile(re.escape(ONE_CUSTOMERS_MERCHANT)),
        f"{ONE_CUSTOMERS_AMOUNT}": _number(ONE_CUSTOMERS_AMOUNT),
    }


@pytest.mark.parametrize("run", ["rows", "customers", "private"])
def test_no_identifier_appears_anywhere(audits: dict[str, Audit], run: str) -> None:
    audit = audits[run]
    wanted = _identifiers()
    leaks = [
        f"{what} in {where}"
        for where, text in audit.texts.items()
        if (tokens := _tokens(text))
        for what, values in wanted.items()
        if tokens & values
    ]
    assert leaks == []
    columns = list(audit.samples.columns)
    features = ["merchant", "amount", "hour", "ts", "status"]
    if run == "private":
        # The description is released by noisy votes (secret noise, a new draw each run): a
        # column may be dropped (a text one whose every level failed selection, a number under
        # a draw that falls short), never one added, and the order is the table's.
        assert columns == [c for c in features if c in columns] and "status" in columns
        assert len(columns) >= 2
    else:
        assert columns == features


@pytest.mark.parametrize("run", ["rows", "customers", "private"])
def test_no_value_fewer_than_k_entities_hold_appears_anywhere(
    audits: dict[str, Audit], run: str
) -> None:
    audit = audits[run]
    patterns = _rare_values()
    leaks = [
        f"{value} in {where}"
        for where, text in audit.texts.items()
        for value, pattern in patterns.items()
        if pattern.search(text)
    ]
    assert leaks == []


def test_without_an_entity_the_schema_and_the_transform_count_customers(
    audits: dict[str, Audit],
) -> None:
    """Without data.entity the schema and the transform count the customers the e-mails, cards
    and phones name: the one customer's merchant is no level and its amount, 8 rows of it, no
    point mass (before: 8 rows, 8 entities, a level in the schema; the transform counted rows and
    shipped the amount)."""
    for audit in ("rows", "customers"):
        texts = audits[audit].texts
        schema = next(t for w, t in texts.items() if w.endswith("out/schema.yaml"))
        assert ONE_CUSTOMERS_MERCHANT not in schema, audit
        transform = next(
            t for w, t in texts.items() if w.endswith("out/synthesizer/preprocessing.json")
        )
        assert not _number(ONE_CUSTOMERS_AMOUNT).search(transform), audit


def test_each_identifier_is_dropped_in_one_line_and_the_entity_proposed(
    audits: dict[str, Audit],
) -> None:
    log = audits["rows"].log
    for column in ("customer_id", "email", "card", "phone"):
        assert re.search(rf"column {column} [^\n]*: an identifier, dropped", log), column
    assert "set data.entity=customer_id so that privacy counts them, not rows" in log
    assert "set data.entity=" not in audits["customers"].log


def test_a_private_run_states_its_guarantee_before_training_and_when_sampling(
    audits: dict[str, Audit],
) -> None:
    audit = audits["private"]
    assert re.search(r"privacy: epsilon 3 at delta 1e-0\d per entity", audit.log)
    assert "-differential privacy per entity" in audit.texts["sample stderr"]
    assert "no differential-privacy guarantee" in audits["customers"].texts["sample stderr"]
