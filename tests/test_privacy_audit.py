"""The privacy audit: a card-transactions table trained and sampled as a fraud team would, then
every file the product wrote searched for each real customer's identifiers and each value fewer
than k customers hold.

The table (:func:`support.tables.transactions_table`) has several rows per customer with their
customer id, e-mail, card number and phone on each; one fraud customer whose rows alone hold a
merchant and an amount; one fraud row repeated five times, holding a merchant, the largest amount
and the latest time. Counted in rows, every identifier, that customer's merchant and amount and
the repeated row's values pass "a value fewer than 5 rows hold never ships". Counted in entities
they do not: without ``data.entity`` identifiers are dropped by their content and the repeated
row counts once; with ``data.entity=customer_id`` the one customer's values are held by one
customer too. Searched: stdout and stderr of ``wgangp.train`` and ``wgangp.sample``, every file of
the run folder and of the MLflow store (the sqlite file and the artifacts, zip members opened),
and the sampled rows.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
from support.configs import REPO, TINY_MODEL
from support.tables import (
    ONE_CUSTOMERS_AMOUNT,
    ONE_CUSTOMERS_MERCHANT,
    REPEATED_AMOUNT,
    REPEATED_MERCHANT,
    REPEATED_TIME,
    transactions_table,
)

pytestmark = pytest.mark.slow

#: A tiny run with every artifact a real one writes: the evaluation (SDMetrics included), the
#: samples, the bundle, the MLflow model.
RUN = [
    *(o for o in TINY_MODEL if not o.startswith("data")),
    "data.label=status",
    "trainer.steps=6",
    "trainer.steps_per_call=3",
    "trainer.progress=false",
    "trainer.sample_rows=200",
    "evaluate.enabled=true",
    "evaluate.n_synthetic=300",
    "evaluate.seeds=1",
    "evaluate.c2st_repeats=2",
    "evaluate.gbm_max_iter=20",
    "evaluate.sdmetrics=true",
]
SAMPLED = 3000
#: The customers' run under differential privacy.
PRIVATE = ("data.entity=customer_id", "data.positive=fraud", "privacy.epsilon=3")


@dataclass(frozen=True)
class Audit:
    """What one run wrote: the texts searched, by where they were found, and the samples."""

    texts: dict[str, str]
    samples: pd.DataFrame
    #: What ``wgangp.train`` printed (the log goes to stdout, as Hydra's console handler does).
    log: str


def _run(module: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(REPO)}
    env.pop("MLFLOW_TRACKING_URI", None)
    result = subprocess.run(
        [sys.executable, "-m", module, *args], cwd=cwd, env=env,
        capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def _texts(root: Path) -> dict[str, str]:
    """Every file under ``root`` as text (bytes read as latin-1, so a sqlite file's strings
    show), a zip's members (the Keras file) each on their own."""
    found = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        found[str(path)] = data.decode("latin-1")
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                for member in archive.namelist():
                    found[f"{path}!{member}"] = archive.read(member).decode("latin-1")
    return found


def _audit(folder: Path, table: Path, *extra: str) -> Audit:
    work = folder / "work"
    work.mkdir(parents=True)
    uri = f"sqlite:///{work / 'mlflow.db'}"
    out = work / "out"
    trained = _run(
        "wgangp.train",
        [*RUN, f"data.path={table}", f"tracking.uri={uri}", f"hydra.run.dir={out}", *extra],
        work,
    )
    rows = work / "fraud.csv"
    sampled = _run(
        "wgangp.sample",
        [f"model_uri={out / 'synthesizer'}", f"n={SAMPLED}", "label=fraud", f"output={rows}"],
        work,
    )
    texts = _texts(work)
    for name, result in (("train", trained), ("sample", sampled)):
        texts[f"{name} stdout"], texts[f"{name} stderr"] = result.stdout, result.stderr
    return Audit(texts, pd.read_csv(rows), trained.stdout)


@pytest.fixture(scope="module")
def audits(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Audit]:
    folder = tmp_path_factory.mktemp("audit")
    table = folder / "input" / "transactions.csv"
    table.parent.mkdir()
    transactions_table().to_csv(table, index=False)
    return {
        "rows": _audit(folder / "rows", table),
        "customers": _audit(folder / "customers", table, "data.entity=customer_id"),
        "private": _audit(folder / "private", table, *PRIVATE),
    }


def _identifiers() -> dict[str, set[str]]:
    """Each real identifier as written, and card numbers and phones as their digits too."""
    frame = transactions_table()
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


def _rare_values(entity: bool) -> dict[str, re.Pattern]:
    """The values fewer than 5 entities hold, as patterns: the repeated row's (one entity either
    way), and with customers counted, the one customer's too."""
    day, time = REPEATED_TIME.split()
    found = {
        REPEATED_MERCHANT: re.compile(re.escape(REPEATED_MERCHANT)),
        f"{REPEATED_AMOUNT}": _number(REPEATED_AMOUNT),
        REPEATED_TIME: re.compile(rf"{day}[ T]{time}"),
    }
    if entity:
        found[ONE_CUSTOMERS_MERCHANT] = re.compile(re.escape(ONE_CUSTOMERS_MERCHANT))
        found[f"{ONE_CUSTOMERS_AMOUNT}"] = _number(ONE_CUSTOMERS_AMOUNT)
    return found


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
    if run == "private":  # a text column whose every level failed selection is dropped
        columns = ["merchant", *columns] if "merchant" not in columns else columns
    assert columns == ["merchant", "amount", "hour", "ts", "status"]


@pytest.mark.parametrize("run", ["rows", "customers", "private"])
def test_no_value_fewer_than_k_entities_hold_appears_anywhere(
    audits: dict[str, Audit], run: str
) -> None:
    audit = audits[run]
    patterns = _rare_values(entity=run != "rows")
    leaks = [
        f"{value} in {where}"
        for where, text in audit.texts.items()
        for value, pattern in patterns.items()
        if pattern.search(text)
    ]
    assert leaks == []


def test_counted_in_rows_the_one_customers_values_ship_as_the_rule_allows(
    audits: dict[str, Audit],
) -> None:
    """Without data.entity, one customer's 8 rows are 8 entities: their merchant is a level
    like any other (the audit above can fail: this is what it would find)."""
    schema = next(t for w, t in audits["rows"].texts.items() if w.endswith("out/schema.yaml"))
    assert ONE_CUSTOMERS_MERCHANT in schema
    assert ONE_CUSTOMERS_MERCHANT not in next(
        t for w, t in audits["customers"].texts.items() if w.endswith("out/schema.yaml")
    )


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
