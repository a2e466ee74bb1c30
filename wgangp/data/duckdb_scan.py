"""DuckDB over a table's files: one connection in bounded memory that spills to a temporary folder,
the label counts and the kept rows of :mod:`wgangp.data.big_tables`, object-store access.

Every SQL text and name is quoted here (:func:`sql_text`, :func:`sql_name`); DuckDB's own
exceptions end as :class:`DuckDBError` (one line) or :class:`~wgangp.errors.DataError`.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import pandas as pd

from wgangp.data.table_reader import TABLE, one_line, read_table
from wgangp.errors import DataError

#: DuckDB's memory while it scans and samples (it spills to a temporary folder beyond it).
READ_MEMORY = "1GB"
#: The URL schemes handed to DuckDB as they are (its httpfs extension reads them).
URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")


def is_url(path: str | Path) -> bool:
    return bool(URL.match(str(path)))


def sql_text(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def sql_name(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class DuckDBError(Exception):
    """What DuckDB raised, as one exception type the callers catch."""


class Scan:
    """One DuckDB connection over the table's files."""

    def __init__(self, connection, files: Sequence[str], parquet: bool, spill: Path) -> None:
        self.con, self.parquet, self.spill = connection, parquet, spill
        listed = "[" + ", ".join(sql_text(f) for f in files) + "]"
        if parquet:
            self.source = f"read_parquet({listed}, union_by_name = true)"
        else:  # every cell as its text: the kept rows reach pandas as they are in the files
            self.source = (
                f"read_csv({listed}, header = true, delim = ',', quote = '\"', escape = '\"', "
                "all_varchar = true, union_by_name = true)"
            )

    def sql(self, query: str) -> list[tuple]:
        try:
            return self.con.execute(query).fetchall()
        except Exception as err:  # duckdb.Error and its subclasses, IO errors
            raise DuckDBError(one_line(err)) from None

    def label_counts(self, label: str) -> dict[str | None, int]:
        rows = self.sql(
            f"SELECT CAST({sql_name(label)} AS VARCHAR) AS v, count(*) FROM {self.source} "
            "GROUP BY v"
        )
        return {text: int(n) for text, n in rows}

    def kept_rows(
        self,
        columns: Sequence[str],
        label: str,
        rare_texts: Sequence[str],
        max_rows: int,
        seed: int,
        sampled: bool,
    ) -> pd.DataFrame:
        """Every row (``sampled`` false) or the sample, through one temporary file."""
        names = ", ".join(sql_name(c) for c in columns)
        key = f"hash({int(seed)}, {names})"
        rare = (
            f"coalesce(CAST({sql_name(label)} AS VARCHAR) IN "
            f"({', '.join(sql_text(t) for t in rare_texts)}), false)"
        )
        where = "true"
        if sampled:
            self.sql("SET preserve_insertion_order = false")  # any order: only keys come back
            limits = []
            for side in (rare, f"NOT {rare}"):
                cut = self.sql(
                    f"SELECT k FROM (SELECT {key} AS k FROM {self.source} WHERE {side}) "
                    f"ORDER BY k LIMIT 1 OFFSET {int(max_rows) - 1}"
                )
                limits.append(f"({side} AND {key} <= {int(cut[0][0])})" if cut else f"({side})")
            where = " OR ".join(limits)
        # The kept rows in the files' order (files sorted by name): the same rows, in the same
        # order, whatever the threads.
        self.sql("SET preserve_insertion_order = true")
        suffix = ".parquet" if self.parquet else ".csv"
        out = self.spill / f"kept{suffix}"
        fmt = "FORMAT parquet" if self.parquet else "FORMAT csv, HEADER true"
        self.sql(
            f"COPY (SELECT {names} FROM {self.source} WHERE {where}) TO {sql_text(str(out))} "
            f"({fmt})"
        )
        return read_table(out, TABLE)


@contextlib.contextmanager
def open_scan(spec: str, files: Sequence[str], parquet: bool) -> Iterator[Scan]:
    """A DuckDB connection over ``files`` (all Parquet, or all CSV; ``data.path`` was ``spec``) in
    bounded memory that spills to a temporary folder."""
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
            if any(is_url(f) for f in files):
                remote_access(con)
            yield Scan(con, files, parquet, spill)
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
