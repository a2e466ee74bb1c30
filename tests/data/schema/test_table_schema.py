"""The table schema as data: inference on hand-made frames and the two shared tables, the YAML
round trip, an edited file, and every bad schema or table answered in one line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support.configs import REPO

from wgangp.data.builtin.creditcard import creditcard_schema
from wgangp.data.schema.inference import infer_schema
from wgangp.data.schema.review import MAX_LEVELS, ambiguities, require_unambiguous
from wgangp.data.schema.table_schema import ColumnSchema, TableSchema
from wgangp.data.schema.validation import match_table
from wgangp.errors import ConfigError, DataError

TABLES = REPO.parent / "shared" / "data" / "tables"


def _frame(n: int = 40) -> pd.DataFrame:
    """Every kind, gaps, integral floats and a rare label value."""
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "amount": rng.normal(100, 20, n),
            "count": rng.integers(0, 5, n),
            "gappy": [3.0, np.nan, 7.0, 1.0] * (n // 4),  # integers read as floats with gaps
            "city": ["Paris", "Lyon", None, "Nice"] * (n // 4),
            "member": [True, False] * (n // 2),
            "opened": [f"2024-03-{d:02d}" for d in rng.integers(1, 29, n)],
            "numbers_as_text": [str(v) for v in rng.integers(10, 20, n)],
            "label": ["ok"] * (n - 6) + ["fraud"] * 6,
        }
    )


def _one_line(err: pytest.ExceptionInfo) -> str:
    text = str(err.value)
    assert "\n" not in text
    return text


# --- inference ------------------------------------------------------------------------------


def test_inference_finds_every_kind() -> None:
    schema = infer_schema(_frame(), label="label")
    kinds = {column.name: column.kind for column in schema.columns}
    assert kinds == {
        "amount": "continuous",
        "count": "integer",
        "gappy": "integer",
        "city": "categorical",
        "member": "categorical",
        "opened": "datetime",
        "numbers_as_text": "integer",
        "label": "categorical",
    }
    assert schema.column("gappy").bounds == (1, 7)
    assert schema.column("gappy").missing == 10 and schema.column("gappy").nullable
    assert schema.column("city").levels == ("Lyon", "Nice", "Paris")
    assert schema.column("city").missing == 10
    assert schema.column("member").levels == (False, True)
    low, high = schema.column("opened").bounds
    assert low.startswith("2024-03-") and low <= high
    assert schema.column("count").missing == 0 and not schema.column("count").nullable


def test_the_positive_class_defaults_to_the_rarer_label_value() -> None:
    schema = infer_schema(_frame(), label="label")
    assert schema.positive == "fraud"
    assert dict(schema.label_counts) == {"fraud": 6, "ok": 34}
    assert schema.rows == 40
    assert [c.name for c in schema.features] == list(_frame().columns[:-1])


def test_a_named_positive_matches_by_text() -> None:
    frame = pd.DataFrame({"x": [0.5, 1.5, 2.5, 3.5], "y": [0, 1, 1, 2]})
    schema = infer_schema(frame, label="y", positive="2")
    assert schema.positive == 2 and isinstance(schema.positive, int)


def test_the_shipped_creditcard_schema_says_what_kaggles_file_holds() -> None:
    """Time in seconds, V1..V28 unbounded, Amount >= 0 on a log scale in cents; Class 0/1."""
    schema = creditcard_schema()
    assert schema.names == ("Time", *(f"V{i}" for i in range(1, 29)), "Amount", "Class")
    assert schema.label == "Class" and schema.positive == 1
    assert {c.kind for c in schema.features} == {"continuous"}
    assert schema.column("Class").levels == (0, 1)
    time, amount = schema.column("Time"), schema.column("Amount")
    assert (time.round, time.clip, time.log) == (1, True, False)
    assert (amount.round, amount.clip, amount.log) == (0.01, True, True)
    assert all(not schema.column(f"V{i}").clip for i in range(1, 29))
    assert all(c.bounds is None for c in schema.features)  # fitted on the training rows


def test_the_number_options_are_checked() -> None:
    with pytest.raises(ConfigError, match="round must be a step > 0"):
        ColumnSchema("x", "continuous", round=0)
    with pytest.raises(ConfigError, match="log, round and clip are options of continuous"):
        ColumnSchema("x", "categorical", levels=("a",), log=True)
    with pytest.raises(ConfigError, match="a negative lower bound -1"):
        ColumnSchema("x", "continuous", bounds=(-1, 5), log=True)
    edited = {"name": "x", "kind": "integer", "log": "yes"}
    with pytest.raises(ConfigError, match="log must be true or false"):
        ColumnSchema.from_dict(edited, "columns entry 1")


# --- YAML -----------------------------------------------------------------------------------


def test_yaml_round_trip() -> None:
    for schema in (infer_schema(_frame(), label="label"), creditcard_schema()):
        assert TableSchema.from_yaml(schema.to_yaml()) == schema


def test_an_edited_yaml_is_read_as_the_user_meant(tmp_path: Path) -> None:
    text = infer_schema(_frame(), label="label").to_yaml()
    # Unquoted Yes/No stay text (YAML 1.1 would make them booleans); a column deleted is dropped.
    edited = text.replace("levels: [Lyon, Nice, Paris]", "levels: [Lyon, Nice, Paris, No]")
    edited = edited.replace("kind: integer\n  bounds: [1, 7]", "kind: continuous\n  bounds: [0, 9]")
    path = tmp_path / "schema.yaml"
    path.write_text(edited)
    schema = TableSchema.load(path)
    assert schema.column("city").levels == ("Lyon", "Nice", "Paris", "No")
    assert schema.column("gappy").kind == "continuous"
    assert schema.column("gappy").bounds == (0, 9)
    frame = _frame().drop(columns=[]).assign(extra_id=range(40))
    matched, dropped = match_table(frame, schema, source="t.csv")
    assert dropped == ["extra_id"] and list(matched.columns) == list(schema.names)


_GOOD = """
label: y
positive: 1
columns:
- {name: x, kind: continuous, bounds: [0, 1]}
- {name: y, kind: categorical, levels: [0, 1]}
"""


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (("continuous, bounds", "continous, bounds"), "unknown kind 'continous'; did you mean "),
        (("bounds: [0, 1]", "bounds: [1, 0]"), "bounds are reversed (1 > 0); write [min, max]"),
        (("bounds: [0, 1]", "bounds: [0, .inf]"), "bound inf is not a finite number"),
        (("bounds: [0, 1]", "bounds: [a, 1]"), "bound 'a' is not a number"),
        (("bounds: [0, 1]", "bounds: [0]"), "bounds must be [min, max], got [0]"),
        (("levels: [0, 1]", "levels: []"), "is categorical but lists no levels"),
        ((", levels: [0, 1]", ""), "is categorical but lists no levels"),
        (("levels: [0, 1]", "levels: [0, 1, 1]"), "lists level(s) 1 more than once"),
        (("label: y", "label: yy"), "label 'yy' is not one of the columns; did you mean 'y'?"),
        (("positive: 1", "positive: 2"), "positive value 2 is not among the levels of 'y' (0, 1)"),
        (("positive: 1", ""), "the schema has no positive:"),
        (("label: y", "labels: y"), "unknown key 'labels'; did you mean 'label'?"),
        (
            ("kind: continuous, bounds", "kind: continuous, missing: 2, nullable: false, bounds"),
            "has 2 missing value(s) but nullable: false",
        ),
        (("kind: continuous, bounds", "kind: continuous, missing: -1, bounds"), "count >= 0"),
        (("kind: continuous, bounds", "kind: continuous, levels: [a], bounds"), "has levels"),
        (("{name: x,", "{"), "columns entry 1 has no name"),
        (("name: x", "name: y"), "column(s) y appear more than once"),
        (("positive: 1", "positive: 1\nversion: 3"), "version 3 is not supported"),
        (("columns:", "columns: {"), "is not valid YAML (line"),
        (("kind: categorical, levels: [0, 1]", "kind: integer"), "label column 'y' is integer;"),
    ],
)
def test_a_bad_edit_is_one_line(edit: tuple[str, str], expected: str) -> None:
    text = _GOOD.replace(*edit)
    with pytest.raises(ConfigError) as err:
        TableSchema.from_yaml(text, source="schema.yaml")
    line = _one_line(err)
    assert line.startswith("schema.yaml")
    assert expected in line


def test_the_good_edit_loads() -> None:
    schema = TableSchema.from_yaml(_GOOD)
    assert schema.positive == 1 and schema.column("x").bounds == (0, 1)


def test_a_missing_schema_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="schema file not found: .*; check data.schema"):
        TableSchema.load(tmp_path / "nope.yaml")


def test_an_integer_column_with_a_fractional_bound_is_refused() -> None:
    with pytest.raises(ConfigError, match="is integer but its bound 2.5 is not"):
        ColumnSchema(name="n", kind="integer", bounds=(0, 2.5))


# --- bad tables -----------------------------------------------------------------------------


def _labelled(**columns: list) -> pd.DataFrame:
    n = len(next(iter(columns.values())))
    return pd.DataFrame({**columns, "y": [0] * (n - 2) + [1] * 2})


@pytest.mark.parametrize(
    ("frame", "label", "positive", "expected"),
    [
        (
            _labelled(x=[1.0] * 6),
            "Y",
            None,
            "label column 'Y' is not in the table; did you mean 'y'",
        ),
        (
            _labelled(x=[1.0] * 6),
            "Class",
            None,
            "is not in the table; the columns are x, y. Set data.label=<column>",
        ),
        (pd.DataFrame({"x": [1.0, 2, 3], "y": ["a", "b", "c"]}), "y", None, "has 3 values (a: 1"),
        (pd.DataFrame({"x": [1.0, 2], "y": ["a", "b"]}), "y", None, "both values equally often"),
        (pd.DataFrame({"x": [1.0, 2], "y": ["a", "a"]}), "y", None, "has one value (a)"),
        (
            _labelled(x=[1.0] * 6),
            "y",
            "2",
            "data.positive=2 is not a value of label y (0: 4, 1: 2)",
        ),
        (pd.DataFrame({"x": [1.0, 2, 3], "y": ["a", None, "b"]}), "y", "a", "1 missing value(s)"),
        (_labelled(x=[1.0, np.inf, 1, 1, 1, 1]), "y", None, "column x has 1 infinite value(s)"),
        (_labelled(x=[1.0, 1, 1e30, 1, 1, 1]), "y", None, "larger than 1e+15 in magnitude"),
        (_labelled(x=[None] * 6), "y", None, "column x is empty (all 6 cells missing); drop it"),
        (
            _labelled(x=["1"] * 29 + ["12,50 EUR"]),
            "y",
            None,
            "column x has 1 non-numeric value(s) among numbers (first at data row 30: '12,50 EUR')",
        ),
    ],
)
def test_a_bad_table_is_one_line(frame, label, positive, expected) -> None:
    with pytest.raises(DataError) as err:
        infer_schema(frame, label=label, positive=positive, source="t.csv")
    line = _one_line(err)
    assert line.startswith("t.csv: ")
    assert expected in line


def test_columns_to_review_get_one_line_each() -> None:
    n = 6000  # each of postcode's 1100 levels held by at least 5 rows: none is merged
    frame = pd.DataFrame(
        {
            "customer_id": np.arange(n),
            "country": ["ES"] * n,
            "postcode": [f"P{i % 1100}" for i in range(n)],
            "amount": np.linspace(0, 1, n),  # all distinct but continuous: a measurement
            "y": [0] * (n - 50) + [1] * 50,
        }
    )
    schema = infer_schema(frame, label="y")
    lines = ambiguities(frame, schema, source="t.csv")
    assert len(lines) == 3
    assert lines[0].startswith("t.csv: column customer_id looks like an ID")
    assert "drop it, or mark it a feature" in lines[0]
    assert lines[1].startswith("t.csv: column country has one value (ES) in all 6000")
    assert lines[2].startswith(
        f"t.csv: column postcode is categorical with 1100 levels (more than {MAX_LEVELS})"
    )
    with pytest.raises(DataError) as err:
        require_unambiguous(frame, schema, source="t.csv")
    assert _one_line(err).endswith("(2 more column(s) to review)")


def test_a_table_checked_against_an_edited_schema() -> None:
    schema = TableSchema.from_yaml(_GOOD)
    good = pd.DataFrame({"x": [0.5, 0.2], "y": [0, 1]})
    assert match_table(good, schema)[1] == []
    cases = [
        (pd.DataFrame({"y": [0, 1]}), "column(s) x of the schema are not in the table"),
        (pd.DataFrame({"x": [0.5, None], "y": [0, 1]}), "but the schema says nullable: false"),
        (pd.DataFrame({"x": [0.5, 1], "y": [0, 2]}), "1 value(s) outside its levels (e.g. 2)"),
        (pd.DataFrame({"x": ["a", "0.1"], "y": [0, 1]}), "x has 1 non-numeric value(s)"),
        (pd.DataFrame({"x": [0.5, 1], "y": [0, 0]}), "no row has y = 1, the class to synthesize"),
    ]
    for frame, expected in cases:
        with pytest.raises(DataError) as err:
            match_table(frame, schema, source="t.csv")
        assert expected in _one_line(err)


# --- the shared tables (their README states kinds, levels and missing counts) ---------------


def _shared(name: str) -> Path:
    path = TABLES / name
    if not path.exists():
        pytest.skip(f"shared table not found at {path} (../shared/data/tables beside the repo)")
    return path


def test_the_default_table() -> None:
    schema = infer_schema(pd.read_csv(_shared("default_islr.csv.gz")), label="default")
    assert schema.positive == "Yes" and dict(schema.label_counts) == {"No": 9667, "Yes": 333}
    assert schema.column("student").levels == ("No", "Yes")
    assert schema.column("balance").kind == schema.column("income").kind == "continuous"
    assert all(column.missing == 0 for column in schema.columns)
    assert TableSchema.from_yaml(schema.to_yaml()) == schema


def test_the_credit_data_table() -> None:
    frame = pd.read_csv(_shared("credit_data_modeldata.csv.gz"))
    schema = infer_schema(frame, label="Status")
    assert schema.rows == 4454 and schema.positive == "bad"
    assert dict(schema.label_counts)["bad"] == 1254
    levels = {c.name: len(c.levels or ()) for c in schema.columns if c.kind == "categorical"}
    assert levels == {"Status": 2, "Home": 6, "Marital": 5, "Records": 2, "Job": 4}
    missing = {c.name: c.missing for c in schema.columns if c.missing}
    assert missing == {"Home": 6, "Marital": 1, "Job": 2, "Income": 381, "Assets": 47, "Debt": 18}
    integers = {"Seniority", "Time", "Age", "Expenses", "Amount", "Price"}
    assert integers <= {c.name for c in schema.columns if c.kind == "integer"}
    # Income, Assets and Debt are stored as floats (they have gaps) but every value is whole.
    assert {schema.column(n).kind for n in ("Income", "Assets", "Debt")} == {"integer"}
    assert ambiguities(frame, schema) == []
    assert TableSchema.from_yaml(schema.to_yaml()) == schema
