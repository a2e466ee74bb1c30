"""A table of any size: a file, a folder or a glob of Parquet/CSV files, read in bounded memory
(every rare-class row, at most data.max_rows of the rest), each problem of the files one line."""

from __future__ import annotations

import gzip
import logging
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support.creditcard import LABEL, SCHEMA
from support.tables import fraud_team_table

from wgangp.config import DataConfig
from wgangp.data.builtin.simulated import simulate_creditcard
from wgangp.data.prepare import prepare_data
from wgangp.data.read.big_tables import TableFiles, cap_rows, read_big_table, table_files
from wgangp.data.read.source import load_table
from wgangp.data.read.table_reader import TABLE, read_table
from wgangp.errors import ConfigError, DataError
from wgangp.training.run_record import read_tags


def _cards(rows: int, seed: int) -> pd.DataFrame:
    return simulate_creditcard(n_rows=rows, fraud_rate=0.02, seed=seed)


def _parquet_folder(folder: Path, parts: int = 3, rows: int = 1000) -> pd.DataFrame:
    """``parts`` Parquet files of simulated rows; the table they make, in file order."""
    folder.mkdir()
    frames = [_cards(rows, seed) for seed in range(parts)]
    for i, frame in enumerate(frames):
        frame.to_parquet(folder / f"part-{i}.parquet", index=False)
    (folder / "_SUCCESS").write_text("")  # what Spark leaves beside its files: not a table file
    return pd.concat(frames, ignore_index=True)


def _load(path: str, tmp_path: Path, seed: int = 0, **data):
    return load_table(
        DataConfig(path=path, fallback="error", **data), seed=seed, launch_dir=tmp_path
    )


