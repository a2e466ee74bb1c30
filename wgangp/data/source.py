"""Where a run's rows come from: the file ``data.path`` names, or for Kaggle's credit-card file
its download cache, a Kaggle download, or the embedded simulated stand-in.

This is the one place that knows Kaggle's file: a table whose header is mostly Kaggle's 31 names
(a damaged or edited ``creditcard.csv`` included), the download and the simulated rows come with
the schema shipped for it (:mod:`wgangp.data.creditcard`); any other table comes without one, and
its schema is the user's ``data.schema`` or inferred. From there on every table goes the same way.

The policy when the configured credit-card file is absent is explicit (``data.fallback``): fail,
or fall back to Kaggle (when credentials exist) and then to simulated rows with a loud warning, so
a run never trains on simulated rows without saying so.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from wgangp.config import DataConfig
from wgangp.data import kaggle
from wgangp.data.big_tables import (
    TableRead,
    cap_rows,
    is_url,
    names_files,
    read_big_table,
    table_columns,
    table_files,
)
from wgangp.data.creditcard import HEADER, creditcard_schema, looks_like_creditcard
from wgangp.data.simulated import simulate_creditcard
from wgangp.data.table_reader import CREDITCARD_FILE, TABLE, read_table
from wgangp.data.table_schema import TableSchema, Value
from wgangp.errors import DataError

logger = logging.getLogger("wgangp.data")

KAGGLE_PAGE = "https://www.kaggle.com/datasets/mlg-ulb/creditcardfraud"
#: The label Kaggle's file names; another ``data.label`` names another table.
CREDITCARD_LABEL = "Class"


@dataclass(frozen=True)
class LoadedTable:
    """A table as read (no value checked yet) and where it came from (recorded with the run)."""

    frame: pd.DataFrame
    source: str  # "file" | "kaggle" | "simulated"
    origin: str  # path of the file read, or "simulated(seed=..., rows=...)"
    #: Kaggle's shipped schema for its file, download and simulated rows; None for another table
    #: (its schema is ``data.schema`` or inferred).
    schema: TableSchema | None = None
    #: How many rows of each class the files held and were kept (``data.max_rows``).
    read: TableRead | None = None
    #: The name of a folder's or a pattern's table (its folder); None: the file's stem.
    table_name: str | None = None

    @property
    def header(self) -> str | None:
        """How validation's lines name the header a shipped schema needs (Kaggle's 31 columns);
        None for a table whose schema the user can edit."""
        return HEADER if self.schema is not None else None

    @property
    def name(self) -> str:
        """The table's name in run names and MLflow's dataset: the file's stem (a folder's
        name), or simulated."""
        if self.source == "simulated":
            return "simulated"
        return self.table_name or Path(self.origin).name.split(".")[0]

    @property
    def positive(self) -> Value | None:
        """The class to synthesize as the reader counted it when it sampled the rows (the
        least frequent value of the whole table, which a sample may no longer show); None
        otherwise."""
        return self.read.positive if self.read is not None and self.read.sampled else None


def load_table(
    data: DataConfig,
    *,
    seed: int,
    launch_dir: Path,
    kaggle_download: Callable[[Path], Path] | None = None,
    credentials_available: Callable[[], bool] | None = None,
) -> LoadedTable:
    """The table ``data`` names (relative paths from ``launch_dir``), else the fallback's."""
    if data.name == "simulated":
        return load_simulated(seed=seed, rows=data.simulated_rows, max_rows=data.max_rows)
    wanted = resolve_path(data.path, launch_dir) if data.path else None
    another_table = data.schema is not None or data.label != CREDITCARD_LABEL
    if wanted is not None and (wanted.exists() or names_files(str(data.path))):
        files = table_files(str(data.path) if is_url(str(data.path)) else str(wanted))
        header = table_columns(files)
        # An unreadable file named like Kaggle's gets the credit-card advice in its one line.
        creditcard = not another_table and (header is None or looks_like_creditcard(header))
        schema = creditcard_schema() if creditcard else None
        label, positive = _rare_class(data, launch_dir, schema)
        read = read_big_table(
            files,
            CREDITCARD_FILE if creditcard else TABLE,
            label=label,
            positive=positive,
            max_rows=data.max_rows,
            seed=seed,
        )
        return LoadedTable(read.frame, "file", files.spec, schema, read.read, files.name)
    if another_table:
        raise DataError(f"data file not found at {wanted}; check data.path")
    return _creditcard_fallback(
        data,
        wanted,
        seed=seed,
        launch_dir=launch_dir,
        download=kaggle_download or kaggle.download_creditcard,
        has_credentials=credentials_available or kaggle.kaggle_credentials_available,
    )


