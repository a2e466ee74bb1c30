"""A table of any size, read in bounded memory: every rare-class row, at most ``data.max_rows`` of
the rest.

``data.path`` names one Parquet or CSV file (``.csv.gz`` too), a folder of them, a glob
(``data/tx/*.parquet``, ``**`` included) or an object-store URL DuckDB reads (``s3://``,
``gs://``, ``https://``: its ``httpfs`` extension). DuckDB scans the files in bounded memory
(``SET memory_limit``): first it counts the label's values, which names the rare class when
``data.positive`` is null (the least frequent value); when the rest of the rows (every class but
the rare one) fit in ``data.max_rows``, the table is read whole, else the rows kept are every
rare-class row and a uniform sample of ``data.max_rows`` of the rest: the rows whose hash of
(seed, every cell) is smallest (the rare class too, in the odd table where it alone exceeds the
cap). The sample depends on the rows and the seed only, never on the files' order or the
threads, so a run, its resume and ``python -m wgangp.evaluate`` read the same rows; exact copies
of a row are kept or left together, as the split keeps them together (so the copies of the last
row kept may add a few rows to the cap).

The rows kept are written to one temporary file (CSV cells as text, exactly as in the files;
Parquet as typed), which :func:`~wgangp.data.table_reader.read_table` reads as it reads any file:
a big table's kept rows get the same parsing as a small table. A single local file within the
cap is read by pandas directly, as before; when DuckDB cannot read a single file, pandas reads it
and says in one line what is wrong with it (or reads it and the cap applies in memory).

Each problem of a folder or a glob is one line: nothing matches, a folder without table files,
Parquet beside CSV, an empty file, files whose columns differ.
"""

from __future__ import annotations

import glob
import logging
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from wgangp.data.duckdb_scan import (
    DuckDBError,
    is_url,
    open_scan,
    remote_columns,
    remote_files,
)
from wgangp.data.file_format import check_format_matches_name
from wgangp.data.schema_inference import choose_positive, label_value, no_such_label
from wgangp.data.table_reader import (
    PARQUET_SUFFIXES,
    ReadAdvice,
    one_line,
    read_header,
    read_table,
)
from wgangp.data.table_schema import Value
from wgangp.errors import DataError

log = logging.getLogger("wgangp.data")

CSV_SUFFIXES = (".csv", ".csv.gz")
#: Rows a CSV line holds at least, per column: one character and a comma (a newline for the last).
_MIN_BYTES_PER_CELL = 2


@dataclass(frozen=True)
class TableFiles:
    """The files ``data.path`` names, all of one format."""

    spec: str  # data.path as resolved: a file, a folder, a pattern or a URL
    files: tuple[str, ...]
    parquet: bool

    @property
    def one_local_file(self) -> bool:
        return len(self.files) == 1 and self.files[0] == self.spec and not is_url(self.spec)

    @property
    def name(self) -> str:
        """The table's name for runs and MLflow: the file's stem, the folder's name, or the
        last part of a pattern without wildcards."""
        if self.one_local_file or is_url(self.spec) and not _is_pattern(self.spec):
            return self.spec.rstrip("/").rsplit("/", 1)[-1].split(".")[0]
        parts = [p for p in re.split(r"[/\\]", self.spec) if p and not _is_pattern(p)]
        return (parts[-1].split(".")[0] if parts else "table") or "table"


