"""Where a run's rows come from, and the schema they come with: the file ``data.path`` names, or
for the ``creditcard`` preset's default path its download cache, a Kaggle download, or the
embedded simulated stand-in.

Kaggle's credit-card file is configured, not recognised: its schema is shipped in the package
(:mod:`wgangp.data.builtin.creditcard`) and applies to the preset's default path
(``data/creditcard.csv``, :data:`~wgangp.config.CREDITCARD_PATH`), to the download and to the
simulated rows, or to any file with ``data.schema=creditcard``. Any other table is the user's: its
schema is ``data.schema`` (an edited file) or inferred. From there on every table goes the same way.

The policy when the default file is absent is explicit (``data.fallback``): fail, or fall back to
Kaggle (when credentials exist) and then to simulated rows with a loud warning, so a run never
trains on simulated rows without saying so. A path the user names is never replaced: absent, it is
one line and exit 2.
"""

from __future__ import annotations

import dataclasses
import difflib
import errno
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from wgangp.config import CREDITCARD_PATH, SHIPPED_SCHEMAS, DataConfig
from wgangp.data.builtin import kaggle
from wgangp.data.builtin.creditcard import HEADER, creditcard_schema
from wgangp.data.builtin.simulated import simulate_creditcard
from wgangp.data.read.big_tables import (
    EntityShare,
    TableRead,
    cap_rows,
    is_url,
    names_files,
    read_big_table,
    table_files,
)
from wgangp.data.read.data_frame import ORIGIN, read_data_frame
from wgangp.data.read.entity_sample import EntityCap, cap_entities, read_by_entities
from wgangp.data.read.table_reader import CREDITCARD_FILE, TABLE, read_table
from wgangp.data.schema.table_schema import TableSchema, Value
from wgangp.errors import ConfigError, DataError

logger = logging.getLogger("wgangp.data")

KAGGLE_PAGE = "https://www.kaggle.com/datasets/mlg-ulb/creditcardfraud"


@dataclass(frozen=True)
class LoadedTable:
    """A table as read (no value checked yet) and where it came from (recorded with the run)."""

    frame: pd.DataFrame
    provenance: str  # "file" | "kaggle" | "simulated" | "dataframe"
    origin: str  # path of the file read, "DataFrame(... rows)" or "simulated(seed=..., rows=...)"
    #: Kaggle's shipped schema for its file, download and simulated rows; None for another table
    #: (its schema is ``data.schema`` or inferred).
    schema: TableSchema | None = None
    #: How many rows of each class the files held and were kept (``data.max_rows``).
    read: TableRead | None = None
    #: The name of a folder's or a pattern's table (its folder); None: the file's stem.
    table_name: str | None = None
    #: Whether ``schema`` is a shipped one (Kaggle's), not the user's ``data.schema``.
    shipped: bool = False
    #: How validation's lines name the header a shipped schema needs (Kaggle's 31 columns); None
    #: for a table whose schema the user can edit.
    header: str | None = dataclasses.field(init=False)
    #: The table's name in run names and MLflow's dataset: the file's stem (a folder's name), or
    #: simulated.
    name: str = dataclasses.field(init=False)
    #: The class to synthesize as the reader counted it when it sampled the rows (the least
    #: frequent value of the whole table, which a sample may no longer show); None otherwise.
    positive: Value | None = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        # What the later steps ask of a table as read, taken once where it is read.
        read, stem = self.read, self.table_name or Path(self.origin).name.split(".")[0]
        object.__setattr__(self, "header", HEADER if self.shipped else None)
        object.__setattr__(self, "name", "simulated" if self.provenance == "simulated" else stem)
        object.__setattr__(self, "positive", read.positive if read and read.capped else None)


