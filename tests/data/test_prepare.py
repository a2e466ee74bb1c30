"""Every table as the frames a run works on (prepare_data): which files get Kaggle's shipped schema,
the label's own values and the rare class beside them, each kind in its canonical type, and each
mistake in one line."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support.configs import SHARED_TABLES, real_sample_path, shared_table
from support.creditcard import COLUMNS, SCHEMA
from support.docs import documented
from support.tables import fraud_team_table, write_fraud_team_table

from wgangp.config import CREDITCARD_PATH, DataConfig
from wgangp.data.prepare import prepare_data
from wgangp.data.read.source import load_table
from wgangp.data.schema.inference import infer_schema
from wgangp.errors import DataError
from wgangp.serving.labels import LabelError, label_class, label_value


def _data(path: Path, **kwargs) -> DataConfig:
    return DataConfig(path=str(path), fallback="error", **kwargs)


def _shipped(data: DataConfig, launch_dir: Path) -> bool:
    """Whether the table ``data`` names is read through Kaggle's shipped schema."""
    return load_table(data, seed=0, launch_dir=launch_dir).schema == SCHEMA


def test_which_files_get_kaggles_schema(tmp_path: Path) -> None:
    """Configured, never recognised by the header: the default path, data.schema=creditcard, the
    download and the simulated rows; any path the user names is their own table."""
    kaggle = tmp_path / "creditcard.csv"
    pd.DataFrame(np.zeros((3, len(COLUMNS))), columns=list(COLUMNS)).to_csv(kaggle, index=False)
    (tmp_path / "data").mkdir()
    kaggle.rename(tmp_path / CREDITCARD_PATH)
    kaggle = tmp_path / CREDITCARD_PATH
    assert _shipped(DataConfig(fallback="error"), tmp_path)  # the default path
    assert not _shipped(_data(kaggle), tmp_path)  # named: a table like any other
    assert _shipped(_data(kaggle, schema="creditcard"), tmp_path)
    assert _shipped(DataConfig(name="simulated", simulated_rows=200), tmp_path)
    with pytest.raises(DataError, match="but the shipped schema creditcard names label Class"):
        _shipped(_data(kaggle, schema="creditcard", label="V1"), tmp_path)


def test_a_path_the_user_names_that_is_absent_is_one_line(tmp_path: Path) -> None:
    """A typo is refused, whatever data.fallback says: never simulated rows in its place."""
    write_fraud_team_table(tmp_path)
    typo = tmp_path / "transactons.csv"
    with pytest.raises(DataError) as err:
        load_table(DataConfig(path=str(typo)), seed=0, launch_dir=tmp_path)
    line = str(err.value)
    assert line == (
        f"data.path={typo}: no such file or folder ({typo}) (did you mean transactions.csv?); "
        "check the path (the simulated fallback is for the default data/creditcard.csv only)"
    )
    documented(line, path=typo)


def test_a_symbolic_link_that_loops_or_leads_nowhere_is_one_line(tmp_path: Path) -> None:
    """Not "no such file (did you mean loop.csv?)": the link is there, its target is not."""
    write_fraud_team_table(tmp_path)
    loop, dangling = tmp_path / "loop.csv", tmp_path / "old.csv"
    loop.symlink_to(loop)
    dangling.symlink_to(tmp_path / "moved.csv")
    fix = "point the link at the table's file, or set data.path to the file itself"
    for path, expected in (
        (loop, f"data.path={loop}: {loop} is a symbolic link that leads back to itself (a loop); "),
        (dangling, f"data.path={dangling}: {dangling} is a symbolic link to "
         f"{tmp_path / 'moved.csv'}, which does not exist; "),
    ):  # fmt: skip
        with pytest.raises(DataError) as err:
            load_table(DataConfig(path=str(path)), seed=0, launch_dir=tmp_path)
        assert str(err.value) == expected + fix
        documented(str(err.value), target=tmp_path / "moved.csv", path=path)


