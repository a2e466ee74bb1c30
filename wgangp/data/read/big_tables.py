"""A table of any size, read in bounded memory: every rare-class row, at most ``data.max_rows`` of
the rest.

``data.path`` names one Parquet or CSV file (``.csv.gz`` too), a folder of them, a glob
(``data/tx/*.parquet``, ``**`` included) or an object-store URL DuckDB reads (``s3://``,
``gs://``, ``https://``: its ``httpfs`` extension). DuckDB scans the files in bounded memory
(``SET memory_limit``): first it counts the label's values, which names the rare class when
``data.positive`` is null (the least frequent value); when the rest of the rows (every class but
the rare one) fit in ``data.max_rows``, the table is read whole, else the rows kept are every
rare-class row and a uniform subset of ``data.max_rows`` of the rest: the rows whose hash of
(seed, every cell) is smallest (the rare class too, in the odd table where it alone exceeds the
cap). The sample depends on the rows and the seed only, never on the files' order or the
threads, so a run, its resume and ``python -m wgangp.evaluate`` read the same rows; exact copies
of a row are kept or left together, as the split keeps them together (so the copies of the last
row kept may add a few rows to the cap).

The rows kept are written to one temporary file (CSV cells as text, exactly as in the files; Parquet
as typed), which :func:`~wgangp.data.read.table_reader.read_table` reads as it reads any file: a big
table's kept rows get the same parsing as a small table. A single local file within the cap is read
by pandas directly, as before; when DuckDB cannot read a single file, pandas reads it and says in
one line what is wrong with it (or reads it and the cap applies in memory, by the same rule:
:meth:`~wgangp.data.read.duckdb_scan.Scan.kept_where`, a CSV's cells hashed as their text, so a zip
keeps the rows its CSV would).

The label is counted on every row: a gap in it is refused even where the cap leaves its row out.
Which files make the table, and each problem of a folder or a glob (nothing matches, Parquet
beside CSV, an empty file, files whose columns or types differ):
:mod:`wgangp.data.read.table_files`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from wgangp.data.read.duckdb_scan import DuckDBError, is_url, open_rows, open_scan
from wgangp.data.read.parquet_columns import NESTED_LINE, nested_columns, parquet_schema
from wgangp.data.read.table_files import (
    TableFiles,
    check_columns,
    names_files,
    table_columns,
    table_files,
)
from wgangp.data.read.table_reader import (
    PARQUET_SUFFIXES,
    ReadAdvice,
    check_format_matches_name,
    one_line,
    read_cells,
    read_header,
    read_table,
)
from wgangp.data.schema.cells import choose_positive, label_value, no_such_label
from wgangp.data.schema.table_schema import Value
from wgangp.errors import DataError

__all__ = [
    "EntityShare",
    "ReadTable",
    "TableFiles",
    "TableRead",
    "cap_rows",
    "is_url",
    "names_files",
    "read_big_table",
    "table_columns",
    "table_files",
]

log = logging.getLogger("wgangp.data")

#: Rows a CSV line holds at least, per column: one character and a comma (a newline for the last).
_MIN_BYTES_PER_CELL = 2
#: The cells pandas reads as gaps in a CSV (``read_csv``'s default ``na_values``), besides blanks.
_CSV_GAPS = frozenset((
    "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>",
    "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
))  # fmt: skip


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
    #: The rest capped down to ``max_rows`` (the rare class too when it alone exceeds it).
    capped: bool
    max_rows: int
    seed: int
    #: The class to synthesize, as counted (None when the table was not counted).
    positive: Value | None = None
    #: A history table capped by entities (``data.max_entities``, which ``max_rows`` then holds,
    #: :mod:`.entity_sample`): entities with a rare-class row, others kept, others in all.
    entities: tuple[int, int, int] | None = None
    #: The share of the other entities kept (``data.entity_share``); None: a row cap.
    entity_share: float | None = None

    @property
    def rest(self) -> int | None:
        return None if self.rows is None or self.rare is None else self.rows - self.rare

    def describe(self, origin: str, rare_rows: str) -> str:
        """One log line: ``read <origin>: 30000000 rows (51900 with Class=1) in 10 files; kept
        every row with Class=1 and a uniform subset of 1000000 of the 29948100 others``."""
        files = f" in {self.files} files" if self.files > 1 else ""
        counted = f"{self.rows} rows ({self.rare} {rare_rows})" if self.rows is not None else ""
        if self.entities is not None:
            touched, kept, others = self.entities
            subset = "every one" if kept == others else f"a uniform subset of {kept}"
            return (
                f"read {origin}: {counted}{files}; kept every entity holding a row {rare_rows} "
                f"({touched}) and {subset} of the {others} others, whole: {self.kept} rows "
                f"(data.max_entities={self.max_rows}, seed {self.seed})"
            )
        if not self.capped:
            return f"read {origin}: {counted or f'{self.kept} rows'}{files}, every row kept"
        if self.entity_share is not None:
            return (
                f"read {origin}: {counted}{files}; kept every entity with a row {rare_rows} and "
                f"each other entity with probability {self.entity_share:g} "
                f"(data.entity_share, seed {self.seed}): {self.kept} rows"
            )
        kept_rest = self.kept - (self.kept_rare or 0)
        rare = (
            f"every row {rare_rows}"
            if self.kept_rare == self.rare
            else f"a uniform subset of {self.kept_rare} of the {self.rare} rows {rare_rows}"
        )
        return (
            f"read {origin}: {counted}{files}; kept {rare} and a uniform subset of {kept_rest} of "
            f"the {self.rest} others (data.max_rows={self.max_rows}, seed {self.seed})"
        )


@dataclass(frozen=True)
class EntityShare:
    """The cap by entity (``data.entity_share``): every row of each entity holding a rare-class
    row, and each other entity whole with probability ``share``, by a hash of (seed, its id)
    (:meth:`~wgangp.data.read.duckdb_scan.Scan.entity_kept_where`), whatever the table's size:
    the one cap ``privacy.epsilon`` takes, as a row cap lets one entity's rows evict others'.
    ``entity``: ``data.entity`` (None: each distinct row is an entity)."""

    entity: str | None
    share: float


@dataclass(frozen=True)
class ReadTable:
    frame: pd.DataFrame
    read: TableRead


def read_big_table(
    files: TableFiles,
    advice: ReadAdvice,
    *,
    label: str,
    positive: Value | None,
    max_rows: int,
    seed: int,
    by_entity: EntityShare | None = None,
) -> ReadTable:
    """Every rare-class row of the table and at most ``max_rows`` of the rest (module doc); with
    ``by_entity``, that cap instead, whatever the table's size.

    ``label`` and ``positive`` name the rare class (``positive`` None: the least frequent value,
    counted here). A single local file DuckDB cannot read goes to pandas, whose one line says
    why, or which reads it whole (the cap then applies in memory).
    """
    if files.one_local_file:
        path = Path(files.spec)
        if not path.is_file() or path.stat().st_size == 0:
            return _read_whole(path, advice, label, positive, max_rows, seed, by_entity)
        if not files.parquet:
            check_format_matches_name(path)
        columns = read_header(path) or []
        # Small, or a header pandas has a line about (or the schema, for a missing label).
        if (
            (by_entity is None and _surely_within(path, files.parquet, max_rows))
            or label not in columns
            or len(set(columns)) < len(columns)
        ):
            return _read_whole(path, advice, label, positive, max_rows, seed, by_entity)
    else:
        columns = check_columns(files)
        if label not in columns:
            raise DataError(f"{files.spec}: {no_such_label(label, columns)}")
    nested = _nested(files, label)
    columns = [name for name in columns if name not in nested]
    try:
        with open_scan(files.spec, files.files, files.parquet, files.partitions) as scan:
            counts = scan.label_counts(label)
            gaps = [text for text in counts if _is_gap(text, files.parquet)]
            present = {text: n for text, n in counts.items() if text not in gaps}
            chosen, rare_texts = _rare_class(present, label, positive, files.spec)
            rows = sum(counts.values())
            rare = sum(present[text] for text in rare_texts)
            capped = by_entity is not None or rows - rare > max_rows or rare > max_rows
            if gaps and capped:  # rows the cap leaves out: read whole, the schema says so
                first = scan.first_file(label, gaps) if len(files.files) > 1 else None
                missing = sum(counts[text] for text in gaps)
                raise DataError(_gaps_line(files.spec, label, missing, rows, first))
            if files.one_local_file and not capped:
                kept = None  # read below by pandas, as every small file is
            else:
                where = "true"
                if by_entity is not None:
                    where = scan.entity_kept_where(
                        columns, label, rare_texts, by_entity.entity, by_entity.share, seed
                    )
                elif capped:
                    where = scan.kept_where(columns, label, rare_texts, max_rows, seed)
                kept = scan.kept_rows(columns, where)
    except DuckDBError as err:
        if files.one_local_file:
            log.debug("DuckDB could not read %s (%s); pandas reads it", files.spec, err)
            return _read_whole(Path(files.spec), advice, label, positive, max_rows, seed, by_entity)
        raise DataError(
            f"{files.spec}: the table's files cannot be read ({one_line(err)}); every file must "
            "be a readable Parquet or comma-separated UTF-8 CSV file with the same header"
        ) from None
    if nested and kept is not None:
        log.info("%s: %s", files.spec, NESTED_LINE.format(names=", ".join(nested)))
    frame = read_table(Path(files.spec), advice) if kept is None else kept
    kept_rare = _count_rare(frame, label, chosen)
    read = TableRead(
        files=len(files.files), rows=rows, rare=rare, kept=len(frame), kept_rare=kept_rare,
        capped=capped, max_rows=max_rows, seed=seed, positive=chosen,
        entity_share=by_entity.share if by_entity is not None else None,
    )  # fmt: skip
    return ReadTable(frame, read)


def cap_rows(
    frame: pd.DataFrame,
    label: str,
    positive: Value | None,
    max_rows: int,
    seed: int,
    files: int,
    cells: pd.DataFrame | None = None,
    source: str = "data",
    by_entity: EntityShare | None = None,
) -> ReadTable:
    """A table already in memory (a zip, a file DuckDB could not read, simulated rows) under the
    same cap and by the same rule as the files' scan
    (:meth:`~wgangp.data.read.duckdb_scan.Scan.kept_where`); the frame itself (no copy) when
    nothing is over the cap. ``cells``: a CSV's cells as their text
    (:func:`~wgangp.data.read.table_reader.read_cells`), which the rule hashes as the scan of the
    CSV does; else the frame's values."""
    unread = ReadTable(frame, TableRead(files, None, None, len(frame), None, False, max_rows, seed))
    if label not in frame.columns or len(frame) == 0:  # the schema's or validation's line
        return unread
    hashed = frame if cells is None else cells
    texts = _label_texts(hashed[label])
    counted = {(None if pd.isna(k) else str(k)): int(v) for k, v in texts.value_counts().items()}
    counted[None] = int(texts.isna().sum())
    gaps = [text for text in counted if _is_gap(text, cells is None)]
    present = {text: n for text, n in counted.items() if text not in gaps}
    try:
        chosen, rare_texts = _rare_class(present, label, positive, "data")
    except DataError:  # the schema's inference says the same of the whole table, with its name
        return unread
    rows, rare = len(frame), sum(present[text] for text in rare_texts)
    capped = by_entity is not None or rows - rare > max_rows or rare > max_rows
    if capped:
        missing = sum(counted[text] for text in gaps)
        if missing:
            raise DataError(_gaps_line(source, label, missing, rows, None))
        columns = list(frame.columns)
        with open_rows(_hashable(hashed.assign(**{label: texts}))) as scan:
            if by_entity is not None:
                where = scan.entity_kept_where(
                    columns, label, rare_texts, by_entity.entity, by_entity.share, seed
                )
            else:
                where = scan.kept_where(columns, label, rare_texts, max_rows, seed)
            frame = frame.iloc[scan.kept_positions(where)].reset_index(drop=True)
    kept_rare = _count_rare(frame, label, chosen)
    share = by_entity.share if by_entity is not None else None
    read = TableRead(
        files, rows, rare, len(frame), kept_rare, capped, max_rows, seed, chosen, entity_share=share
    )
    return ReadTable(frame, read)