@dataclass(frozen=True)
class TableRead:
    """How a table was read: rows per class in the files, rows kept, and how they were chosen."""

    files: int
    #: Rows in the files, and of them of the rare class (None: not counted, a small file).
    rows: int | None
    rare: int | None
    #: Rows kept, and of them of the rare class (the frame's).
    kept: int
    kept_rare: int | None
    #: The rest sampled down to ``max_rows`` (the rare class too when it alone exceeds it).
    sampled: bool
    max_rows: int
    seed: int
    #: The class to synthesize, as counted (None when the table was not counted).
    positive: Value | None = None

    @property
    def rest(self) -> int | None:
        return None if self.rows is None or self.rare is None else self.rows - self.rare

    def describe(self, origin: str, rare_rows: str) -> str:
        """One log line: ``read <origin>: 30000000 rows (51900 with Class=1) in 10 files; kept
        every row with Class=1 and a uniform sample of 1000000 of the 29948100 others``."""
        files = f" in {self.files} files" if self.files > 1 else ""
        counted = f"{self.rows} rows ({self.rare} {rare_rows})" if self.rows is not None else ""
        if not self.sampled:
            return f"read {origin}: {counted or f'{self.kept} rows'}{files}, every row kept"
        kept_rest = self.kept - (self.kept_rare or 0)
        rare = (
            f"every row {rare_rows}"
            if self.kept_rare == self.rare
            else f"a uniform sample of {self.kept_rare} of the {self.rare} rows {rare_rows}"
        )
        return (
            f"read {origin}: {counted}{files}; kept {rare} and a uniform sample of {kept_rest} of "
            f"the {self.rest} others (data.max_rows={self.max_rows}, seed {self.seed})"
        )

    def tags(self) -> dict[str, str]:
        """MLflow tags: what was read and kept (``data.read.*``)."""
        found = {
            "data.read.files": str(self.files),
            "data.read.kept": str(self.kept),
            "data.read.sampled": str(self.sampled).lower(),
            "data.read.max_rows": str(self.max_rows),
        }
        if self.rows is not None:
            found |= {"data.read.rows": str(self.rows), "data.read.rare": str(self.rare)}
        if self.kept_rare is not None:
            found["data.read.kept_rare"] = str(self.kept_rare)
        if self.sampled:
            found["data.read.how"] = (
                f"every rare-class row up to {self.max_rows}, and a uniform sample of "
                f"{self.max_rows} of the rest (smallest hash of seed {self.seed} and each row)"
            )
        return found


@dataclass(frozen=True)
class ReadTable:
    frame: pd.DataFrame
    read: TableRead


def _is_pattern(text: str) -> bool:
    return any(c in text for c in "*?[")


def names_files(path: str) -> bool:
    """Whether ``data.path`` names files for :func:`table_files` even though no file of that
    name exists: a pattern or a URL."""
    return is_url(path) or _is_pattern(path)


def table_files(spec: str) -> TableFiles:
    """The files ``spec`` names (one file, a folder's table files, a glob's matches, a URL),
    sorted, all Parquet or all CSV; each problem one DataError line."""
    if is_url(spec):
        files = remote_files(spec) if _is_pattern(spec) else [spec]
        if not files:
            raise DataError(
                f"no file matches data.path={spec}; check the pattern and the credentials"
            )
    elif _is_pattern(spec):
        files = sorted(
            p for p in glob.glob(spec, recursive=True) if Path(p).is_file() and _is_table(p)
        )
        if not files:
            raise DataError(
                f"no Parquet or CSV file matches data.path={spec}; check the pattern (e.g. "
                "data/transactions/*.parquet) or give a file or a folder"
            )
    elif Path(spec).is_dir():
        files = sorted(str(p) for p in Path(spec).iterdir() if p.is_file() and _is_table(p.name))
        if not files:
            raise DataError(
                f"{spec} is a folder without Parquet or CSV files (.parquet, .pq, .csv, "
                ".csv.gz); put the table's files there, or set data.path to one file"
            )
    else:
        files = [spec]
    parquet = [f for f in files if _suffix(f) in PARQUET_SUFFIXES]
    if parquet and len(parquet) < len(files):
        other = next(f for f in files if f not in parquet)
        raise DataError(
            f"{spec} holds both Parquet and CSV files ({Path(parquet[0]).name}, "
            f"{Path(other).name}); keep the files of one table in one format"
        )
    return TableFiles(spec, tuple(files), parquet=bool(parquet))


def table_columns(files: TableFiles) -> list[str] | None:
    """The first file's column names, read without its rows; None when it cannot be read (the
    reading's one line comes later)."""
    first = files.files[0]
    if is_url(first):
        return remote_columns(first, files.parquet)
    return read_header(Path(first)) if Path(first).is_file() else None


