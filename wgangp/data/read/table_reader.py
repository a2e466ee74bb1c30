"""Read any table file as it is: CSV (plain, gzip, or a zip holding one), or Parquet; no checks of
its values (that is :mod:`wgangp.data.schema.validation`'s), each failure of the file itself one
line.

The lines' advice depends on the file a user meant (:class:`ReadAdvice`): a user's own table, or
Kaggle's credit-card file (where to get it again).
"""

from __future__ import annotations

import contextlib
import gzip
import logging
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import pandas as pd

from wgangp.data.read.parquet_columns import NESTED_LINE, read_parquet
from wgangp.data.schema.cells import check_distinct_names
from wgangp.errors import DataError

log = logging.getLogger("wgangp.data")

PARQUET_SUFFIXES = (".parquet", ".pq")
#: The member of a zip archive read when it holds several CSVs (Kaggle's download).
PREFERRED_MEMBER = "creditcard.csv"
_CORRUPT = (EOFError, zlib.error, zipfile.BadZipFile, gzip.BadGzipFile, OSError)


@dataclass(frozen=True)
class ReadAdvice:
    """What each one-line read error tells the user to do, for one kind of table."""

    what: str  # how data.path's file is named in the advice
    empty: str  # a file of 0 bytes
    no_header: str  # a file with neither header nor rows
    no_rows: str  # a header and no rows
    row_width: str  # what every CSV row needs
    encoding: str
    corrupt: str


#: A user's own table, and Kaggle's credit-card file.
TABLE, CREDITCARD_FILE = (
    ReadAdvice(
        "table", "give a table with a header row", "give a table with a header row",
        "give a table with rows", "as many comma-separated values as the header",
        "save it as UTF-8 CSV or Parquet", "write it again",
    ),
    ReadAdvice(
        "CSV file", "replace it with creditcard.csv", "use creditcard.csv",
        "replace it with creditcard.csv", "31 comma-separated values",
        "use a .csv, .csv.gz or Kaggle's .zip", "download it again",
    ),
)  # fmt: skip


def read_table(path: Path, advice: ReadAdvice = TABLE) -> pd.DataFrame:
    """The table at ``path`` (.csv, .csv.gz/.gz, .zip, .parquet/.pq), unvalidated, with a header
    of distinct names and at least one row."""
    path = Path(path)
    with read_errors(path, advice):
        if path.suffix.lower() in PARQUET_SUFFIXES:
            frame, nested = read_parquet(path)
            if nested:
                log.info("%s: %s", path, NESTED_LINE.format(names=", ".join(nested)))
            names = [str(name) for name in frame.columns]
        else:
            check_format_matches_name(path)
            with _opened(path) as source:
                frame = pd.read_csv(source, compression="infer", low_memory=False)
            names = _header_names(path)
            if len(names) == frame.shape[1]:  # as written, stripped: pandas renames copies
                frame.columns = names
    check_separator(path, [str(name) for name in frame.columns])
    # pandas would have renamed the copies (Age -> Age.1), a column never there
    check_distinct_names(names, str(path))
    if len(frame) == 0:
        raise DataError(f"{path} has a header but no rows; {advice.no_rows}")
    return frame


def read_cells(path: Path) -> pd.DataFrame:
    """A CSV's cells as their text, as DuckDB reads them (``all_varchar``): nothing parsed, an
    empty cell a gap; the rows and columns of :func:`read_table`'s frame."""
    path = Path(path)
    with read_errors(path, TABLE), _opened(path) as source:
        frame = pd.read_csv(
            source, compression="infer", dtype=str, keep_default_na=False, na_values=[""]
        )
    names = _header_names(path)
    if len(names) == frame.shape[1]:
        frame.columns = names
    return frame


def check_separator(path: Path | str, names: list[str]) -> None:
    """A header of one column holding a semicolon or a tab: the file is not comma-separated."""
    if len(names) != 1:
        return
    header = names[0]
    for separator, name in ((";", "semicolon"), ("\t", "tab")):
        if separator in header:
            shown = repr(header) if len(header) <= 40 else repr(header[:37]) + "..."
            raise DataError(
                f"{path} looks {name}-separated (a single column {shown}); save it comma-separated"
            )


def read_header(path: Path) -> list[str] | None:
    """The column names of a table file, read without its rows; None when it cannot be read
    (empty, truncated, another format: the full read's one line comes later)."""
    path = Path(path)
    try:
        if path.suffix.lower() in PARQUET_SUFFIXES:
            import pyarrow.parquet as pq

            return list(pq.read_schema(path).names)
        return _header_names(path)
    except Exception:
        return None


