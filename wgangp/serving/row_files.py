"""Sampled rows written as they are drawn: chunk after chunk into a CSV, CSV.gz or Parquet file
(built under a temporary name and renamed once complete, so it lands whole or not at all) or onto
stdout, so that a draw of any size holds one chunk (:func:`chunk_rows`) in memory."""

from __future__ import annotations

import gzip
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import IO, TYPE_CHECKING

from wgangp.data.schema.table_schema import TableSchema
from wgangp.files import write_with
from wgangp.serving.memory import available_memory

if TYPE_CHECKING:
    import pandas as pd

#: The most rows drawn and written at a time; fewer on a machine whose free memory would not hold
#: a few such chunks of the model's rows (:func:`chunk_rows`).
CHUNK_ROWS = 100_000
#: The fewest rows a chunk has, however little memory is left.
MIN_CHUNK_ROWS = 1_000
#: Arrow's type of a column a Parquet chunk holds only gaps of, by the schema's value type.
_ARROW_TYPES = {"long": "int64", "double": "float64", "string": "large_string", "boolean": "bool"}


def chunk_rows(per_row: int) -> int:
    """Rows a chunk holds: :data:`CHUNK_ROWS`, or fewer where a quarter of the free memory would
    not hold them (the frame, its writer's copy and Python's heap besides)."""
    available = available_memory()
    if available is None:
        return CHUNK_ROWS
    return int(min(CHUNK_ROWS, max(MIN_CHUNK_ROWS, available // (4 * per_row))))


def write_rows(
    frames: Iterable[pd.DataFrame], path: Path, file_format: str, schema: TableSchema | None = None
) -> int:
    """Append each frame of ``frames`` to ``path`` (CSV, CSV.gz or Parquet) as it comes; the file
    lands complete or not at all: a failure (a full disk, a draw's error) keeps the previous
    file; ``output=`` a symbolic link writes its target and keeps the link. Returns the rows."""
    written = 0

    def write(tmp: Path) -> None:
        nonlocal written
        if file_format == "parquet":
            written = _write_parquet(frames, tmp, schema)
        else:
            opener = gzip.open if tmp.name.endswith(".gz") else open
            with opener(tmp, "wt", newline="", encoding="utf-8") as handle:
                written = _write_csv(frames, handle)

    write_with(path, write, f"output={path}")
    return written


def _write_csv(frames: Iterable[pd.DataFrame], handle: IO[str]) -> int:
    written = 0
    for index, frame in enumerate(frames):
        frame.to_csv(handle, header=index == 0, index=False)
        written += len(frame)
    return written


def _write_parquet(frames: Iterable[pd.DataFrame], tmp: Path, schema: TableSchema | None) -> int:
    """Each frame a row group of one Parquet file, typed as the first (a column the first holds
    only gaps of typed by the schema, when given)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    writer, written = None, 0
    try:
        for frame in frames:
            table = pa.Table.from_pandas(frame, preserve_index=False)
            if writer is None:
                fields = [
                    field.with_type(pa.type_for_alias(_ARROW_TYPES[kind]))
                    if pa.types.is_null(field.type) and kind in _ARROW_TYPES
                    else field
                    for field, kind in zip(
                        table.schema,
                        (schema.column(n).value_type if schema else "" for n in table.column_names),
                        strict=True,
                    )
                ]  # fmt: skip
                writer = pq.ParquetWriter(tmp, pa.schema(fields, table.schema.metadata))
            writer.write_table(table.cast(writer.schema))
            written += len(frame)
    finally:
        if writer is not None:
            writer.close()
    return written


def write_stdout(frames: Iterable[pd.DataFrame]) -> int:
    """CSV on stdout, chunk after chunk; a reader that stops early (``| head``) is no error, and
    no further chunk is drawn."""
    try:
        written = _write_csv(frames, sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:
        # Python would report the pipe again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 0
    return written