def read_big_table(
    files: TableFiles,
    advice: ReadAdvice,
    *,
    label: str,
    positive: Value | None,
    max_rows: int,
    seed: int,
) -> ReadTable:
    """Every rare-class row of the table and at most ``max_rows`` of the rest (module doc).

    ``label`` and ``positive`` name the rare class (``positive`` None: the least frequent value,
    counted here). A single local file DuckDB cannot read goes to pandas, whose one line says
    why, or which reads it whole (the cap then applies in memory).
    """
    if files.one_local_file:
        path = Path(files.spec)
        if not path.is_file() or path.stat().st_size == 0:
            return _read_whole(path, advice, label, positive, max_rows, seed)
        if not files.parquet:
            check_format_matches_name(path)
        columns = read_header(path) or []
        # Small, or a header pandas has a line about (or the schema, for a missing label).
        if (
            _surely_within(path, files.parquet, max_rows)
            or label not in columns
            or len(set(columns)) < len(columns)
        ):
            return _read_whole(path, advice, label, positive, max_rows, seed)
    else:
        columns = _check_columns(files)
        if label not in columns:
            raise DataError(f"{files.spec}: {no_such_label(label, columns)}")
    try:
        with open_scan(files.spec, files.files, files.parquet) as scan:
            counts = scan.label_counts(label)
            chosen, rare_texts = _rare_class(counts, label, positive, files.spec)
            rows = sum(counts.values())
            rare = sum(counts[text] for text in rare_texts)
            sampled = rows - rare > max_rows or rare > max_rows
            if files.one_local_file and not sampled:
                kept = None  # read below by pandas, as every small file is
            else:
                kept = scan.kept_rows(columns, label, rare_texts, max_rows, seed, sampled)
    except DuckDBError as err:
        if files.one_local_file:
            log.debug("DuckDB could not read %s (%s); pandas reads it", files.spec, err)
            return _read_whole(Path(files.spec), advice, label, positive, max_rows, seed)
        raise DataError(
            f"{files.spec}: the table's files cannot be read ({one_line(err)}); every file must "
            "be a readable Parquet or comma-separated UTF-8 CSV file with the same header"
        ) from None
    frame = read_table(Path(files.spec), advice) if kept is None else kept
    kept_rare = _count_rare(frame, label, chosen)
    read = TableRead(
        files=len(files.files), rows=rows, rare=rare, kept=len(frame), kept_rare=kept_rare,
        sampled=sampled, max_rows=max_rows, seed=seed, positive=chosen,
    )  # fmt: skip
    return ReadTable(frame, read)


def cap_rows(
    frame: pd.DataFrame, label: str, positive: Value | None, max_rows: int, seed: int, files: int
) -> ReadTable:
    """A table already in memory (a zip, a file DuckDB could not read, simulated rows) under the
    same cap: every rare-class row and a uniform sample of ``max_rows`` of the rest, by seed; the
    frame itself (no copy) when nothing is over the cap."""
    unread = ReadTable(frame, TableRead(files, None, None, len(frame), None, False, max_rows, seed))
    if label not in frame.columns or len(frame) == 0:  # the schema's or validation's line
        return unread
    texts = _label_texts(frame[label])
    counted = {(None if pd.isna(k) else str(k)): int(v) for k, v in texts.value_counts().items()}
    try:
        chosen, rare_texts = _rare_class(counted, label, positive, "data")
    except DataError:  # the schema's inference says the same of the whole table, with its name
        return unread
    is_rare = texts.isin(rare_texts).to_numpy()
    rows, rare = len(frame), int(is_rare.sum())
    sampled = rows - rare > max_rows or rare > max_rows
    if sampled:
        rng = np.random.Generator(np.random.PCG64(seed))
        keep = np.zeros(rows, dtype=bool)
        for mask in (is_rare, ~is_rare):
            where = np.flatnonzero(mask)
            keep[rng.choice(where, size=min(max_rows, len(where)), replace=False)] = True
        frame = frame[keep].reset_index(drop=True)
        is_rare = is_rare[keep]
    read = TableRead(
        files, rows, rare, len(frame), int(is_rare.sum()), sampled, max_rows, seed, chosen
    )
    return ReadTable(frame, read)


