"""``python -m wgangp.schema``: the inferred YAML on stdout, an edited file checked and printed
back, and each mistake one line on stderr with exit code 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from support.configs import REPO
from support.tables import loans_features, loans_table, write_table

from wgangp.data.schema.inference import infer_schema
from wgangp.data.schema.table_schema import TableSchema
from wgangp.schema import main, parse_args

TABLES = REPO.parent / "shared" / "data" / "tables"


@pytest.fixture
def table(tmp_path: Path) -> Path:
    n = 40
    frame = pd.DataFrame(
        {
            "score": [i / 7 for i in range(n)],
            "branch": ["north", "south", None, "east"] * (n // 4),
            "label": ["ok"] * (n - 5) + ["bad"] * 5,
        }
    )
    path = tmp_path / "loans.csv.gz"
    frame.to_csv(path, index=False)
    return path


def test_prints_the_inferred_schema(table: Path, capsys: pytest.CaptureFixture) -> None:
    assert main([f"data.path={table}", "data.label=label"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# written by: python -m wgangp.schema data.path=")
    assert "data.schema=<this file>" in out
    schema = TableSchema.from_yaml(out)
    assert schema.positive == "bad" and dict(schema.label_counts) == {"bad": 5, "ok": 35}
    assert schema.column("branch").missing == 10


def test_columns_to_review_are_listed(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "t.parquet"
    pd.DataFrame({"id": range(30), "x": [0.5] * 30, "y": [0] * 25 + [1] * 5}).to_parquet(path)
    assert main([f"data.path={path}", "data.label=y"]) == 0
    captured = capsys.readouterr()
    assert captured.out.count("# review: ") == 2
    assert "wgangp: review: " + f"{path}: column id looks like an ID" in captured.err
    assert f"{path}: column x has one value (0.5)" in captured.err


def test_an_edited_schema_is_checked_and_printed(
    table: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    assert main([f"data.path={table}", "data.label=label"]) == 0
    edited = capsys.readouterr().out.replace("levels: [east, north, south]", "levels: [east]")
    schema_file = tmp_path / "schema.yaml"
    schema_file.write_text(edited)
    assert main([f"data.schema={schema_file}"]) == 0  # the file alone: valid
    assert TableSchema.from_yaml(capsys.readouterr().out).column("branch").levels == ("east",)
    assert main([f"data.path={table}", f"data.schema={schema_file}"]) == 2  # not this table
    err = capsys.readouterr().err.strip()
    assert err == (
        f"wgangp: error: {table}: column branch has 20 value(s) outside its levels (e.g. north, "
        "south); add them to its levels in data.schema, or fix those rows"
    )
    assert main([f"data.schema={schema_file}", "data.positive=ok"]) == 0
    assert TableSchema.from_yaml(capsys.readouterr().out).positive == "ok"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["data.pth=x.csv"], "unknown argument 'data.pth' in 'data.pth=x.csv'; did you mean"),
        (["x.csv"], "argument 'x.csv' is not key=value; usage: python -m wgangp.schema"),
        ([], "missing data.path=...; usage:"),
        (["data.path=x.csv", "data.schema=s.json"], "data.schema: 's.json' is not a .yaml file"),
        (["data.path=x.csv", "data.label= "], "invalid config value data.label: must name"),
        (["data.path=x.csv", "debug=yes"], "debug must be true or false"),
    ],
)
def test_bad_arguments_are_one_line(args: list[str], expected: str) -> None:
    from wgangp.errors import ConfigError

    with pytest.raises(ConfigError) as err:
        parse_args(args)
    assert expected in str(err.value) and "\n" not in str(err.value)


def test_the_command_fails_in_one_line(tmp_path: Path, table: Path) -> None:
    schema_file = tmp_path / "s.yaml"
    schema_file.write_text("label: y\ncolumns: [{name: y, kind: categorical}]\n")
    cases = [
        ([f"data.path={tmp_path / 'none.csv'}"], "none.csv: no such file or folder ("),
        ([f"data.path={table}", "data.label=Label"], "did you mean 'label'? Set data.label"),
        ([f"data.path={table}", "data.positive=maybe"], "data.positive=maybe is not a value"),
        ([f"data.schema={schema_file}"], "is categorical but lists no levels"),
        ([f"data.schema={tmp_path / 'no.yaml'}"], "schema file not found: "),
    ]
    for args, expected in cases:
        if args[0].startswith("data.path") and "label" not in " ".join(args):
            args = [*args, "data.label=label"]
        proc = subprocess.run(
            [sys.executable, "-m", "wgangp.schema", *args],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=120,
        )
        assert proc.returncode == 2, proc.stderr
        assert proc.stdout == ""
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("wgangp: error: "), proc.stderr
        assert expected in lines[0]


def test_the_shared_credit_table(capsys: pytest.CaptureFixture) -> None:
    path = TABLES / "credit_data_modeldata.csv.gz"
    if not path.exists():
        pytest.skip(f"shared table not found at {path} (../shared/data/tables beside the repo)")
    assert main([f"data.path={path}", "data.label=Status", "data.positive=bad"]) == 0
    captured = capsys.readouterr()
    assert "# review:" not in captured.out
    schema = TableSchema.from_yaml(captured.out)
    assert schema.column("Home").levels == ("ignore", "other", "owner", "parents", "priv", "rent")


def test_a_folder_over_the_cap_is_read_as_training_reads_it(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """Every rare row and data.max_rows of the rest: the counts are the kept rows', the class to
    synthesize the whole table's."""
    folder = tmp_path / "loans"
    folder.mkdir()
    for part in range(2):
        n = 300
        pd.DataFrame(
            {
                "score": [(i + part * n) / 7 for i in range(n)],
                "label": ["ok"] * (n - 20) + ["bad"] * 20,
            }
        ).to_parquet(folder / f"part-{part}.parquet")
    assert main([f"data.path={folder}", "data.label=label", "data.max_rows=100"]) == 0
    schema = TableSchema.from_yaml(capsys.readouterr().out)
    assert schema.positive == "bad" and dict(schema.label_counts) == {"bad": 40, "ok": 100}


