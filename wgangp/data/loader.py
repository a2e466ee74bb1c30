"""Find, read and validate the training table: a user file, Kaggle's file, or simulated data.

The policy when the configured file is absent is explicit (``fallback``): fail, or fall back to
Kaggle (when credentials exist) and then to simulated data with a loud warning, so a run never
trains on simulated rows without saying so.
"""

from __future__ import annotations

import contextlib
import logging
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import pandas as pd

from wgangp.config import FALLBACKS
from wgangp.data import kaggle
from wgangp.data.file_format import check_format_matches_name
from wgangp.data.simulated import simulate_creditcard
from wgangp.data.table_reader import CREDITCARD_FILE, read_errors
from wgangp.data.validation import validate_frame
from wgangp.errors import ConfigError, DataError

logger = logging.getLogger("wgangp.data")

KAGGLE_PAGE = "https://www.kaggle.com/datasets/mlg-ulb/creditcardfraud"


@dataclass(frozen=True)
class LoadedData:
    """A validated table and where it came from (recorded with the run)."""

    frame: pd.DataFrame
    source: str  # "file" | "kaggle" | "simulated"
    origin: str  # path of the file read, or "simulated(seed=..., rows=...)"


def read_table(path: Path) -> pd.DataFrame:
    """Read a .csv, .csv.gz/.gz or Kaggle .zip as it is (no validation); errors are one line."""
    path = Path(path)
    with read_errors(path, CREDITCARD_FILE):
        check_format_matches_name(path)
        frame = _read_any(path)
        names = _header_names(path)

    if frame.shape[1] == 1:
        header = str(frame.columns[0])
        for separator, name in ((";", "semicolon"), ("\t", "tab")):
            if separator in header:
                shown = repr(header) if len(header) <= 40 else repr(header[:37]) + "..."
                raise DataError(
                    f"{path} looks {name}-separated (a single column {shown}); "
                    "save it comma-separated"
                )
    if len(frame) == 0:
        raise DataError(f"{path} has a header but no rows; replace it with creditcard.csv")
    if len(names) == frame.shape[1] and len(set(names)) < len(names):
        # pandas renamed the repeated name (V1 -> V1.1): give validation the names in the file.
        frame.columns = names
    return frame


def load_creditcard(
    path: str | None,
    *,
    launch_dir: Path,
    fallback: str = "simulated",
    cache_dir: Path,
    seed: int = 0,
    simulated_rows: int = 284_807,
    min_rows_per_class: int = 2,
    kaggle_download: Callable[[Path], Path] | None = None,
    credentials_available: Callable[[], bool] | None = None,
) -> LoadedData:
    """Load ``path`` (relative to ``launch_dir``), else follow the ``fallback`` policy.

    Absent file: ``"error"`` raises; ``"simulated"`` uses a previously downloaded Kaggle file in
    ``cache_dir``, else downloads it when Kaggle credentials exist, else simulates data and logs
    a WARNING on logger ``wgangp.data``.
    """
    if fallback not in FALLBACKS:
        raise ConfigError(f"data.fallback must be one of {', '.join(FALLBACKS)}, got {fallback!r}")
    download = kaggle_download or kaggle.download_creditcard
    has_credentials = credentials_available or kaggle.kaggle_credentials_available
    launch_dir = Path(launch_dir)

    wanted = resolve_path(path, launch_dir) if path else None
    if wanted is not None and wanted.exists():
        return _load_file(wanted, "file", min_rows_per_class)
    where = f"data file not found at {wanted}" if wanted else "no data file configured (data.path)"
    if fallback == "error":
        raise DataError(
            f"{where}; put creditcard.csv there, set data.path=/path/to/creditcard.csv, "
            "or use data=simulated"
        )

    cache_dir = resolve_path(cache_dir, launch_dir)
    cached = cache_dir / kaggle.CSV_NAME
    if cached.is_file():
        logger.info("%s; using the Kaggle file downloaded earlier: %s", where, cached)
        return _load_file(cached, "kaggle", min_rows_per_class)
    if has_credentials():
        logger.info("%s; downloading %s from Kaggle into %s", where, kaggle.DATASET, cache_dir)
        return _load_file(download(cache_dir), "kaggle", min_rows_per_class)

    logger.warning(
        "TRAINING ON SIMULATED DATA, NOT REAL TRANSACTIONS: %s and no Kaggle credentials found. "
        "For the real data download creditcard.csv from %s and set data.path=/path/to/"
        "creditcard.csv, or set KAGGLE_USERNAME and KAGGLE_KEY to download it automatically; "
        "set data.fallback=error to fail instead.",
        where,
        KAGGLE_PAGE,
    )
    return load_simulated(seed=seed, rows=simulated_rows, min_rows_per_class=min_rows_per_class)


def load_simulated(*, seed: int, rows: int, min_rows_per_class: int = 2) -> LoadedData:
    """The built-in simulated table (see :mod:`wgangp.data.simulated`), validated like a file."""
    origin = f"simulated(seed={seed}, rows={rows})"
    frame = validate_frame(
        simulate_creditcard(n_rows=rows, seed=seed),
        min_rows_per_class=min_rows_per_class,
        source=origin,
    )
    return LoadedData(frame=frame, source="simulated", origin=origin)


def resolve_path(path: str | Path, launch_dir: Path) -> Path:
    """``path`` with ``~`` expanded, relative paths taken from where the user launched the run."""
    resolved = Path(path).expanduser()
    return resolved if resolved.is_absolute() else Path(launch_dir) / resolved


def _load_file(path: Path, source: str, min_rows_per_class: int) -> LoadedData:
    raw = read_table(path)
    frame = validate_frame(raw, min_rows_per_class=min_rows_per_class, source=str(path))
    return LoadedData(frame=frame, source=source, origin=str(path))


@contextlib.contextmanager
def _opened(path: Path) -> Iterator[Path | IO[bytes]]:
    """What pandas reads: the path (it decompresses by the name), or a zip's CSV member."""
    if path.name.lower().endswith(".zip"):
        with zipfile.ZipFile(path) as archive, archive.open(_csv_member(archive, path)) as member:
            yield member
    else:
        yield path


def _read_any(path: Path) -> pd.DataFrame:
    with _opened(path) as source:
        return pd.read_csv(source, compression="infer", low_memory=False)


def _header_names(path: Path) -> list[str]:
    """The header line as written: pandas renames a repeated column name (``V1.1``)."""
    with _opened(path) as source:
        first = pd.read_csv(
            source, compression="infer", header=None, nrows=1, dtype=str, keep_default_na=False
        )
    return [str(name) for name in first.iloc[0]] if len(first) else []


def _csv_member(archive: zipfile.ZipFile, path: Path) -> str:
    """Kaggle's ``creditcard.csv`` member, or the archive's only .csv member."""
    members = [
        name
        for name in archive.namelist()
        if name.lower().endswith(".csv") and not name.startswith("__MACOSX/")
    ]
    for name in members:
        if Path(name).name == kaggle.CSV_NAME:
            return name
    if len(members) == 1:
        return members[0]
    listed = ", ".join(members[:5]) or "none"
    raise DataError(
        f"{path} has no {kaggle.CSV_NAME} and not exactly one .csv member (found: {listed}); "
        "extract the right file and set data.path to it"
    )