def load_table(
    data_cfg: DataConfig,
    *,
    seed: int,
    launch_dir: Path,
    kaggle_download: Callable[[Path], Path] | None = None,
    credentials_available: Callable[[], bool] | None = None,
    frame: pd.DataFrame | None = None,
) -> LoadedTable:
    """The table ``data_cfg`` names (relative paths from ``launch_dir``), or ``frame`` (a DataFrame
    given in Python), with its configured schema (:func:`configured_schema`), else the default
    path's fallback."""
    if frame is not None:
        return _data_frame(frame, data_cfg, seed, launch_dir)
    if data_cfg.name == "simulated":
        return load_simulated(
            seed=seed,
            rows=data_cfg.simulated_rows,
            max_rows=data_cfg.max_rows,
            by_entity=by_entity(data_cfg),
        )
    schema, header = configured_schema(data_cfg, launch_dir)
    shipped = header is not None
    wanted = resolve_path(data_cfg.path, launch_dir) if data_cfg.path else None
    if wanted is not None and (wanted.exists() or names_files(str(data_cfg.path))):
        # What the reader keeps follows from the config alone: the rare class and the cap.
        label, positive = _rare_class(schema, data_cfg)
        share = by_entity(data_cfg)
        advice = CREDITCARD_FILE if shipped else TABLE
        files = table_files(str(data_cfg.path) if is_url(str(data_cfg.path)) else str(wanted))
        if data_cfg.time is not None:  # a history table: capped by entities, never by rows
            cap = EntityCap(str(data_cfg.entity), data_cfg.max_entities)
            read = read_by_entities(
                files, advice, label=label, positive=positive, cap=cap, seed=seed
            )
        else:
            read = read_big_table(
                files,
                advice,
                label=label,
                positive=positive,
                max_rows=data_cfg.max_rows,
                seed=seed,
                by_entity=share,
            )
        return LoadedTable(read.frame, "file", files.spec, schema, read.read, files.name, shipped)
    if wanted is not None and not at_default_path(data_cfg):
        raise DataError(_absent(data_cfg, wanted))
    return _creditcard_fallback(
        data_cfg,
        wanted,
        seed=seed,
        launch_dir=launch_dir,
        download=kaggle_download or kaggle.download_creditcard,
        has_credentials=credentials_available or kaggle.kaggle_credentials_available,
    )


def _data_frame(
    frame: pd.DataFrame, data_cfg: DataConfig, seed: int, launch_dir: Path
) -> LoadedTable:
    """A DataFrame's rows, with ``data.schema`` when one is given (``creditcard`` too): a frame
    is never at the default path."""
    schema, header = configured_schema(data_cfg, launch_dir) if data_cfg.schema else (None, None)
    label, positive = _rare_class(schema, data_cfg)
    rows = len(frame) if data_cfg.time is not None and isinstance(frame, pd.DataFrame) else None
    read = read_data_frame(
        frame,
        label=label,
        positive=positive,
        max_rows=rows or data_cfg.max_rows,
        seed=seed,
        by_entity=None if rows is not None else by_entity(data_cfg),
    )
    if rows is not None:  # a history table: capped by entities, never by rows
        cap = EntityCap(str(data_cfg.entity), data_cfg.max_entities)
        read = cap_entities(read.frame, label, positive, cap, seed)
    origin = f"{ORIGIN}({read.read.rows or len(read.frame)} rows)"
    return LoadedTable(
        read.frame, "dataframe", origin, schema, read.read, "dataframe", header is not None
    )


def _rare_class(schema: TableSchema | None, data_cfg: DataConfig) -> tuple[str, Value | None]:
    """The label and class to synthesize the reader keeps every row of: the configured schema's,
    else ``data.label`` and ``data.positive``."""
    if schema is not None:
        return schema.label, schema.positive
    return data_cfg.label, data_cfg.positive


def at_default_path(data_cfg: DataConfig) -> bool:
    """Whether ``data.path`` is the ``creditcard`` preset's default file (Kaggle's), or none:
    where its shipped schema and the fallback apply without being named."""
    return data_cfg.name == "creditcard" and (
        data_cfg.path is None or Path(data_cfg.path) == Path(CREDITCARD_PATH)
    )


