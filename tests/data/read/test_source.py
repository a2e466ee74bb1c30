"""read_table and load_table: real-format files, broken files, and the credit-card fallback."""

from __future__ import annotations

import gzip
import io
import logging
import os
import zipfile
from pathlib import Path

import pandas as pd
import pytest
import support.creditcard as schema

from wgangp.config import CREDITCARD_PATH, DataConfig
from wgangp.data.builtin.simulated import simulate_creditcard
from wgangp.data.prepare import prepare_data
from wgangp.data.read.source import LoadedTable, load_simulated, load_table
from wgangp.data.read.table_reader import CREDITCARD_FILE
from wgangp.data.read.table_reader import read_table as read_any_table
from wgangp.data.schema.validation import validate_table
from wgangp.errors import DataError

REAL_ROWS, REAL_FRAUDS = 30_172, 296


def kaggle_frame(rows: int = 300) -> pd.DataFrame:
    frame = simulate_creditcard(n_rows=rows, fraud_rate=0.02, seed=11)
    return frame.astype({schema.TIME: "int64"})


def kaggle_csv_text(frame: pd.DataFrame) -> str:
    """Kaggle's exact format: quoted header, quoted Class, unquoted numbers."""
    header = ",".join(f'"{name}"' for name in schema.COLUMNS)
    body = frame[list(schema.FEATURES)].to_csv(index=False, header=False).splitlines()
    lines = [f'{line},"{label}"' for line, label in zip(body, frame[schema.LABEL], strict=True)]
    return "\n".join([header, *lines]) + "\n"


def read_table(path: Path) -> pd.DataFrame:
    """Kaggle's file as the credit-card source reads it (its advice in every line)."""
    return read_any_table(path, CREDITCARD_FILE)


def validated(frame: pd.DataFrame) -> pd.DataFrame:
    return validate_table(frame, schema.SCHEMA, source="rows", min_rows_per_class=2)