def test_a_folder_over_the_cap_keeps_every_rare_row_and_a_sample_of_the_rest(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    whole = _parquet_folder(tmp_path / "tx")
    rare, rest = int(whole[LABEL].sum()), int((whole[LABEL] == 0).sum())
    loaded = _load("tx", tmp_path, max_rows=500, schema="creditcard")
    kept = loaded.frame
    assert loaded.schema == SCHEMA and loaded.name == "tx" and loaded.origin == str(tmp_path / "tx")
    assert int(kept[LABEL].sum()) == rare and int((kept[LABEL] == 0).sum()) == 500
    # Kept rows are rows of the table, as they were, in the files' order.
    merged = kept.merge(whole.reset_index(), how="left", on=list(whole.columns))
    assert merged["index"].notna().all() and merged["index"].is_monotonic_increasing
    read = loaded.read
    assert (read.files, read.rows, read.rare, read.kept, read.kept_rare) == (
        3, len(whole), rare, 500 + rare, rare
    )  # fmt: skip
    assert read.capped and read_tags(read)["data.read.rows"] == str(len(whole))
    with caplog.at_level(logging.INFO, logger="wgangp.data"):
        prepare_data(
            DataConfig(path="tx", max_rows=500, schema="creditcard"), seed=0, launch_dir=tmp_path
        )
    line = next(r.getMessage() for r in caplog.records if "data: read" in r.getMessage())
    assert f"{len(whole)} rows ({rare} with Class=1) in 3 files" in line
    assert f"kept every row with Class=1 and a uniform subset of 500 of the {rest} others" in line


def test_the_sample_is_the_seeds_whatever_the_files_order(tmp_path: Path) -> None:
    _parquet_folder(tmp_path / "tx")
    first = _load("tx", tmp_path, max_rows=400).frame
    pd.testing.assert_frame_equal(first, _load("tx/*.parquet", tmp_path, max_rows=400).frame)
    other = _load("tx", tmp_path, seed=1, max_rows=400).frame
    assert not first.equals(other) and len(other) == len(first)
    for i, path in enumerate(sorted((tmp_path / "tx").glob("*.parquet"))):  # renamed: reordered
        path.rename(tmp_path / "tx" / f"z{9 - i}.parquet")
    again = _load("tx", tmp_path, max_rows=400).frame
    columns = list(first.columns)
    pd.testing.assert_frame_equal(
        first.sort_values(columns).reset_index(drop=True),
        again.sort_values(columns).reset_index(drop=True),
    )


def test_a_folder_within_the_cap_is_read_whole_in_file_order(tmp_path: Path) -> None:
    whole = _parquet_folder(tmp_path / "tx", parts=2, rows=300)
    loaded = _load("tx", tmp_path)
    pd.testing.assert_frame_equal(loaded.frame, whole, check_dtype=False)
    assert not loaded.read.capped and loaded.read.kept == len(whole)


def test_a_csv_over_the_cap_keeps_its_cells_as_written(tmp_path: Path) -> None:
    """A user's table (text labels, dates, gaps), one gzipped CSV and a glob of plain ones: the
    kept rows are parsed as a small file's are, and the schema still names the rare class."""
    frame = fraud_team_table(rows=3000, frauds=200)
    frame["day"] = pd.to_datetime(frame["day"]).dt.strftime("%d/%m/%Y")  # a format to keep
    path = tmp_path / "tx.csv.gz"
    path.write_bytes(gzip.compress(frame.to_csv(index=False).encode()))
    (tmp_path / "many").mkdir()
    for i, start in enumerate(range(0, 3000, 1000)):
        frame.iloc[start : start + 1000].to_csv(tmp_path / "many" / f"tx-{i}.csv", index=False)
    for given in (str(path), "many/tx-*.csv"):
        loaded = _load(given, tmp_path, max_rows=300, label="is_fraud")
        kept = loaded.frame
        assert (kept["is_fraud"] == "yes").sum() == 200 and (kept["is_fraud"] == "no").sum() == 300
        assert loaded.positive == "yes"
        whole = read_table(path, TABLE)
        rows = kept.merge(whole, how="left", on=list(whole.columns), indicator=True)
        assert (rows["_merge"] == "both").all()  # every kept row is a row of the file, as read
        assert kept["day"].str.match(r"\d\d/\d\d/2024").all()


def test_the_rare_class_is_counted_before_the_sample(tmp_path: Path) -> None:
    """400 rows of 'b' against 1,000 of 'a', both over a cap of 300: each class keeps 300, a tie
    in the sample; the schema still synthesizes 'b', the table's rarer class."""
    rows = np.arange(1400)
    frame = pd.DataFrame({"x": rows % 50 / 7, "z": rows % 53, "y": ["a"] * 1000 + ["b"] * 400})
    frame.to_parquet(tmp_path / "t.parquet", index=False)
    data = prepare_data(
        DataConfig(path="t.parquet", label="y", max_rows=300), seed=0, launch_dir=tmp_path
    )
    assert data.schema.positive == "b" and data.read.kept_rare == 300
    assert int(data.classes(pd.concat([data.train, data.val, data.test])).sum()) == 300


def test_a_small_file_is_read_as_before(tmp_path: Path) -> None:
    frame = _cards(2000, 0)
    frame.to_csv(tmp_path / "cc.csv", index=False)
    loaded = _load("cc.csv", tmp_path)
    pd.testing.assert_frame_equal(loaded.frame, read_table(tmp_path / "cc.csv", TABLE))
    assert not loaded.read.capped and loaded.positive is None


def test_a_zip_over_the_cap_is_capped_in_memory(tmp_path: Path) -> None:
    """DuckDB reads no zip: pandas reads it whole, and the same rule keeps its rows."""
    frame = _cards(2000, 0)
    read = cap_rows(frame, LABEL, 1, 500, seed=0, files=1)
    assert read.read.capped and read.read.kept == 500 + int(frame[LABEL].sum())
    assert int(read.frame[LABEL].sum()) == int(frame[LABEL].sum())
    assert cap_rows(frame, LABEL, 1, 5000, seed=0, files=1).frame is frame  # under: no copy


@pytest.mark.parametrize(
    ("layout", "given", "expected"),
    [
        ({}, "none/*.parquet", "no Parquet or CSV file matches data.path="),
        ({"notes.txt": "x"}, "d", "is a folder without Parquet or CSV files"),
        ({"a.parquet": None, "b.csv": "Time\n1\n"}, "d", "holds both Parquet and CSV files"),
        ({"a.parquet": None, "b.parquet": b""}, "d", "b.parquet is empty (0 bytes, no rows)"),
        ({"a.parquet": None, "b.parquet": "drop"}, "d", "its columns differ from those of"),
        ({"a.parquet": None, "b.parquet": "rename"}, "d", "(missing V3; extra v3)"),
    ],
    ids=["no match", "no table file", "two formats", "empty file", "a column less", "renamed"],
)
def test_each_problem_of_a_folder_is_one_line(
    tmp_path: Path, layout: dict, given: str, expected: str
) -> None:
    folder = tmp_path / "d"
    folder.mkdir()
    frame = _cards(200, 0)
    for name, content in layout.items():
        path = folder / name
        if content is None:
            frame.to_parquet(path, index=False)
        elif content == "drop":
            frame.drop(columns=["V3"]).to_parquet(path, index=False)
        elif content == "rename":
            frame.rename(columns={"V3": "v3"}).to_parquet(path, index=False)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    with pytest.raises(DataError) as err:
        _load(given, tmp_path)
    message = str(err.value)
    assert expected in message and "\n" not in message and "; " in message


def test_a_folder_without_the_label_names_a_close_column(tmp_path: Path) -> None:
    _parquet_folder(tmp_path / "tx", parts=2, rows=200)
    with pytest.raises(DataError, match=r"label column 'class' is not in the table; did you"):
        _load("tx", tmp_path, label="class")


def test_unreadable_files_of_a_folder_are_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "d"
    folder.mkdir()
    _cards(200, 0).to_parquet(folder / "a.parquet", index=False)
    (folder / "b.parquet").write_bytes((folder / "a.parquet").read_bytes()[:300])
    with pytest.raises(DataError, match="b.parquet") as err:
        _load("d", tmp_path)
    assert "\n" not in str(err.value)


def test_files_of_one_pattern_have_one_format(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("x,y\n1,0\n")
    assert table_files(str(tmp_path / "*.csv")) == TableFiles(
        str(tmp_path / "*.csv"), (str(tmp_path / "a.csv"),), parquet=False
    )


@pytest.mark.parametrize("key", ["max_rows", "rest_subset", "rare_subset"])
def test_the_caps_are_checked_in_one_line(key: str) -> None:
    with pytest.raises(ConfigError, match=rf"invalid config value data.{key}: 5 must be >= "):
        DataConfig(**{key: 5})


def test_a_single_file_duckdb_cannot_read_goes_to_pandas(tmp_path: Path) -> None:
    """A semicolon-separated file over the cap: DuckDB, told commas, finds no label; pandas
    says what the file is."""
    path = tmp_path / "cards.csv"
    _cards(3000, 0).to_csv(path, index=False, sep=";")
    with pytest.raises(DataError, match="looks semicolon-separated"):
        read_big_table(
            table_files(str(path)), TABLE, label="Class", positive=1, max_rows=100, seed=0
        )


def test_an_object_store_url_goes_to_duckdb_as_it_is() -> None:
    """s3:// and gs:// paths are DuckDB's (httpfs); only their listing and reading need the
    network, so here only what wgangp makes of the path."""
    files = table_files("s3://bank-data/transactions/2024.parquet")
    assert files.files == ("s3://bank-data/transactions/2024.parquet",) and files.parquet
    assert files.name == "2024" and not files.one_local_file
    assert table_files("gs://bank-data/tx.csv.gz").parquet is False
