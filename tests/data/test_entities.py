"""Privacy that counts people: identifiers dropped by their content, the entity (``data.entity``)
kept as codes and split whole, and every value fewer than k entities hold kept out of the schema.

The end-to-end audit of everything a run writes is tests/test_privacy_audit.py; these check the
data layer's part of it, and every line a user sees (docs/errors.md, word for word).
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support.docs import documented
from support.tables import (
    ONE_CUSTOMERS_AMOUNT,
    ONE_CUSTOMERS_MERCHANT,
    REPEATED_AMOUNT,
    REPEATED_MERCHANT,
    REPEATED_TIME,
    transactions_table,
)

from wgangp.config import DataConfig
from wgangp.data.entities import INFERRED_ENTITY, entity_codes, linked_row_groups, row_entities
from wgangp.data.prepare import prepare_data
from wgangp.data.schema.inference import infer_table
from wgangp.errors import ConfigError, DataError
from wgangp.schema import main as schema_main

IDENTIFIERS = ["customer_id", "email", "card", "phone"]


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tx") / "transactions.csv"
    transactions_table().to_csv(path, index=False)
    return path


def _data(path: Path, **kwargs) -> DataConfig:
    return DataConfig(path=str(path), label="status", fallback="error", **kwargs)


def _one_line(err: pytest.ExceptionInfo) -> str:
    assert "\n" not in str(err.value)
    return str(err.value)


def test_identifiers_are_dropped_in_one_line_each_and_the_entity_proposed(
    table: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="wgangp.data"):
        data = prepare_data(_data(table), seed=0, launch_dir=table.parent)
    assert data.features == ["merchant", "amount", "hour", "ts"]
    # The customers the identifiers name go on as codes, never as the identifiers' values.
    assert set(data.train.columns) == {*data.features, "status", INFERRED_ENTITY}
    assert data.entity == INFERRED_ENTITY and data.train[INFERRED_ENTITY].dtype == np.int64
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    dropped = [line for line in warned if "an identifier, dropped" in line]
    assert [line.split()[2] for line in dropped] == IDENTIFIERS
    assert f"{table}: column email holds e-mail addresses" in dropped[1]
    assert f"{table}: column card holds payment card numbers" in dropped[2]
    assert f"{table}: column phone holds phone numbers" in dropped[3]
    (proposal,) = [line for line in warned if "set data.entity=" in line]
    assert proposal == (
        f"{table}: column customer_id looks like it names a customer, card or account (320 "
        "values, about 7 rows each); set data.entity=customer_id so that privacy counts them, "
        "not rows"
    )
    documented(proposal, path=table)


def test_without_an_entity_the_schema_counts_the_customers_the_identifiers_name(
    table: Path,
) -> None:
    """Without data.entity the rows sharing an e-mail, card or phone are one customer's: the
    one customer's 8 rows hold their merchant once (before: 8 entities, a level), and the row
    repeated five times holds its merchant, its amount (the largest) and its time (the latest)
    alone."""
    inference = infer_table(pd.read_csv(table), "status", source="t")
    schema = inference.schema
    assert inference.customers is not None
    assert inference.customers.count == transactions_table()["customer_id"].nunique()
    merchant = schema.column("merchant")
    assert REPEATED_MERCHANT not in merchant.levels and merchant.other in merchant.levels
    assert ONE_CUSTOMERS_MERCHANT not in merchant.levels
    assert REPEATED_AMOUNT not in schema.column("amount").bounds
    assert not str(schema.column("ts").bounds[1]).startswith(REPEATED_TIME.split()[0])


def test_with_an_entity_each_customer_is_one_holder_and_in_one_split(table: Path) -> None:
    data = prepare_data(_data(table, entity="customer_id"), seed=0, launch_dir=table.parent)
    raw = transactions_table()
    assert data.features == ["merchant", "amount", "hour", "ts"]
    parts = {name: getattr(data, name) for name in ("train", "val", "test")}
    for frame in parts.values():  # codes, never the customers' own ids
        assert pd.api.types.is_integer_dtype(frame["customer_id"])
        np.testing.assert_array_equal(data.entities(frame), frame["customer_id"].to_numpy())
    owners = {name: set(frame["customer_id"]) for name, frame in parts.items()}
    assert not (owners["train"] & owners["val"] or owners["train"] & owners["test"])
    assert not owners["val"] & owners["test"]
    assert sum(len(o) for o in owners.values()) == raw["customer_id"].nunique()
    merchant = data.schema.column("merchant")
    assert ONE_CUSTOMERS_MERCHANT not in merchant.levels and merchant.other in merchant.levels
    low, high = data.schema.column("amount").bounds
    assert ONE_CUSTOMERS_AMOUNT not in (low, high) and REPEATED_AMOUNT not in (low, high)
    assert high < REPEATED_AMOUNT


def test_entity_codes_refuse_a_gap_in_one_line() -> None:
    with pytest.raises(DataError) as err:
        entity_codes(pd.Series(["a", None, "b", "", None]), "customer_id", "t.csv")
    assert _one_line(err) == (
        "t.csv: data.entity column customer_id has 2 empty cell(s) (first at data row 2); "
        "every row needs its entity: fill or drop those rows"
    )
    frame = pd.DataFrame({"x": [1, 1, 2], "c": [5, 6, 5]})
    np.testing.assert_array_equal(row_entities(frame, ["x"]), [0, 0, 1])
    np.testing.assert_array_equal(row_entities(frame, ["x"], "c"), [5, 6, 5])


def test_an_entity_with_gaps_is_one_line(table: Path, tmp_path: Path) -> None:
    frame = transactions_table()
    frame.loc[[11, 40, 41], "customer_id"] = None
    path = tmp_path / "gaps.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(DataError) as err:
        prepare_data(_data(path, entity="customer_id"), seed=0, launch_dir=tmp_path)
    line = _one_line(err)
    assert line == (
        f"{path}: data.entity column customer_id has 3 empty cell(s) (first at data row 12); "
        "every row needs its entity: fill or drop those rows"
    )
    documented(line, path=path)


def test_an_entity_that_is_no_column_is_one_line_with_the_close_name(table: Path) -> None:
    with pytest.raises(DataError) as err:
        prepare_data(_data(table, entity="customer"), seed=0, launch_dir=table.parent)
    line = _one_line(err)
    assert line == (
        f"{table}: data.entity=customer: column 'customer' is not in the table; did you mean "
        "'customer_id'?"
    )
    documented(line, path=table)


def test_an_entity_naming_the_label_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as err:
        DataConfig(label="status", entity="status")
    assert _one_line(err) == (
        "invalid config value data.entity: 'status' is the label (data.label); name the "
        "customer, card or account column"
    )
    documented(_one_line(err))


def test_an_edited_schema_keeping_the_entity_or_an_identifier_is_refused(
    table: Path, tmp_path: Path
) -> None:
    inferred = infer_table(pd.read_csv(table), "status", source="t").schema
    raw = inferred.to_dict()
    raw["columns"].insert(0, {"name": "customer_id", "kind": "categorical", "levels": ["a"],
                              "other": "a", "missing": 0})  # fmt: skip
    edited = tmp_path / "schema.yaml"
    edited.write_text(type(inferred).from_dict(raw).to_yaml())
    with pytest.raises(DataError) as err:
        prepare_data(
            _data(table, entity="customer_id", schema=str(edited)), seed=0, launch_dir=tmp_path
        )
    line = _one_line(err)
    assert line == (
        f"{table}: data.entity=customer_id is a feature of the schema, but the entity column "
        "groups rows and never trains or ships; delete its entry from data.schema, or name "
        "another column"
    )
    documented(line, path=table)
    with pytest.raises(DataError) as err:  # without data.entity: an identifier kept
        prepare_data(_data(table, schema=str(edited)), seed=0, launch_dir=tmp_path)
    assert _one_line(err) == (
        f"{table}: column customer_id holds 320 code-like values of about 7 rows each (an ID): "
        "an identifier never trains or ships, since its values would come back verbatim in "
        "samples; delete its entry from data.schema (or name it data.entity=customer_id)"
    )


def test_the_schema_command_counts_the_entity_and_lists_the_drops(
    table: Path, capsys: pytest.CaptureFixture
) -> None:
    assert schema_main([f"data.path={table}", "data.label=status"]) == 0
    out, err = capsys.readouterr()
    for column in IDENTIFIERS:
        assert f"wgangp: review: {table}: column {column} " in err
        assert f"# review: {table}: column {column} " in out
    assert "set data.entity=customer_id" in err and ONE_CUSTOMERS_MERCHANT not in out
    assert f"{table}: without data.entity, the 320 customers that column(s)" in err
    args = [f"data.path={table}", "data.label=status", "data.entity=customer_id"]
    assert schema_main(args) == 0
    out, err = capsys.readouterr()
    assert "set data.entity" not in err and ONE_CUSTOMERS_MERCHANT not in out
    assert "C00" not in out and "@" not in out


def test_linked_row_groups_join_rows_sharing_any_value_transitively() -> None:
    """Rows 0-1 share a, 1-2 share b: one group; 4-5 share b; 3 and 6 are alone. Checked
    against scipy's connected components on random columns with gaps."""
    a = np.array([0, 0, 1, 2, -1, 3, -1])
    b = np.array([0, 1, 1, -1, 2, 2, -1])
    np.testing.assert_array_equal(linked_row_groups([a, b]), [0, 0, 0, 1, 2, 2, 3])
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    rng = np.random.default_rng(0)
    for _ in range(5):
        n = 3000
        columns = [
            np.where(rng.random(n) < 0.2, -1, rng.integers(0, rng.integers(500, 5000), n))
            for _ in range(3)
        ]
        rows, values, offset = [], [], n
        for codes in columns:
            here = codes >= 0
            rows.append(np.flatnonzero(here))
            values.append(offset + codes[here])
            offset += int(codes.max()) + 1
        edges = np.concatenate(rows), np.concatenate(values)
        graph = coo_matrix((np.ones(len(edges[0])), edges), shape=(offset, offset))
        expected = pd.factorize(connected_components(graph, directed=False)[1][:n])[0]
        np.testing.assert_array_equal(linked_row_groups(columns), expected)
