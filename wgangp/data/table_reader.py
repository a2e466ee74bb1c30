"""Read any user table (CSV, gzipped CSV, Parquet) as it is, each failure one line.

:func:`wgangp.data.loader.read_table` reads the credit-card file and its messages name
creditcard.csv; a user's own table gets the same checks with advice about that table.
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import pandas as pd

from wgangp.data.file_format import check_format_matches_name
from wgangp.errors import DataError

PARQUET_SUFFIXES = (".parquet", ".pq")
_CORRUPT = (EOFError, zlib.error, gzip.BadGzipFile, OSError)


def read_user_table(path: Path) -> pd.DataFrame:
    """The table at ``path`` (.csv, .csv.gz, .parquet), unvalidated, with at least one row."""
    path = Path(path)
    if path.is_dir():
        raise DataError(f"{path} is a directory, not a file; set data.path to the table itself")
    if not path.exists():
        raise DataError(f"data file not found: {path}; check data.path")
    try:
        if path.stat().st_size == 0:
            raise DataError(f"{path} is empty (0 bytes, no rows); give a table with a header row")
        if path.suffix.lower() in PARQUET_SUFFIXES:
            frame = pd.read_parquet(path)
        else:
            check_format_matches_name(path)
            frame = pd.read_csv(path, compression="infer", low_memory=False)
    except PermissionError:
        raise DataError(f"cannot read {path}: permission denied; make it readable") from None
    except pd.errors.EmptyDataError:
        raise DataError(
            f"{path} has no header and no rows; give a table with a header row"
        ) from None
    except pd.errors.ParserError as err:
        raise DataError(
            f"{path} is not a well-formed CSV ({_one_line(err)}); every row needs as many "
            "comma-separated values as the header"
        ) from None
    except UnicodeDecodeError as err:
        raise DataError(
            f"{path} is not a UTF-8 text CSV ({_one_line(err)}); save it as UTF-8 CSV or Parquet"
        ) from None
    except (*_CORRUPT, ValueError) as err:
        raise DataError(
            f"{path} is truncated or corrupt ({_one_line(err)}); write it again"
        ) from None
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


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split())
    return text if len(text) <= 160 else text[:157] + "..."