def configured_schema(
    data_cfg: DataConfig, launch_dir: Path
) -> tuple[TableSchema | None, str | None]:
    """The schema the config gives the table, and for a shipped one how errors name the header
    it needs (None for the user's): ``data.schema`` by name (``creditcard``) or as an edited
    file (with ``data.positive``), Kaggle's at the default path, else None (inferred)."""
    if data_cfg.schema in SHIPPED_SCHEMAS or (
        data_cfg.schema is None and at_default_path(data_cfg)
    ):
        return _with_label(creditcard_schema(), data_cfg, "the shipped schema creditcard"), HEADER
    if data_cfg.schema is None:
        return None, None
    edited = _with_label(
        TableSchema.load(resolve_path(data_cfg.schema, launch_dir)), data_cfg, data_cfg.schema
    )
    if data_cfg.positive is None:
        return edited, None
    try:
        return replace(edited, positive=data_cfg.positive), None
    except ConfigError as err:
        raise ConfigError(f"data.positive={data_cfg.positive}: {err}") from None


def _with_label(schema: TableSchema, data_cfg: DataConfig, named: str) -> TableSchema:
    """``schema``, unless ``data.label`` names another label than its own."""
    if data_cfg.label != DataConfig.label and data_cfg.label != schema.label:
        raise DataError(
            f"data.label={data_cfg.label} but {named} names label {schema.label}; drop data.label "
            "or edit label: in the schema"
        )
    return schema


def _absent(data_cfg: DataConfig, wanted: Path) -> str:
    """The one line for a ``data.path`` the user named that is not there (a close name), or
    whose symbolic link loops or leads nowhere."""
    if wanted.is_symlink():
        fix = "point the link at the table's file, or set data.path to the file itself"
        try:
            os.stat(wanted)
        except OSError as err:
            if err.errno == errno.ELOOP:
                return (
                    f"data.path={data_cfg.path}: {wanted} is a symbolic link that leads back to "
                    f"itself (a loop); {fix}"
                )
        return (
            f"data.path={data_cfg.path}: {wanted} is a symbolic link to {os.readlink(wanted)}, "
            f"which does not exist; {fix}"
        )
    folder = wanted.parent
    names = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
    close = difflib.get_close_matches(wanted.name, names, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return (
        f"data.path={data_cfg.path}: no such file or folder ({wanted}){hint}; check the path (the "
        f"simulated fallback is for the default {CREDITCARD_PATH} only)"
    )


def by_entity(data_cfg: DataConfig) -> EntityShare | None:
    """The cap by entity ``data.entity_share`` asks for, or None (the row cap)."""
    if data_cfg.entity_share is None:
        return None
    return EntityShare(data_cfg.entity, data_cfg.entity_share)


def load_simulated(
    *, seed: int, rows: int, max_rows: int | None = None, by_entity: EntityShare | None = None
) -> LoadedTable:
    """The built-in simulated table (see :mod:`wgangp.data.builtin.simulated`), with Kaggle's
    schema; with ``max_rows``, the rows a file of them would keep (``data.max_rows``, or
    ``by_entity``)."""
    origin = f"simulated(seed={seed}, rows={rows})"
    frame = simulate_creditcard(n_rows=rows, seed=seed)
    schema = creditcard_schema()
    if max_rows is None:
        return LoadedTable(frame, "simulated", origin, schema, shipped=True)
    read = cap_rows(
        frame, schema.label, schema.positive, max_rows, seed, files=0, by_entity=by_entity
    )
    return LoadedTable(read.frame, "simulated", origin, schema, read.read, shipped=True)


def resolve_path(path: str | Path, launch_dir: Path) -> Path:
    """``path`` with ``~`` expanded, relative paths taken from where the user launched the run."""
    resolved = Path(path).expanduser()
    return resolved if resolved.is_absolute() else Path(launch_dir) / resolved


def _creditcard_fallback(
    data_cfg: DataConfig,
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
    if data_cfg.fallback == "error":
        raise DataError(
            f"{where}; put creditcard.csv there, set data.path=/path/to/creditcard.csv, "
            "or use data=simulated"
        )
    cache_dir = resolve_path(Path(data_cfg.cache_dir).expanduser(), launch_dir)
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
    return load_simulated(seed=seed, rows=data_cfg.simulated_rows)


def _kaggle_file(path: Path) -> LoadedTable:
    frame = read_table(path, CREDITCARD_FILE)
    return LoadedTable(frame, "kaggle", str(path), creditcard_schema(), shipped=True)