def assert_same_table(read: pd.DataFrame, frame: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(validated(read), validated(frame), check_exact=False, rtol=1e-12)


def load_creditcard(
    path: str | None,
    *,
    launch_dir: Path,
    cache_dir: Path,
    fallback: str = "simulated",
    seed: int = 0,
    simulated_rows: int = 284_807,
    **hooks,
) -> LoadedTable:
    """``load_table`` for the credit-card source with these ``data.*`` settings: the default
    path's fallback, or Kaggle's file elsewhere named by its shipped schema."""
    data = DataConfig(
        path=path,
        fallback=fallback,
        cache_dir=str(cache_dir),
        simulated_rows=simulated_rows,
        schema=None if path in (None, CREDITCARD_PATH) else "creditcard",
    )
    return load_table(data, seed=seed, launch_dir=launch_dir, **hooks)


@pytest.fixture
def frame() -> pd.DataFrame:
    return kaggle_frame()


def test_reads_kaggle_csv(tmp_path: Path, frame: pd.DataFrame) -> None:
    path = tmp_path / "creditcard.csv"
    path.write_text(kaggle_csv_text(frame))
    read = read_table(path)
    assert read[schema.LABEL].dtype.kind == "i"  # quoted "0"/"1" parse as integers
    assert_same_table(read, frame)


@pytest.mark.parametrize("name", ["creditcard.csv.gz", "creditcard.gz"])
def test_reads_gzip(tmp_path: Path, frame: pd.DataFrame, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(gzip.compress(kaggle_csv_text(frame).encode()))
    assert_same_table(read_table(path), frame)


@pytest.mark.parametrize("member", ["creditcard.csv", "data/cards_2013.csv"])
def test_reads_zip(tmp_path: Path, frame: pd.DataFrame, member: str) -> None:
    path = tmp_path / "creditcardfraud.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("README.txt", "not data")
        archive.writestr(member, kaggle_csv_text(frame))
    assert_same_table(read_table(path), frame)


def test_zip_without_a_single_csv(tmp_path: Path, frame: pd.DataFrame) -> None:
    path = tmp_path / "bundle.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("a.csv", kaggle_csv_text(frame))
        archive.writestr("b.csv", kaggle_csv_text(frame))
    with pytest.raises(DataError, match=r"no creditcard.csv .*found: a.csv, b.csv"):
        read_table(path)


def _truncated_gzip(path: Path, text: str) -> None:
    data = gzip.compress(text.encode())
    path.write_bytes(data[: len(data) // 2])


def _truncated_zip(path: Path, text: str) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("creditcard.csv", text)
    path.write_bytes(path.read_bytes()[:-200])


@pytest.mark.parametrize(
    ("name", "write"),
    [("cc.csv.gz", _truncated_gzip), ("cc.zip", _truncated_zip)],
    ids=["truncated-gz", "truncated-zip"],
)
def test_broken_archives(tmp_path: Path, frame: pd.DataFrame, name: str, write) -> None:
    path = tmp_path / name
    write(path, kaggle_csv_text(kaggle_frame(3_000)))
    with pytest.raises(DataError, match="truncated or corrupt") as err:
        read_table(path)
    assert "\n" not in str(err.value)
    assert str(path) in str(err.value)


def _gzip(text: str) -> bytes:
    return gzip.compress(text.encode())


def _zip(text: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("creditcard.csv", text)
    return buffer.getvalue()


def _xlsx(text: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("xl/workbook.xml", "<workbook/>")
    return buffer.getvalue()


FORMAT_MISMATCHES = {
    "gzip named .csv": (
        "cards.csv",
        _gzip,
        "is gzip-compressed but its name does not end in .gz; rename it to cards.csv.gz",
    ),
    "gzip named .zip": (
        "cards.zip",
        _gzip,
        "is gzip-compressed but its name does not end in .gz; rename it to cards.csv.gz",
    ),
    "zip named .csv": (
        "cards.csv",
        _zip,
        "is a zip archive but its name does not end in .zip; rename it to cards.zip",
    ),
    "zip named .csv.gz": (
        "cards.csv.gz",
        _zip,
        "is a zip archive but its name does not end in .zip; rename it to cards.zip",
    ),
    "text named .csv.gz": (
        "cards.csv.gz",
        str.encode,
        "is plain text, not gzip-compressed, but its name ends in .gz; rename it to cards.csv",
    ),
    "text named .zip": (
        "cards.zip",
        str.encode,
        "is plain text, not a zip archive, but its name ends in .zip; rename it to cards.csv",
    ),
    "Excel workbook named .csv": (
        "cards.csv",
        _xlsx,
        "is an Excel workbook, not a CSV; save it as CSV (comma-separated)",
    ),
}


@pytest.mark.parametrize("case", FORMAT_MISMATCHES)
def test_a_name_that_hides_the_format_says_what_to_rename(
    tmp_path: Path, frame: pd.DataFrame, case: str
) -> None:
    name, encode, expected = FORMAT_MISMATCHES[case]
    path = tmp_path / name
    path.write_bytes(encode(kaggle_csv_text(frame)))
    with pytest.raises(DataError) as err:
        read_table(path)
    assert str(err.value).startswith(f"{path} {expected}")
    assert "\n" not in str(err.value)


def _duplicate_header(text: str) -> str:
    header, body = text.split("\n", 1)
    return header.replace('"V2"', '"V1"', 1) + "\n" + body


@pytest.mark.parametrize("name", ["creditcard.csv", "creditcard.csv.gz", "creditcardfraud.zip"])
def test_a_repeated_column_name_is_reported_as_such(
    tmp_path: Path, frame: pd.DataFrame, name: str
) -> None:
    """pandas reads the second V1 as "V1.1"; the line names the V1 that the file really has."""
    text = _duplicate_header(kaggle_csv_text(frame))
    path = tmp_path / name
    encode = {".csv": str.encode, ".gz": _gzip, ".zip": _zip}[path.suffix]
    path.write_bytes(encode(text))
    with pytest.raises(DataError) as err:
        load_creditcard(str(path), launch_dir=tmp_path, fallback="error", cache_dir=tmp_path)
    message = str(err.value)
    assert message.startswith(f"{path}: column(s) V1 appear more than once in the header; ")
    assert "V1.1" not in message and "\n" not in message


@pytest.mark.parametrize(("separator", "word"), [(";", "semicolon"), ("\t", "tab")])
def test_other_separators(tmp_path: Path, frame: pd.DataFrame, separator: str, word: str) -> None:
    path = tmp_path / "export.csv"
    frame.to_csv(path, sep=separator, index=False)
    with pytest.raises(DataError, match=f"looks {word}-separated.*save it comma-separated") as err:
        read_table(path)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("content", ["", '"Time","V1"\n'], ids=["zero-bytes", "header-only"])
def test_empty_files(tmp_path: Path, content: str) -> None:
    path = tmp_path / "creditcard.csv"
    path.write_text(content)
    with pytest.raises(DataError, match="no rows"):
        read_table(path)


def test_empty_gzip(tmp_path: Path) -> None:
    path = tmp_path / "creditcard.csv.gz"
    path.write_bytes(gzip.compress(b""))
    with pytest.raises(DataError, match="no rows"):
        read_table(path)


def test_ragged_rows(tmp_path: Path, frame: pd.DataFrame) -> None:
    path = tmp_path / "creditcard.csv"
    path.write_text(kaggle_csv_text(frame) + "1,2,3," + ",".join(["0"] * 40) + "\n")
    with pytest.raises(DataError, match="not a well-formed CSV") as err:
        read_table(path)
    assert "\n" not in str(err.value)


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="data file not found"):
        read_table(tmp_path / "nope.csv")
    with pytest.raises(DataError, match="is a directory"):
        read_table(tmp_path)


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads anything")
def test_unreadable_file(tmp_path: Path, frame: pd.DataFrame) -> None:
    path = tmp_path / "creditcard.csv"
    path.write_text(kaggle_csv_text(frame))
    path.chmod(0)
    try:
        with pytest.raises(DataError, match="permission denied"):
            read_table(path)
    finally:
        path.chmod(0o600)


# --- load_creditcard ---------------------------------------------------------------------------


def _no_download(cache_dir: Path) -> Path:
    raise AssertionError("must not download")


def test_relative_path_resolves_against_launch_dir(
    tmp_path: Path, frame: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    launch = tmp_path / "launch"
    (launch / "data").mkdir(parents=True)
    (launch / "data" / "cards.csv").write_text(kaggle_csv_text(frame))
    elsewhere = tmp_path / "outputs" / "2026-01-01"
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(elsewhere)  # like Hydra's run directory

    loaded = load_creditcard(
        "data/cards.csv",
        launch_dir=launch,
        fallback="error",
        cache_dir=tmp_path / "cache",
        kaggle_download=_no_download,
    )

    assert loaded.provenance == "file"
    assert loaded.origin == str(launch / "data" / "cards.csv")
    assert_same_table(loaded.frame, frame)


def test_home_relative_path(
    tmp_path: Path, frame: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "creditcard.csv").write_text(kaggle_csv_text(frame))
    loaded = load_creditcard(
        "~/creditcard.csv", launch_dir=tmp_path / "x", cache_dir=tmp_path / "cache"
    )
    assert loaded.origin == str(tmp_path / "creditcard.csv")


def test_invalid_file_is_reported_with_its_path(tmp_path: Path, frame: pd.DataFrame) -> None:
    path = tmp_path / "creditcard.csv"
    frame.drop(columns=["V28"]).to_csv(path, index=False)
    data = DataConfig(path=str(path), fallback="error", schema="creditcard")
    with pytest.raises(DataError) as err:
        prepare_data(data, seed=0, launch_dir=tmp_path)
    assert str(err.value) == (
        f"{path}: column(s) V28 of the schema are not in the table; the header needs the 31 "
        "columns Time,V1..V28,Amount,Class as in Kaggle's creditcard.csv"
    )


@pytest.mark.parametrize("path", [CREDITCARD_PATH, None])
def test_fallback_error(tmp_path: Path, path: str | None) -> None:
    with pytest.raises(DataError) as err:
        load_creditcard(
            path,
            launch_dir=tmp_path,
            fallback="error",
            cache_dir=tmp_path / "cache",
            kaggle_download=_no_download,
            credentials_available=lambda: True,
        )
    message = str(err.value)
    assert "\n" not in message
    assert "data.path=" in message and "data=simulated" in message
    if path:
        assert f"data file not found at {tmp_path / path}" in message


def test_fallback_simulated_warns_loudly(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="wgangp.data"):
        loaded = load_creditcard(
            CREDITCARD_PATH,
            launch_dir=tmp_path,
            cache_dir=tmp_path / "cache",
            seed=3,
            simulated_rows=500,
            kaggle_download=_no_download,
            credentials_available=lambda: False,
        )
    assert loaded.provenance == "simulated"
    assert loaded.origin == "simulated(seed=3, rows=500)"
    assert len(loaded.frame) == 500
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert warnings[0].name == "wgangp.data"
    assert "SIMULATED DATA, NOT REAL TRANSACTIONS" in warnings[0].getMessage()
    assert "data.path=" in warnings[0].getMessage()


def test_fallback_downloads_when_credentials_exist(
    tmp_path: Path, frame: pd.DataFrame, caplog: pytest.LogCaptureFixture
) -> None:
    calls: list[Path] = []

    def fake_download(cache_dir: Path) -> Path:
        calls.append(cache_dir)
        cache_dir.mkdir(parents=True)
        (cache_dir / "creditcard.csv").write_text(kaggle_csv_text(frame))
        return cache_dir / "creditcard.csv"

    with caplog.at_level(logging.WARNING, logger="wgangp.data"):
        loaded = load_creditcard(
            None,
            launch_dir=tmp_path,
            cache_dir=Path("cache"),
            kaggle_download=fake_download,
            credentials_available=lambda: True,
        )
    assert calls == [tmp_path / "cache"]
    assert loaded.provenance == "kaggle"
    assert loaded.origin == str(tmp_path / "cache" / "creditcard.csv")
    assert_same_table(loaded.frame, frame)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_earlier_download_is_used_without_credentials(tmp_path: Path, frame: pd.DataFrame) -> None:
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "creditcard.csv").write_text(kaggle_csv_text(frame))
    loaded = load_creditcard(
        None,
        launch_dir=tmp_path,
        cache_dir=tmp_path / "cache",
        kaggle_download=_no_download,
        credentials_available=lambda: False,
    )
    assert loaded.provenance == "kaggle"


def test_download_failure_is_not_hidden_by_simulation(tmp_path: Path) -> None:
    def failing_download(cache_dir: Path) -> Path:
        raise DataError("downloading mlg-ulb/creditcardfraud from Kaggle failed (offline)")

    with pytest.raises(DataError, match="Kaggle failed"):
        load_creditcard(
            None,
            launch_dir=tmp_path,
            cache_dir=tmp_path / "cache",
            kaggle_download=failing_download,
            credentials_available=lambda: True,
        )


def test_load_simulated_has_kaggles_schema_and_is_deterministic(tmp_path: Path) -> None:
    first = load_simulated(seed=4, rows=1_000)
    assert isinstance(first, LoadedTable)
    assert (first.provenance, first.origin) == ("simulated", "simulated(seed=4, rows=1000)")
    assert first.schema == schema.SCHEMA and first.name == "simulated"
    pd.testing.assert_frame_equal(first.frame, load_simulated(seed=4, rows=1_000).frame)
    data = DataConfig(name="simulated", simulated_rows=1_000, min_rows_per_class=50)
    with pytest.raises(DataError, match="with Class=1; at least 50 are needed"):
        prepare_data(data, seed=4, launch_dir=tmp_path)


def test_loads_the_real_sample(tmp_path: Path, real_sample: Path) -> None:
    sample = real_sample
    loaded = load_creditcard(
        str(sample), launch_dir=tmp_path, fallback="error", cache_dir=tmp_path / "cache"
    )
    assert loaded.provenance == "file" and loaded.schema == schema.SCHEMA
    assert len(loaded.frame) == REAL_ROWS
    assert int(loaded.frame[schema.LABEL].sum()) == REAL_FRAUDS
    assert tuple(loaded.frame.columns) == schema.COLUMNS
