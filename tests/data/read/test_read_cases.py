"""Reading a user's files as they come (issue 58): Parquet categories, nested, date and time
columns; files of one table typed differently; symlink loops; paths Hydra's grammar reads as
syntax, Hive partitions; SIGTERM while the files are scanned; label gaps past the cap; file://
URLs; one rule for the rows the cap keeps, whatever reads the file."""

from __future__ import annotations

import datetime as dt
import logging
import os
import signal
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from support.configs import QUICK, REPO, compose
from support.docs import documented

from wgangp.config import DataConfig, to_config
from wgangp.data.prepare import prepare_data
from wgangp.data.read.big_tables import cap_rows, read_big_table, table_files
from wgangp.data.read.source import load_table
from wgangp.data.read.table_reader import TABLE, read_table
from wgangp.errors import ConfigError, DataError
from wgangp.overrides import check_overrides
from wgangp.schema import main as schema_main

LABEL = "Status"


def _labels(rows: int, every: int = 10) -> np.ndarray:
    return np.where(np.arange(rows) % every == 0, "bad", "good")


def _amounts(rows: int, seed: int = 0) -> np.ndarray:
    return np.round(np.random.default_rng(seed).lognormal(3.0, 1.0, rows), 2)


def _load(path: Path | str, tmp_path: Path, seed: int = 0, **data):
    data.setdefault("label", LABEL)
    return load_table(DataConfig(path=str(path), **data), seed=seed, launch_dir=tmp_path)


def _prepare(path: Path | str, tmp_path: Path, **data):
    data.setdefault("label", LABEL)
    return prepare_data(DataConfig(path=str(path), **data), seed=0, launch_dir=tmp_path)


def _schema_cli(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, dict, str]:
    code = schema_main(list(args))
    out, err = capsys.readouterr()
    columns = {c["name"]: c for c in yaml.safe_load(out)["columns"]} if code == 0 else {}
    return code, columns, err


# -- 1. category and nested Parquet columns --------------------------------------------------


def _category_table(rows: int = 600) -> pd.DataFrame:
    """As pandas writes categories: a text category, one of a single level, a label whose
    categories list a value no row holds."""
    return pd.DataFrame(
        {
            "amount": _amounts(rows),
            "kind": pd.Categorical(np.where(np.arange(rows) % 3 == 0, "card", "cash")),
            "channel": pd.Categorical(["web"] * rows),
            LABEL: pd.Categorical(_labels(rows), categories=["bad", "good", "written off"]),
        }
    )


def test_parquet_category_columns_read_as_their_text_values(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    path = tmp_path / "loans.parquet"
    _category_table().to_parquet(path, index=False)
    frame = _category_table().drop(columns="channel")  # one level: nothing to train on
    frame.to_parquet(tmp_path / "pandas.parquet", index=False)
    code, columns, err = _schema_cli(capsys, f"data.path={path}", f"data.label={LABEL}")
    assert code == 0 and "Traceback" not in err, err
    assert columns["kind"]["kind"] == "categorical" and columns["kind"]["levels"] == [
        "card",
        "cash",
    ]
    assert columns[LABEL]["levels"] == ["bad", "good"]  # no category no row holds
    # As Spark and pyarrow write them: dictionary-encoded columns without pandas' metadata.
    table = pa.table(
        {
            "amount": frame["amount"],
            "kind": pa.array(frame["kind"].astype(str)).dictionary_encode(),
            LABEL: pa.array(frame[LABEL].astype(str)).dictionary_encode(),
        }
    )
    pq.write_table(table, tmp_path / "spark.parquet")
    for given in ("pandas.parquet", "spark.parquet"):
        data = _prepare(given, tmp_path)
        assert data.schema.column("kind").levels == ("card", "cash")
        assert data.schema.column(LABEL).levels == ("bad", "good") and data.schema.positive == "bad"


def _nested_table(rows: int, seed: int = 0) -> pa.Table:
    return pa.table(
        {
            "amount": _amounts(rows, seed),
            "tags": pa.array([["a", "b"][: i % 3] for i in range(rows)]),
            "address": pa.array([{"city": "x", "zip": i % 7} for i in range(rows)]),
            LABEL: _labels(rows),
        }
    )


def _parquet_parts(folder: Path, table: Callable[[int, int], pa.Table], rows: int) -> None:
    """``folder`` holding two Parquet parts of ``table(rows, part)``, as Spark writes a table."""
    folder.mkdir()
    for part in range(2):
        pq.write_table(table(rows, part), folder / f"part-{part}.parquet")


def test_nested_parquet_columns_are_dropped_with_one_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    pq.write_table(_nested_table(600), tmp_path / "tx.parquet")
    _parquet_parts(tmp_path / "many", _nested_table, 1500)
    for given, extra in (("tx.parquet", {}), ("many", {"max_rows": 500})):
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="wgangp.data"):
            data = _prepare(given, tmp_path, **extra)
        assert data.schema.names == ("amount", LABEL)
        lines = [r.getMessage() for r in caplog.records if "nested values" in r.getMessage()]
        assert lines == [
            f"{tmp_path / given}: column(s) tags, address hold lists, structs or maps "
            "(nested values), dropped: a feature needs one value per cell"
        ]


