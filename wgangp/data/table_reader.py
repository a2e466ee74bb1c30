"""Read any user table (CSV, gzipped CSV, Parquet) as it is, each failure one line.

:func:`wgangp.data.loader.read_table` reads the credit-card file and its messages name
creditcard.csv; a user's own table gets the same checks with advice about that table.
"""

from __future__ import annotations

import gzip
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from wgangp.data.file_format import check_format_matches_name, check_is_file
from wgangp.errors import DataError

PARQUET_SUFFIXES = (".parquet", ".pq")
_CORRUPT = (EOFError, zlib.error, zipfile.BadZipFile, gzip.BadGzipFile, OSError)


@dataclass(frozen=True)
class ReadAdvice:
    """What each one-line read error tells the user to do, for one kind of table."""

    what: str  # how data.path's file is named in the advice
    empty: str  # a file of 0 bytes
    no_header: str  # a file with neither header nor rows
    row_width: str  # what every CSV row needs
    encoding: str
    corrupt: str
    #: Further exceptions that mean a corrupt file for this reader (Parquet's ValueErrors).
    corrupt_also: tuple[type[Exception], ...] = ()


#: A user's own table (CSV or Parquet), and Kaggle's credit-card file (CSV, gzip or zip).
USER_TABLE, CREDITCARD_FILE = (
    ReadAdvice(
        "table", "give a table with a header row", "give a table with a header row",
        "as many comma-separated values as the header", "save it as UTF-8 CSV or Parquet",
        "write it again", corrupt_also=(ValueError,),
    ),
    ReadAdvice(
        "CSV file", "replace it with creditcard.csv", "use creditcard.csv",
        "31 comma-separated values", "use a .csv, .csv.gz or Kaggle's .zip", "download it again",
    ),
)  # fmt: skip


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
    except (*_CORRUPT, *advice.corrupt_also) as err:
        raise DataError(
            f"{path} is truncated or corrupt ({one_line(err)}); {advice.corrupt}"
        ) from None


def read_user_table(path: Path) -> pd.DataFrame:
    """The table at ``path`` (.csv, .csv.gz, .parquet), unvalidated, with at least one row."""
    path = Path(path)
    with read_errors(path, USER_TABLE):
        if path.suffix.lower() in PARQUET_SUFFIXES:
            frame = pd.read_parquet(path)
        else:
            check_format_matches_name(path)
            frame = pd.read_csv(path, compression="infer", low_memory=False)
    if len(frame) == 0:
        raise DataError(f"{path} has a header but no rows; give a table with rows")
    if frame.shape[1] == 1:
        header = str(frame.columns[0])
        for separator, name in ((";", "semicolon"), ("\t", "tab")):
            if separator in header:
                raise DataError(
                    f"{path} looks {name}-separated (a single column {header[:40]!r}); save it "
                    "comma-separated"
                )
    return frame


def one_line(err: BaseException | str) -> str:
    """An exception's text on one line, at most 160 characters."""
    text = " ".join(str(err).split())
    return text if len(text) <= 160 else text[:157] + "..."