def test_a_users_table_becomes_features_and_the_rare_class(tmp_path: Path) -> None:
    frame = fraud_team_table()
    path = write_fraud_team_table(tmp_path)
    data = prepare_data(_data(path, label="is_fraud"), seed=0, launch_dir=tmp_path)
    assert data.provenance == "file" and data.inferred and data.name == "transactions"
    assert data.features == ["merchant", "count", "amount", "day"]
    rows = pd.concat([data.train, data.val, data.test])
    assert list(rows.columns) == [*data.features, "is_fraud"]  # the label keeps its values
    assert set(rows["is_fraud"]) == {"yes", "no"}
    assert int(data.classes(rows).sum()) == int((frame["is_fraud"] == "yes").sum())
    assert set(rows["merchant"].dropna()) <= {"grocery", "travel", "online"}
    assert rows["merchant"].isna().sum() == frame["merchant"].isna().sum()
    assert pd.api.types.is_integer_dtype(rows["count"])
    assert pd.api.types.is_datetime64_any_dtype(rows["day"])
    assert rows["amount"].isna().sum() == frame["amount"].isna().sum()
    assert "rows (" in data.describe() and "with is_fraud=yes" in data.describe()


def test_an_edited_schema_drops_columns_and_sets_the_class(tmp_path: Path) -> None:
    path = write_fraud_team_table(tmp_path)
    schema = infer_schema(pd.read_csv(path), label="is_fraud")
    edited = schema.to_dict()
    edited["columns"] = [c for c in edited["columns"] if c["name"] != "day"]
    schema_file = tmp_path / "schema.yaml"
    schema_file.write_text(type(schema).from_dict(edited).to_yaml())
    data = prepare_data(
        _data(path, schema=str(schema_file), positive="no"), seed=0, launch_dir=tmp_path
    )
    assert data.features == ["merchant", "count", "amount"]
    assert data.schema.positive == "no" and not data.inferred
    assert int(data.classes(pd.concat([data.train, data.val, data.test])).sum()) == 340


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda f: f.assign(serial=np.arange(len(f))), "column serial looks like an ID"),
        (lambda f: f.assign(amount=f["amount"].where(f.index != 7, np.inf)), "amount"),
    ],
    ids=["ID column", "inf"],
)
def test_a_table_it_cannot_train_on_is_one_line(tmp_path: Path, change, expected) -> None:
    path = tmp_path / "t.csv"
    change(fraud_team_table()).to_csv(path, index=False)
    with pytest.raises(DataError, match=re.escape(expected)) as info:
        prepare_data(_data(path, label="is_fraud"), seed=0, launch_dir=tmp_path)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("label", "feature"), [("Class", "count"), ("label", "Class"), ("y", "label")]
)
def test_no_column_name_collides_with_the_class(tmp_path: Path, label: str, feature: str) -> None:
    """A label named Class with text values, a feature named Class, a label named like any
    internal name: the class code lives apart from the columns."""
    table = fraud_team_table().rename(columns={"is_fraud": label, "count": feature})
    path = tmp_path / "t.csv"
    table.to_csv(path, index=False)
    data = prepare_data(_data(path, label=label), seed=0, launch_dir=tmp_path)
    rows = pd.concat([data.train, data.val, data.test])
    assert set(rows[label]) == {"yes", "no"} and feature in data.features
    assert int(data.classes(rows).sum()) == int((table[label] == "yes").sum())


def test_a_label_value_names_a_class_and_back() -> None:
    schema = infer_schema(fraud_team_table(), label="is_fraud")
    assert (label_class(schema, "yes"), label_class(schema, "no")) == (1, 0)
    assert (label_value(schema, 1), label_value(schema, 0)) == ("yes", "no")
    with pytest.raises(LabelError) as info:
        label_class(schema, "maybe")
    assert str(info.value) == "label=maybe is not a value of is_fraud; use one of: no, yes"
    three = fraud_team_table().assign(
        is_fraud=lambda f: np.where(f.index % 50 == 0, "x", f.is_fraud)
    )
    schema3 = infer_schema(three, label="is_fraud", positive="yes")
    assert label_class(schema3, "yes") == 1
    with pytest.raises(LabelError) as info:
        label_class(schema3, "no")
    assert str(info.value) == (
        "label is_fraud has 2 values besides yes (no, x); wgangp learns only yes against the "
        "rest, so it samples only label=yes"
    )