@contextmanager
def read_errors(path: Path, advice: ReadAdvice) -> Iterator[None]:
    """Turn what pandas and the decompressors raise on a bad file into one line with advice."""
    check_is_file(path, advice.what)
    try:
        if path.stat().st_size == 0:
            raise DataError(f"{path} is empty (0 bytes, no rows); {advice.empty}")
        yield
    except PermissionError:
        raise DataError(f"cannot read {path}: permission denied; make it readable") from None
    except pd.errors.EmptyDataError:
        raise DataError(f"{path} has no header and no rows; {advice.no_header}") from None
    except pd.errors.ParserError as err:
        raise DataError(
            f"{path} is not a well-formed CSV ({one_line(err)}); every row needs {advice.row_width}"
        ) from None
    except UnicodeDecodeError as err:
        raise DataError(
            f"{path} is not a UTF-8 text CSV ({one_line(err)}); {advice.encoding}"
        ) from None
    except (*_CORRUPT, ValueError) as err:  # Parquet's readers raise ValueError (ArrowInvalid)
        raise DataError(
            f"{path} is truncated or corrupt ({one_line(err)}); {advice.corrupt}"
        ) from None


def one_line(err: BaseException | str) -> str:
    """An exception's text on one line, at most 160 characters."""
    text = " ".join(str(err).split())
    return text if len(text) <= 160 else text[:157] + "..."


@contextlib.contextmanager
def _opened(path: Path) -> Iterator[Path | IO[bytes]]:
    """What pandas reads: the path (it decompresses by the name), or a zip's CSV member."""
    if path.name.lower().endswith(".zip"):
        with zipfile.ZipFile(path) as archive, archive.open(_csv_member(archive, path)) as member:
            yield member
    else:
        yield path


def _header_names(path: Path) -> list[str]:
    """The header line as written: pandas renames a repeated column name (``V1.1``)."""
    with _opened(path) as source:
        first = pd.read_csv(
            source, compression="infer", header=None, nrows=1, dtype=str, keep_default_na=False
        )
    return [str(name).strip() for name in first.iloc[0]] if len(first) else []


def _csv_member(archive: zipfile.ZipFile, path: Path) -> str:
    """The archive's ``creditcard.csv`` member (Kaggle's download), or its only .csv member."""
    members = [
        name
        for name in archive.namelist()
        if name.lower().endswith(".csv") and not name.startswith("__MACOSX/")
    ]
    for name in members:
        if Path(name).name == PREFERRED_MEMBER:
            return name
    if len(members) == 1:
        return members[0]
    listed = ", ".join(members[:5]) or "none"
    raise DataError(
        f"{path} has no {PREFERRED_MEMBER} and not exactly one .csv member (found: {listed}); "
        "extract the right file and set data.path to it"
    )


#: A file's first bytes by format, and the name ending that makes it read as that format.
_MAGIC = {"gzip": b"\x1f\x8b", "zip": b"PK\x03\x04"}
_SUFFIX = {"gzip": ".gz", "zip": ".zip"}
_DESCRIBED = {"gzip": "gzip-compressed", "zip": "a zip archive"}


def check_is_file(path: Path, what: str) -> None:
    """``data.path`` names a file that exists (``what``: how the advice names it)."""
    if path.is_dir():
        raise DataError(f"{path} is a directory, not a file; set data.path to the {what} itself")
    if not path.exists():
        raise DataError(f"data file not found: {path}; check data.path")


def check_format_matches_name(path: Path) -> None:
    """The name decides how the file is decompressed: a gzip file named .csv would be read as
    text and fail as "not UTF-8". Compare the first bytes with the name, say what to rename."""
    with path.open("rb") as handle:
        head = handle.read(4096)
    actual = next((kind for kind, magic in _MAGIC.items() if head.startswith(magic)), None)
    name = path.name.lower()
    named = next((kind for kind, suffix in _SUFFIX.items() if name.endswith(suffix)), None)
    if actual == named:
        return
    if actual == "zip" and _is_excel_workbook(path):
        raise DataError(
            f"{path} is an Excel workbook, not a CSV; save it as CSV (comma-separated) and set "
            "data.path to that file"
        )
    if actual is not None:
        raise DataError(
            f"{path} is {_DESCRIBED[actual]} but its name does not end in {_SUFFIX[actual]}; "
            f"rename it to {_renamed(path.name, actual)}"
        )
    if named is not None and _looks_like_text(head):
        raise DataError(
            f"{path} is plain text, not {_DESCRIBED[named]}, but its name ends in "
            f"{_SUFFIX[named]}; rename it to {_renamed(path.name, None)}"
        )


def _renamed(name: str, kind: str | None) -> str:
    """``cards.csv`` -> ``cards.csv.gz`` (gzip), ``cards.zip`` (zip), ``cards.csv`` (text)."""
    stem = name
    for suffix in (".gz", ".zip", ".csv"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
    return stem + {"gzip": ".csv.gz", "zip": ".zip"}.get(kind or "", ".csv")


def _is_excel_workbook(path: Path) -> bool:
    try:
        with zipfile.ZipFile(path) as archive:
            return any(name.startswith("xl/") for name in archive.namelist())
    except (OSError, zipfile.BadZipFile):
        return False


def _looks_like_text(head: bytes) -> bool:
    if b"\0" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as err:
        return err.start >= len(head) - 3  # only a character cut at the end of the block
    return True