def test_it_prints_the_schema_training_uses_for_kaggles_file(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kaggle's schema where the config names it (data.schema=creditcard, the default path),
    as training reads it; a path the user names without it is inferred, as training infers it."""
    from support.creditcard import SCHEMA

    from wgangp.data.builtin.simulated import simulate_creditcard

    (tmp_path / "data").mkdir()
    simulate_creditcard(n_rows=400, fraud_rate=0.05, seed=1).to_csv(
        tmp_path / "data" / "creditcard.csv", index=False
    )
    monkeypatch.chdir(tmp_path)
    printed = {}
    for args in (["data.schema=creditcard"], [], ["data.label=Class"]):
        assert main(["data.path=data/creditcard.csv", *args]) == 0
        printed[tuple(args)] = TableSchema.from_yaml(capsys.readouterr().out)
    assert printed[("data.schema=creditcard",)].columns == SCHEMA.columns
    assert printed[()].columns == SCHEMA.columns  # the default path: Kaggle's
    assert printed[("data.label=Class",)].columns == SCHEMA.columns
    (tmp_path / "data" / "creditcard.csv").rename(tmp_path / "kaggle.csv")
    assert main(["data.path=kaggle.csv"]) == 0  # named elsewhere: a table like any other
    inferred = TableSchema.from_yaml(capsys.readouterr().out)
    assert inferred.columns != SCHEMA.columns and inferred.names == SCHEMA.names


def test_the_schema_check_prints_the_tables_label_counts(tmp_path: Path, capsys, caplog) -> None:
    frame = loans_features(loans_table(), "Age")
    path = write_table(frame, tmp_path)
    schema = infer_schema(frame, "Status", source=str(path))
    counts = frame["Status"].value_counts()
    raw = schema.to_dict()
    raw["label_counts"] = {"bad": 5, "good": 7}  # edited, or from another table
    raw["rows"] = 12
    edited = tmp_path / "schema.yaml"
    edited.write_text(TableSchema.from_dict(raw).to_yaml())
    caplog.set_level("INFO", logger="wgangp.schema")
    assert main([f"data.path={path}", f"data.schema={edited}"]) == 0
    printed = TableSchema.from_yaml(capsys.readouterr().out)
    assert dict(printed.label_counts) == {"bad": counts["bad"], "good": counts["good"]}
    assert printed.rows == len(frame)
    assert f"label Status (bad: {counts['bad']}, good: {counts['good']})" in caplog.text
    caplog.clear()
    assert main([f"data.schema={edited}"]) == 0  # the file alone: its own counts, said so
    assert "as the schema file gives them: bad: 5, good: 7" in caplog.text


def test_it_prints_the_schema_prepare_data_gives(tmp_path: Path, capsys, monkeypatch) -> None:
    """One pipeline: the command prints the schema training's ``prepare_data`` gives the same
    table (over the cap too, where the reader picks the class to synthesize), inferred or
    edited, with the table's own counts."""
    from wgangp.config import DataConfig
    from wgangp.data.prepare import prepare_data

    frame = loans_features(loans_table(), "Age")
    path = write_table(frame, tmp_path)
    monkeypatch.chdir(tmp_path)
    edited = tmp_path / "schema.yaml"
    edited.write_text(infer_schema(frame, "Status", source=str(path)).to_yaml())
    for extra in ({}, {"schema": str(edited)}, {"max_rows": 100}):
        args = [f"data.{key}={value}" for key, value in extra.items()]
        assert main([f"data.path={path.name}", "data.label=Status", *args]) == 0
        printed = TableSchema.from_yaml(capsys.readouterr().out)
        data = DataConfig(path=path.name, label="Status", **extra)
        trained = prepare_data(data, seed=0, launch_dir=tmp_path).schema
        assert printed == trained, extra