def test_a_nested_label_is_one_line(tmp_path: Path) -> None:
    _parquet_parts(tmp_path / "many", _nested_table, 300)
    with pytest.raises(DataError) as err:
        _load(tmp_path / "many", tmp_path, label="tags")
    line = str(err.value)
    assert line == (
        f"{tmp_path}/many: label column tags holds lists, structs or maps (nested values); the "
        "label needs one class per row: set data.label=<column>"
    )
    documented(line, path=tmp_path / "many")


# -- 2. date32 and time64 ----------------------------------------------------------------------


def _dated_table(rows: int, seed: int = 0) -> pa.Table:
    days = [dt.date(2024, 1, 1) + dt.timedelta(days=i % 60) for i in range(rows)]
    times = [dt.time(i % 24, 30) if i % 11 else None for i in range(rows)]
    return pa.table(
        {
            "amount": _amounts(rows, seed),
            "day": pa.array(days, pa.date32()),
            "at": pa.array(times, pa.time64("us")),
            LABEL: _labels(rows),
        }
    )


def test_parquet_dates_read_as_datetimes_and_times_as_text(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    pq.write_table(_dated_table(600), tmp_path / "tx.parquet")
    _parquet_parts(tmp_path / "many", _dated_table, 1500)
    for given, extra in (("tx.parquet", {}), ("many", {"max_rows": 500})):
        frame = _load(tmp_path / given, tmp_path, **extra).frame
        assert pd.api.types.is_datetime64_any_dtype(frame["day"])
        assert frame["day"].min() == pd.Timestamp("2024-01-01")
        assert frame["at"].dropna().str.fullmatch(r"\d\d:30:00").all()
        assert frame["at"].isna().any()  # a gap stays a gap
        data = _prepare(given, tmp_path, **extra)
        assert data.schema.column("day").kind == "datetime"
        assert data.schema.column("at").kind == "categorical"
        assert "12:30:00" in data.schema.column("at").levels
    given = f"data.path={tmp_path / 'tx.parquet'}"
    code, columns, err = _schema_cli(capsys, given, f"data.label={LABEL}")
    assert code == 0, err
    assert columns["day"]["kind"] == "datetime" and columns["at"]["nullable"] is True


# -- 3. one column, two types ------------------------------------------------------------------


def test_a_column_typed_differently_across_files_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "people"
    folder.mkdir()
    rows = 300
    ages = np.arange(rows) % 80 + 18
    pd.DataFrame({"age": ages, LABEL: _labels(rows)}).to_parquet(folder / "a.parquet")
    texts = [f"{age} yrs" for age in ages]
    pd.DataFrame({"age": texts, LABEL: _labels(rows)}).to_parquet(folder / "b.parquet")
    with pytest.raises(DataError) as err:
        _load(folder, tmp_path)
    line = str(err.value)
    assert line == (
        f"{folder}/b.parquet: column age is string, but int64 in {folder}/a.parquet; every file "
        "of one table needs one type per column: write it again with age as int64"
    )
    assert "yrs" not in line
    documented(line, dir=folder)


# -- 4. symlinked folders ---------------------------------------------------------------------


def test_a_glob_through_a_symlink_loop_reads_each_file_once(tmp_path: Path) -> None:
    folder = tmp_path / "tx"
    folder.mkdir()
    frame = pd.DataFrame({"amount": _amounts(400), LABEL: _labels(400)})
    frame.to_parquet(folder / "part.parquet", index=False)
    os.symlink(folder, folder / "loop")  # tx/loop/loop/loop/... is tx again
    os.symlink(folder, tmp_path / "again")  # another way into the same folder
    files = table_files(str(tmp_path / "**" / "*.parquet"))
    assert files.files == (str(folder / "part.parquet"),)
    assert len(_load(tmp_path / "**/*.parquet", tmp_path).frame) == 400
    assert len(_load(tmp_path / "tx/**/*.parquet", tmp_path).frame) == 400


# -- 5. paths Hydra reads as syntax; Hive partitions -------------------------------------------


@pytest.mark.parametrize(
    ("path", "characters"),
    [
        ("tx/date=2024-01-01/part.parquet", "="),
        ("tx/part[1].parquet", "[ ]"),
        ("tx/{a}.csv", "{ }"),
        ("tx/a,b.csv", ","),
        ("données/été.csv", "é"),
    ],
)
def test_a_path_hydra_cannot_read_unquoted_is_one_line_with_the_quoting(
    path: str, characters: str
) -> None:
    with pytest.raises(ConfigError) as err:
        check_overrides([f"data.path={path}", f"data.label={LABEL}"])
    line = str(err.value)
    assert line == (
        f"override 'data.path={path}' has characters Hydra's override grammar reads as syntax "
        f"({characters}); quote the value for Hydra and the whole override for the shell: "
        f"'data.path=\"{path}\"'"
    )
    if characters == "=":
        documented(line)
    quoted = f'data.path="{path}"'
    check_overrides([quoted])  # the quoting the line gives passes, and Hydra reads the path
    assert compose([quoted]).data.path == path


def test_a_sweep_over_paths_stays_a_sweep() -> None:
    check_overrides(["-m", "data.path=a.csv,b.csv"])


def test_quoted_and_non_ascii_paths_read_end_to_end(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    folder = tmp_path / "données" / "date=2024-01-01"
    folder.mkdir(parents=True)
    path = folder / "prêts [v1].parquet"
    frame = pd.DataFrame({"amount": _amounts(600), LABEL: _labels(600)})
    frame.to_parquet(path, index=False)
    cfg = to_config(compose([f'data.path="{path}"', f"data.label={LABEL}"]))
    data = prepare_data(cfg.data, seed=0, launch_dir=tmp_path)
    assert data.name == "prêts [v1]" and data.schema.names == ("amount", LABEL)
    # The schema command takes the same quoting (and the path unquoted: it has no grammar).
    for given in (f'data.path="{path}"', f"data.path={path}"):
        code, columns, err = _schema_cli(capsys, given, f"data.label={LABEL}")
        assert code == 0 and list(columns) == ["amount", LABEL], err


def test_a_glob_character_in_a_file_name_is_that_file(tmp_path: Path) -> None:
    """``a[1].csv`` exists as named: it is that file, not the pattern that matches ``a1.csv``;
    over the cap too, where DuckDB reads it."""
    named = pd.DataFrame({"amount": _amounts(3000), LABEL: _labels(3000)})
    named.to_csv(tmp_path / "a[1].csv", index=False)
    other = pd.DataFrame({"amount": _amounts(50, 1), LABEL: _labels(50)})
    other.to_csv(tmp_path / "a1.csv", index=False)
    other.to_csv(tmp_path / "b?.csv", index=False)
    other.to_csv(tmp_path / "bb.csv", index=False)
    assert table_files(str(tmp_path / "a[1].csv")).files == (str(tmp_path / "a[1].csv"),)
    assert len(_load(tmp_path / "a[1].csv", tmp_path).frame) == 3000
    kept = _load(tmp_path / "a[1].csv", tmp_path, max_rows=1000).read
    assert kept.rows == 3000 and kept.files == 1
    assert _load(tmp_path / "b?.csv", tmp_path).read.kept == 50


def test_hive_partition_columns_are_read_as_columns(tmp_path: Path) -> None:
    """Spark's layout: the label is the partition folder (``Status=bad/part-0.parquet``)."""
    folder = tmp_path / "loans"
    for status, rows in (("bad", 120), ("good", 1200)):
        (folder / f"{LABEL}={status}").mkdir(parents=True)
        for part in range(2):
            frame = pd.DataFrame({"amount": _amounts(rows, part), "term": np.arange(rows) % 3})
            frame.to_parquet(folder / f"{LABEL}={status}" / f"part-{part}.parquet", index=False)
    (folder / "_SUCCESS").write_text("")
    for extra in ({}, {"max_rows": 1000}):
        loaded = _load(folder, tmp_path, **extra)
        assert list(loaded.frame.columns) == ["amount", "term", LABEL]
        assert (loaded.frame[LABEL] == "bad").sum() == 240 and loaded.read.files == 4
    data = _prepare(folder, tmp_path)
    assert data.schema.positive == "bad" and data.schema.column(LABEL).levels == ("bad", "good")
    assert len(_load(folder / "*" / "*.parquet", tmp_path).frame.columns) == 3


# -- 7. label gaps past the cap ----------------------------------------------------------------


def test_label_gaps_are_refused_when_the_cap_samples_past_them(tmp_path: Path) -> None:
    rows = 3000
    labels = _labels(rows).astype(object)
    labels[[7, 2201]] = None
    frame = pd.DataFrame({"amount": _amounts(rows), LABEL: labels})
    frame.to_csv(tmp_path / "tx.csv", index=False)
    (tmp_path / "many").mkdir()
    frame.iloc[:1500].to_csv(tmp_path / "many" / "a.csv", index=False)
    frame.iloc[1500:].to_csv(tmp_path / "many" / "b.csv", index=False)
    with pytest.raises(DataError) as err:
        _load(tmp_path / "tx.csv", tmp_path, max_rows=100)
    line = str(err.value)
    assert line == (
        f"{tmp_path}/tx.csv: label column {LABEL} has 2 missing value(s) among its 3000 rows; "
        "drop those rows, every row needs its class"
    )
    documented(line, path=tmp_path / "tx.csv")
    with pytest.raises(DataError) as err:
        _load(tmp_path / "many", tmp_path, max_rows=100)
    assert str(err.value) == (
        f"{tmp_path}/many: label column {LABEL} has 2 missing value(s) among its 3000 rows "
        f"(first in {tmp_path}/many/a.csv); drop those rows, every row needs its class"
    )
    with zipfile.ZipFile(tmp_path / "tx.zip", "w") as archive:  # read in memory: the same
        archive.writestr("tx.csv", frame.to_csv(index=False))
    with pytest.raises(DataError, match=r"has 2 missing value\(s\) among its 3000 rows; drop"):
        _load(tmp_path / "tx.zip", tmp_path, max_rows=100)


# -- 8. file:// URLs, the label's line for folders ---------------------------------------------


def test_a_file_url_is_read_as_a_local_path(tmp_path: Path) -> None:
    folder = tmp_path / "my tx"
    folder.mkdir()
    frame = pd.DataFrame({"amount": _amounts(3000), LABEL: _labels(3000)})
    frame.to_parquet(folder / "part-0.parquet", index=False)
    url = (folder / "part-0.parquet").as_uri()  # file:///.../my%20tx/part-0.parquet
    files = table_files(url)
    assert files.files == (str(folder / "part-0.parquet"),) and files.one_local_file
    assert len(_load(url, tmp_path).frame) == 3000
    assert _load(folder.as_uri(), tmp_path, max_rows=500).read.capped
    assert table_files(f"file://localhost{folder}").files == files.files


def test_a_file_url_of_another_host_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(DataError) as err:
        _load("file://server/tx.csv", tmp_path)
    line = str(err.value)
    assert line == (
        "data.path=file://server/tx.csv names the host server; a file:// URL reads a file of "
        "this machine: write file:///path/to/table or the path itself"
    )
    documented(line)


def test_a_folder_of_semicolon_files_says_so_as_one_file_does(tmp_path: Path) -> None:
    frame = pd.DataFrame({"amount": _amounts(100), LABEL: _labels(100)})
    frame.to_csv(tmp_path / "one.csv", index=False, sep=";")
    (tmp_path / "many").mkdir()
    for part in range(2):
        frame.to_csv(tmp_path / "many" / f"part-{part}.csv", index=False, sep=";")
    lines = []
    for given in ("one.csv", "many"):
        with pytest.raises(DataError) as err:
            _load(tmp_path / given, tmp_path)
        lines.append(str(err.value))
    assert lines == [
        f"{tmp_path}/one.csv looks semicolon-separated (a single column 'amount;Status'); save "
        "it comma-separated",
        f"{tmp_path}/many/part-0.csv looks semicolon-separated (a single column "
        "'amount;Status'); save it comma-separated",
    ]


# -- 9. one rule for the rows the cap keeps ----------------------------------------------------


def test_a_zip_and_a_csv_of_one_table_keep_the_same_rows(tmp_path: Path) -> None:
    rows = 4000
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        {
            "amount": _amounts(rows),
            "merchant": rng.choice(["grocery", "travel", "online", None], rows),
            "note": rng.choice(['said "hi", left', "a,b", " padded "], rows),
            LABEL: _labels(rows, every=13),
        }
    )
    frame = pd.concat([frame, frame.iloc[:200]], ignore_index=True)  # exact copies of rows
    frame.to_csv(tmp_path / "tx.csv", index=False)
    with zipfile.ZipFile(tmp_path / "tx.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("tx.csv", frame.to_csv(index=False))
    for seed in (0, 1):
        from_csv = _load(tmp_path / "tx.csv", tmp_path, seed=seed, max_rows=1000)
        from_zip = _load(tmp_path / "tx.zip", tmp_path, seed=seed, max_rows=1000)
        assert from_csv.read.capped and from_zip.read.capped
        assert from_csv.read == from_zip.read
        pd.testing.assert_frame_equal(from_csv.frame, from_zip.frame, check_dtype=False)
        # Exact copies are kept or left together.
        whole = read_table(tmp_path / "tx.csv").value_counts(dropna=False)
        kept = from_zip.frame.value_counts(dropna=False)
        assert (kept > 1).any() and kept.equals(whole[kept.index])


def test_the_in_memory_rule_is_the_files_rule_for_a_parquet_table(tmp_path: Path) -> None:
    """A table DuckDB reads and the same rows in memory (simulated rows, a file pandas read)
    keep the same rows by seed."""
    rows = 3000
    frame = pd.DataFrame(
        {"amount": _amounts(rows), "n": np.arange(rows) % 17, LABEL: _labels(rows)}
    )
    frame.to_parquet(tmp_path / "tx.parquet", index=False)
    scanned = read_big_table(
        table_files(str(tmp_path / "tx.parquet")), TABLE, label=LABEL, positive=None,
        max_rows=500, seed=4,
    )  # fmt: skip
    in_memory = cap_rows(read_table(tmp_path / "tx.parquet"), LABEL, None, 500, seed=4, files=1)
    pd.testing.assert_frame_equal(scanned.frame, in_memory.frame)
    assert scanned.read == in_memory.read


# -- 6. SIGTERM while the files are scanned ----------------------------------------------------


@pytest.mark.slow
def test_sigterm_during_a_folder_scan_ends_the_run_killed(tmp_path: Path) -> None:
    from mlflow import MlflowClient

    folder = tmp_path / "tx"
    folder.mkdir()
    rows = 400_000
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {f"x{i}": rng.normal(size=rows).round(6) for i in range(6)} | {LABEL: _labels(rows, 50)}
    )
    frame.to_csv(folder / "part-0.csv.gz", index=False)
    data = (folder / "part-0.csv.gz").read_bytes()
    for part in range(1, 12):  # copies: other files, the same bytes
        (folder / f"part-{part}.csv.gz").write_bytes(data)
    spill = tmp_path / "tmp"
    spill.mkdir()
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(REPO), "TMPDIR": str(spill)}
    env.pop("MLFLOW_TRACKING_URI", None)
    args = [
        f"data.path={folder}",
        f"data.label={LABEL}",
        "data.max_rows=1000",
        f"tracking.uri=sqlite:///{tmp_path / 'mlflow.db'}",
        f"hydra.run.dir={tmp_path}/out",
    ]
    process = subprocess.Popen(
        [sys.executable, "-m", "wgangp.train", *args],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 300
    while not list(spill.glob("wgangp-read-*")):  # DuckDB is scanning the folder
        assert process.poll() is None, process.communicate()[1][-3000:]
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(1.0)
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 143, stderr[-3000:]
    assert "Traceback" not in stderr, stderr[-3000:]
    assert "data: read" not in stdout + stderr  # the scan stopped: no rows were kept
    line = stderr.strip().splitlines()[-1]
    assert line == (
        "wgangp: interrupted before the first checkpoint; nothing to keep: rerun the same command"
    )
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    (run,) = client.search_runs([client.get_experiment_by_name("wgangp").experiment_id])
    assert run.info.status == "KILLED" and run.data.tags["failure.reason"] == "interrupted"
    assert not list(spill.glob("wgangp-read-*"))  # the spill folder is gone


@pytest.mark.slow
def test_a_quoted_hive_path_trains_from_the_command_line(tmp_path: Path) -> None:
    from support.cli import run_train_cli

    folder = tmp_path / "données" / "date=2024-01-01"
    folder.mkdir(parents=True)
    path = folder / "prêts [v1].parquet"
    pd.DataFrame({"amount": _amounts(600), LABEL: _labels(600)}).to_parquet(path, index=False)
    proc = run_train_cli([f'data.path="{path}"', f"data.label={LABEL}", *QUICK], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    unquoted = run_train_cli([f"data.path={path}", f"data.label={LABEL}", *QUICK], cwd=tmp_path)
    assert unquoted.returncode == 2
    assert unquoted.stderr.strip().splitlines()[-1].startswith("wgangp: error: override 'data")