def _read_whole(
    path: Path, advice: ReadAdvice, label: str, positive: Value | None, max_rows: int, seed: int
) -> ReadTable:
    return cap_rows(read_table(path, advice), label, positive, max_rows, seed, files=1)


def _surely_within(path: Path, parquet: bool, max_rows: int) -> bool:
    """Whether the file cannot hold more than ``max_rows`` rows, known without a scan: a
    Parquet file's row count, or a plain CSV too short for more lines (a compressed one is
    counted)."""
    if parquet:
        try:
            import pyarrow.parquet as pq

            return pq.ParquetFile(path).metadata.num_rows <= max_rows
        except Exception:  # not Parquet after all: the reader's line says so
            return True
    if path.name.lower().endswith((".gz", ".zip")):
        return path.name.lower().endswith(".zip")  # DuckDB reads no zip: pandas does
    names = read_header(path)
    if not names:
        return True
    return path.stat().st_size <= max_rows * _MIN_BYTES_PER_CELL * len(names)


def _check_columns(files: TableFiles) -> list[str]:
    """The columns of the table's first file; every other file must have the same (in any
    order), no name twice, and no file may be empty."""
    first: list[str] | None = None
    for name in files.files:
        if not is_url(name):
            path = Path(name)
            if path.stat().st_size == 0:
                raise DataError(
                    f"{name} is empty (0 bytes, no rows); remove it from {files.spec} or write "
                    "it again"
                )
            if not files.parquet:
                check_format_matches_name(path)
            columns = read_header(path)
        else:
            columns = remote_columns(name, files.parquet)
        if not columns:
            raise DataError(
                f"{name} cannot be read as a {'Parquet' if files.parquet else 'CSV'} table (no "
                "header); write it again, or remove it from the table's files"
            )
        repeated = sorted({c for c in columns if columns.count(c) > 1})
        if repeated:
            raise DataError(
                f"{name}: column(s) {', '.join(repeated[:5])} appear more than once in the "
                "header; rename or drop the copies, every column needs its own name"
            )
        if first is None:
            first = columns
            continue
        missing = [c for c in first if c not in columns]
        extra = [c for c in columns if c not in first]
        if missing or extra:
            differ = "; ".join(
                f"{what} {', '.join(names[:5])}"
                for what, names in (("missing", missing), ("extra", extra))
                if names
            )
            raise DataError(
                f"{name}: its columns differ from those of {files.files[0]} ({differ}); every "
                "file of one table needs the same columns"
            )
    assert first is not None
    return first


def _rare_class(
    counts: dict[str | None, int], label: str, positive: Value | None, source: str
) -> tuple[Value, list[str]]:
    """The class to synthesize (``positive``, or the least frequent label value) and the label
    texts that spell it (``1`` and ``1.0`` are both the integer 1)."""
    by_value: dict[Value, int] = {}
    texts: dict[Value, list[str]] = {}
    for text, count in counts.items():
        if text is None:
            continue
        value = label_value(text)
        by_value[value] = by_value.get(value, 0) + count
        texts.setdefault(value, []).append(text)
    chosen = choose_positive(by_value, label, positive, source)
    return chosen, texts[chosen]


def _count_rare(frame: pd.DataFrame, label: str, positive: Value) -> int:
    texts = _label_texts(frame[label])
    lookup = {text: label_value(text) == positive for text in pd.unique(texts.dropna())}
    return int(texts.map(lookup).fillna(False).astype(bool).sum())


def _label_texts(labels: pd.Series) -> pd.Series:
    """Each label cell as text, as DuckDB casts it (``1``, ``1.0``, ``bad``; gaps stay gaps),
    looked up once per distinct value."""
    lookup = {
        value: str(value.item() if isinstance(value, np.generic) else value)
        for value in pd.unique(labels)
        if not pd.isna(value)
    }
    return labels.map(lookup)


def _suffix(name: str) -> str:
    lower = name.lower()
    return ".csv.gz" if lower.endswith(".csv.gz") else Path(lower).suffix


def _is_table(name: str) -> bool:
    base = Path(name).name
    return not base.startswith((".", "_")) and _suffix(base) in (*PARQUET_SUFFIXES, *CSV_SUFFIXES)