def _read_whole(
    path: Path,
    advice: ReadAdvice,
    label: str,
    positive: Value | None,
    max_rows: int,
    seed: int,
    by_entity: EntityShare | None = None,
) -> ReadTable:
    frame = read_table(path, advice)
    cells = None
    over = by_entity is not None or len(frame) > max_rows
    if over and path.suffix.lower() not in PARQUET_SUFFIXES:
        cells = read_cells(path)  # the rule hashes a CSV's text, as the scan of the CSV does
    return cap_rows(
        frame, label, positive, max_rows, seed, 1, cells, source=str(path), by_entity=by_entity
    )


def _nested(files: TableFiles, label: str) -> list[str]:
    """The table's nested columns (its first file's: the files' types agree), never the label."""
    first = files.files[0]
    if not files.parquet or is_url(first):
        return []
    nested = nested_columns(parquet_schema(first))
    if label in nested:
        raise DataError(
            f"{files.spec}: label column {label} holds lists, structs or maps (nested values); "
            "the label needs one class per row: set data.label=<column>"
        )
    return nested


def _is_gap(text: str | None, parquet: bool) -> bool:
    """Whether a label cell's text is a gap, as pandas reads the file: no value, blank, or in a
    CSV one of pandas' gap words (``NA``, ``null``...)."""
    return text is None or not text.strip() or (not parquet and text in _CSV_GAPS)


def _gaps_line(source: str, label: str, missing: int, rows: int, first: str | None) -> str:
    where = f" (first in {first})" if first else ""
    return (
        f"{source}: label column {label} has {missing} missing value(s) among its {rows} rows"
        f"{where}; drop those rows, every row needs its class"
    )


def _hashable(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows DuckDB can hash: a column of mixed Python values as their text (gaps stay gaps)."""
    mixed = [
        name
        for name in frame.columns
        if frame[name].dtype == object
        and not frame[name].map(lambda v: v is None or isinstance(v, str)).all()
    ]
    if not mixed:
        return frame
    texts = {name: frame[name].map(lambda v: None if pd.isna(v) else str(v)) for name in mixed}
    return frame.assign(**texts)


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
