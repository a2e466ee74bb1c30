"""DuckDB over a table's files, or over rows in memory: one connection in bounded memory that
spills to a temporary folder, the label counts and the kept rows of
:mod:`wgangp.data.read.big_tables`, object-store access.

The rows the cap keeps follow ONE rule, :meth:`Scan.kept_where`, whether DuckDB reads the files
or the rows are already in memory (a zip, a file pandas read, simulated rows): every rare-class
row and the ``max_rows`` rows of the rest with the smallest ``hash(seed, every cell)``. A CSV's
cells are hashed as their text in both cases, so a zip and the CSV it holds keep the same rows.

Each query runs in a worker thread while the main thread waits: a signal's handler (SIGTERM,
Ctrl-C) then raises in the main thread as it would anywhere else, and the query is interrupted;
DuckDB, asked to check signals itself, would swallow the handler's exception into its own
"Query interrupted" error.

Every SQL text and name is quoted here (:func:`sql_text`, :func:`sql_name`); DuckDB's own
exceptions end as :class:`DuckDBError` (one line) or :class:`~wgangp.errors.DataError`.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from wgangp.data.read.table_reader import TABLE, one_line, read_table
from wgangp.errors import DataError

#: DuckDB's memory while it scans and samples (it spills to a temporary folder beyond it).
READ_MEMORY = "1GB"
#: The URL schemes handed to DuckDB as they are (its httpfs extension reads them).
URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")
#: The column naming each row's file, and the column of a frame's row positions.
_FILE, _ROW = "__wgangp_file", "__wgangp_row"
#: How often the main thread looks up from a query (a signal wakes it at once).
_POLL_S = 0.2


def is_url(path: str | Path) -> bool:
    return bool(URL.match(str(path)))


def sql_text(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def sql_name(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def literal_path(path: str) -> str:
    """A local file's name as DuckDB's readers take it literally: they glob every name, so a
    file ``a[1].csv`` would be the pattern matching ``a1.csv``; each glob character is escaped
    as a one-character class (``[[]``)."""
    return path if is_url(path) else re.sub(r"([\[?*])", r"[\1]", path)


class DuckDBError(Exception):
    """What DuckDB raised, as one exception type the callers catch."""


class Scan:
    """One DuckDB connection over the table's rows: ``source`` is the SQL that reads them."""

    def __init__(
        self, connection, source: str, parquet: bool, spill: Path, reader: str = ""
    ) -> None:
        self.con, self.source, self.parquet, self.spill = connection, source, parquet, spill
        self._reader = reader  # the files' reader without its closing parenthesis

    def sql(self, query: str) -> list[tuple]:
        """The query's rows; it runs in a worker thread, interrupted when the main thread is."""
        outcome: dict[str, object] = {}
        done = threading.Event()  # not Thread.join: an interrupted join marks the thread ended

        def run() -> None:
            try:
                outcome["rows"] = self.con.execute(query).fetchall()
            except BaseException as err:  # duckdb.Error and its subclasses, IO errors
                outcome["error"] = err
            finally:
                done.set()

        threading.Thread(target=run, name="wgangp-duckdb", daemon=True).start()
        try:
            while not done.wait(_POLL_S):
                pass
        except BaseException:  # a signal's exception: stop the query, then let it go on
            self.con.interrupt()
            done.wait()
            raise
        if "error" in outcome:
            raise DuckDBError(one_line(outcome["error"])) from None  # type: ignore[arg-type]
        return outcome["rows"]  # type: ignore[return-value]

    def label_counts(self, label: str) -> dict[str | None, int]:
        rows = self.sql(
            f"SELECT CAST({sql_name(label)} AS VARCHAR) AS v, count(*) FROM {self.source} "
            "GROUP BY v"
        )
        return {text: int(n) for text, n in rows}

    def first_file(self, label: str, texts: Sequence[str | None]) -> str | None:
        """The first file (by name) holding one of the label ``texts`` (None: a gap)."""
        if not self._reader:
            return None
        cell = f"CAST({sql_name(label)} AS VARCHAR)"
        listed = [t for t in texts if t is not None]
        where = f"{cell} IS NULL" + (
            f" OR {cell} IN ({', '.join(sql_text(t) for t in listed)})" if listed else ""
        )
        reader = f"{self._reader}, filename = {sql_text(_FILE)})"
        rows = self.sql(f"SELECT min({sql_name(_FILE)}) FROM {reader} WHERE {where}")
        return rows[0][0] if rows else None

    def kept_where(
        self,
        columns: Sequence[str],
        label: str,
        rare_texts: Sequence[str],
        max_rows: int,
        seed: int,
    ) -> str:
        """THE rule for the rows a table keeps over the cap: every rare-class row and the
        ``max_rows`` rows of the rest with the smallest hash of (seed, every cell), the rare
        class too when it alone exceeds the cap; exact copies of a row share a hash, so they
        are kept or left together. A SQL condition over ``source``."""
        key = f"hash({int(seed)}, {', '.join(sql_name(c) for c in columns)})"
        rare = (
            f"coalesce(CAST({sql_name(label)} AS VARCHAR) IN "
            f"({', '.join(sql_text(t) for t in rare_texts)}), false)"
        )
        self.sql("SET preserve_insertion_order = false")  # any order: only keys come back
        limits = []
        for side in (rare, f"NOT {rare}"):
            cut = self.sql(
                f"SELECT k FROM (SELECT {key} AS k FROM {self.source} WHERE {side}) "
                f"ORDER BY k LIMIT 1 OFFSET {int(max_rows) - 1}"
            )
            limits.append(f"({side} AND {key} <= {int(cut[0][0])})" if cut else f"({side})")
        # The kept rows in the files' order (files sorted by name): the same rows, in the same
        # order, whatever the threads.
        self.sql("SET preserve_insertion_order = true")
        return " OR ".join(limits)

    def entity_kept_where(
        self,
        columns: Sequence[str],
        label: str,
        rare_texts: Sequence[str],
        entity: str | None,
        share: float,
        seed: int,
    ) -> str:
        """THE rule for the rows a table keeps by entity (``data.entity_share``): every row of
        an entity that holds a rare-class row, and every row of each other entity whose hash of
        (seed, its id; without ``entity``, its every cell) falls below ``share`` of the hashes'
        range. Each entity is kept or left whole by its own rows alone, at a rate fixed before
        the table is read: one entity more evicts no other's rows. A SQL condition over
        ``source``."""
        cells = [entity] if entity is not None else list(columns)
        key = f"hash({int(seed)}, {', '.join(sql_name(c) for c in cells)})"
        rare = (
            f"coalesce(CAST({sql_name(label)} AS VARCHAR) IN "
            f"({', '.join(sql_text(t) for t in rare_texts)}), false)"
        )
        if entity is not None:
            rare = (
                f"{sql_name(entity)} IN (SELECT {sql_name(entity)} FROM {self.source} WHERE {rare})"
            )
        cut = min(int(share * 2.0**64), 2**64 - 1)
        return f"({rare}) OR ({key} < {cut}::UHUGEINT)"

    def kept_rows(self, columns: Sequence[str], where: str = "true") -> pd.DataFrame:
        """The rows ``where`` keeps (every row by default), through one temporary file."""
        suffix = ".parquet" if self.parquet else ".csv"
        out = self.spill / f"kept{suffix}"
        fmt = "FORMAT parquet" if self.parquet else "FORMAT csv, HEADER true"
        names = ", ".join(sql_name(c) for c in columns)
        self.sql(
            f"COPY (SELECT {names} FROM {self.source} WHERE {where}) TO {sql_text(str(out))} "
            f"({fmt})"
        )
        return read_table(out, TABLE)

    def kept_positions(self, where: str) -> np.ndarray:
        """The positions of the rows ``where`` keeps, of rows in memory (:func:`open_rows`)."""
        rows = self.sql(f"SELECT {sql_name(_ROW)} FROM {self.source} WHERE {where} ORDER BY 1")
        return np.asarray([row[0] for row in rows], dtype=np.int64)


def files_reader(files: Sequence[str], parquet: bool, partitions: Sequence[str] = ()) -> str:
    """The DuckDB reader of ``files``, without its closing parenthesis: every column by name
    across the files; a CSV's cells as their text (the kept rows reach pandas as they are in the
    files); Hive partition folders as text columns when the table has them."""
    listed = "[" + ", ".join(sql_text(literal_path(f)) for f in files) + "]"
    options = "union_by_name = true"
    if not any(is_url(f) for f in files):  # object stores keep DuckDB's own detection
        hive = "true, hive_types_autocast = false" if partitions else "false"
        options += f", hive_partitioning = {hive}"
    if parquet:
        return f"read_parquet({listed}, {options}"
    return (
        f"read_csv({listed}, header = true, delim = ',', quote = '\"', escape = '\"', "
        f"all_varchar = true, {options}"
    )


@contextlib.contextmanager
def open_scan(
    spec: str, files: Sequence[str], parquet: bool, partitions: Sequence[str] = ()
) -> Iterator[Scan]:
    """A DuckDB connection over ``files`` (all Parquet, or all CSV; ``data.path`` was ``spec``) in
    bounded memory that spills to a temporary folder."""
    with _connection(spec) as (con, spill):
        if any(is_url(f) for f in files):
            try:
                remote_access(con)
            except Exception as err:  # no extension (no network), a refused secret
                raise DuckDBError(one_line(err)) from None
        reader = files_reader(files, parquet, partitions)
        yield Scan(con, reader + ")", parquet, spill, reader)


@contextlib.contextmanager
def open_rows(frame: pd.DataFrame) -> Iterator[Scan]:
    """A DuckDB connection over rows in memory (their positions in a column of their own)."""
    with _connection("data") as (con, spill):
        con.register("wgangp_rows", frame.assign(**{_ROW: np.arange(len(frame))}))
        yield Scan(con, "wgangp_rows", False, spill)


@contextlib.contextmanager
def _connection(spec: str) -> Iterator[tuple[object, Path]]:
    try:
        import duckdb
    except ImportError as err:  # a broken install: the dependency is declared
        raise DataError(
            f"{spec}: reading a folder, a pattern or a table over data.max_rows needs "
            f"DuckDB ({err}); reinstall wgangp (pip install -e .)"
        ) from None
    with tempfile.TemporaryDirectory(prefix="wgangp-read-") as folder:
        spill = Path(folder)
        con = duckdb.connect(config={"memory_limit": READ_MEMORY})
        try:
            con.execute(f"SET temp_directory = {sql_text(str(spill / 'spill'))}")
            yield con, spill
        finally:
            con.close()


#: The environment variables holding a GCS HMAC key (gs:// through the S3 interoperability API).
GCS_KEY_VARIABLES = ("GCS_HMAC_KEY_ID", "GCS_HMAC_SECRET")


def remote_access(con) -> None:
    """Object storage through DuckDB's httpfs extension (installed from DuckDB's extension
    repository on first use), with the credentials of the environment: AWS's credential chain
    for s3:// (environment, ~/.aws, an instance role; DuckDB's aws extension), a GCS HMAC key
    from ``GCS_HMAC_KEY_ID``/``GCS_HMAC_SECRET`` for gs://; public objects need none."""
    con.execute("INSTALL httpfs")
    con.execute("LOAD httpfs")
    with contextlib.suppress(Exception):  # no chain (or no aws extension): public buckets read
        con.execute("CREATE OR REPLACE SECRET (TYPE s3, PROVIDER credential_chain)")
    key, secret = (os.environ.get(name) for name in GCS_KEY_VARIABLES)
    if key and secret:
        con.execute(
            f"CREATE OR REPLACE SECRET (TYPE gcs, KEY_ID {sql_text(key)}, "
            f"SECRET {sql_text(secret)})"
        )


def remote_files(pattern: str) -> list[str]:
    import duckdb

    con = duckdb.connect()
    try:
        remote_access(con)
        return sorted(
            row[0] for row in con.execute(f"SELECT file FROM glob({sql_text(pattern)})").fetchall()
        )
    except duckdb.Error as err:
        raise DataError(f"cannot list data.path={pattern} ({one_line(err)}); check it") from None
    finally:
        con.close()


def remote_columns(name: str, parquet: bool) -> list[str]:
    import duckdb

    con = duckdb.connect()
    try:
        remote_access(con)
        reader = "read_parquet" if parquet else "read_csv"
        rows = con.execute(f"DESCRIBE SELECT * FROM {reader}({sql_text(name)})").fetchall()
        return [row[0] for row in rows]
    except duckdb.Error as err:
        raise DataError(f"cannot read {name} ({one_line(err)}); check data.path") from None
    finally:
        con.close()