def load_simulated(*, seed: int, rows: int, max_rows: int | None = None) -> LoadedTable:
    """The built-in simulated table (see :mod:`wgangp.data.simulated`), with Kaggle's schema;
    with ``max_rows``, the rows a file of them would keep (``data.max_rows``)."""
    origin = f"simulated(seed={seed}, rows={rows})"
    frame = simulate_creditcard(n_rows=rows, seed=seed)
    schema = creditcard_schema()
    if max_rows is None:
        return LoadedTable(frame, "simulated", origin, schema)
    read = cap_rows(frame, schema.label, schema.positive, max_rows, seed, files=0)
    return LoadedTable(read.frame, "simulated", origin, schema, read.read)


def _rare_class(
    data: DataConfig, launch_dir: Path, schema: TableSchema | None
) -> tuple[str, Value | None]:
    """The label and the class to synthesize (None: the least frequent value) that the reader
    keeps every row of: Kaggle's, the edited schema's, or ``data.label``/``data.positive``."""
    if schema is not None:
        return schema.label, schema.positive
    if data.schema is not None:
        edited = TableSchema.load(resolve_path(data.schema, launch_dir))
        return edited.label, data.positive if data.positive is not None else edited.positive
    return data.label, data.positive


def resolve_path(path: str | Path, launch_dir: Path) -> Path:
    """``path`` with ``~`` expanded, relative paths taken from where the user launched the run."""
    resolved = Path(path).expanduser()
    return resolved if resolved.is_absolute() else Path(launch_dir) / resolved


def _creditcard_fallback(
    data: DataConfig,
    wanted: Path | None,
    *,
    seed: int,
    launch_dir: Path,
    download: Callable[[Path], Path],
    has_credentials: Callable[[], bool],
) -> LoadedTable:
    """No credit-card file at ``wanted``: ``data.fallback=error`` refuses; ``simulated`` uses a
    previously downloaded Kaggle file, else downloads it when Kaggle credentials exist, else
    simulates rows and logs a WARNING on logger ``wgangp.data``."""
    where = f"data file not found at {wanted}" if wanted else "no data file configured (data.path)"
    if data.fallback == "error":
        raise DataError(
            f"{where}; put creditcard.csv there, set data.path=/path/to/creditcard.csv, "
            "or use data=simulated"
        )
    cache_dir = resolve_path(Path(data.cache_dir).expanduser(), launch_dir)
    cached = cache_dir / kaggle.CSV_NAME
    if cached.is_file():
        logger.info("%s; using the Kaggle file downloaded earlier: %s", where, cached)
        return _kaggle_file(cached)
    if has_credentials():
        logger.info("%s; downloading %s from Kaggle into %s", where, kaggle.DATASET, cache_dir)
        return _kaggle_file(download(cache_dir))
    logger.warning(
        "TRAINING ON SIMULATED DATA, NOT REAL TRANSACTIONS: %s and no Kaggle credentials found. "
        "For the real data download creditcard.csv from %s and set data.path=/path/to/"
        "creditcard.csv, or set KAGGLE_USERNAME and KAGGLE_KEY to download it automatically; "
        "set data.fallback=error to fail instead.",
        where,
        KAGGLE_PAGE,
    )
    return load_simulated(seed=seed, rows=data.simulated_rows)


def _kaggle_file(path: Path) -> LoadedTable:
    frame = read_table(path, CREDITCARD_FILE)
    return LoadedTable(frame, "kaggle", str(path), creditcard_schema())