def test_the_creditcard_file_is_a_table_with_its_shipped_schema() -> None:
    path = real_sample_path()
    if not path.is_file():
        pytest.skip(f"real-rows sample not found at {path}")
    data = prepare_data(_data(path, schema="creditcard"), seed=0, launch_dir=path.parent)
    assert data.provenance == "file" and data.schema.columns == SCHEMA.columns and not data.inferred
    assert dict(data.schema.label_counts) == {0: 29_876, 1: 296}  # the table's own
    assert data.features == list(COLUMNS[:-1])
    assert data.name == "creditcard_real_sample"


@pytest.mark.parametrize("name", sorted(SHARED_TABLES))
def test_the_shared_tables_split_with_their_rare_class(name: str) -> None:
    path = shared_table(name)
    _, label, positive = SHARED_TABLES[name]
    data = prepare_data(_data(path, label=label), seed=0, launch_dir=path.parent)
    real = pd.read_csv(path)
    assert data.schema.positive == positive  # the least frequent value by default
    rows = pd.concat([data.train, data.val, data.test])
    rare = int(data.classes(rows).sum())
    assert len(rows) == len(real) and rare == int((real[label] == positive).sum())
    for part in (data.train, data.val, data.test):
        assert 0 < data.classes(part).sum() < len(part)


def test_a_label_the_schema_does_not_name_is_one_line(tmp_path: Path) -> None:
    path = write_fraud_team_table(tmp_path)
    (tmp_path / "schema.yaml").write_text(
        infer_schema(pd.read_csv(path), label="is_fraud").to_yaml()
    )
    data = _data(path, schema="schema.yaml", label="merchant")
    with pytest.raises(DataError) as info:
        prepare_data(data, seed=0, launch_dir=tmp_path)
    assert str(info.value) == (
        "data.label=merchant but schema.yaml names label is_fraud; drop data.label or edit "
        "label: in the schema"
    )


def test_quantile_columns_name_the_tables_own_number_columns() -> None:
    """Named columns must be numbers of the table (one line with a suggestion otherwise); the
    config takes any names, checked once the table is read."""
    from wgangp.config import Config, PreprocessConfig
    from wgangp.data.transform.table_transform import check_options
    from wgangp.errors import ConfigError

    table = infer_schema(fraud_team_table(), "is_fraud", source="test")
    check_options(table, "standard", ["amount", "count"])
    with pytest.raises(ConfigError) as info:  # docs/errors.md, word for word
        check_options(table, "standard", ["amout"])
    assert str(info.value) == (
        "invalid config value preprocess.quantile_columns: 'amout' is not a number column of "
        "the table; did you mean 'amount'?"
    )
    with pytest.raises(ConfigError, match=r"'merchant' is not a number .*its number"):
        check_options(table, "standard", ["merchant"])
    own = PreprocessConfig(quantile_columns=["amount"])
    assert Config(data=DataConfig(label="is_fraud"), preprocess=own).preprocess is own
    assert Config(preprocess=own).preprocess is own


def test_too_few_rows_of_a_class_name_the_label_not_kaggles_class(tmp_path: Path) -> None:
    """data.min_rows_per_class holds on a user's table, and the split's own minimum speaks of
    the label's value (docs/errors.md, word for word)."""
    table = fraud_team_table()
    path = tmp_path / "t.csv"
    table.to_csv(path, index=False)
    frauds = int((table["is_fraud"] == "yes").sum())
    with pytest.raises(DataError) as info:
        prepare_data(_data(path, label="is_fraud", min_rows_per_class=frauds + 1), seed=0,
                     launch_dir=tmp_path)  # fmt: skip
    assert str(info.value) == (
        f"{path}: only {frauds} row(s) with is_fraud=yes; at least {frauds + 1} are needed "
        "(data.min_rows_per_class): use a larger table"
    )
    few = pd.concat([table[table["is_fraud"] == "no"], table[table["is_fraud"] == "yes"][:3]])
    few.to_csv(path, index=False)
    with pytest.raises(DataError) as info:
        prepare_data(_data(path, label="is_fraud"), seed=0, launch_dir=tmp_path)
    assert str(info.value) == (
        f"{path}: only 3 distinct row(s) with is_fraud=yes; at least 4 are needed so that "
        "training gets 2 and validation and test one each: use a larger table"
    )
