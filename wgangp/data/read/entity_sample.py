"""A history table (``data.time``) of any size, read in bounded memory and capped by entities:
every entity with a rare-class row, whole, and at most ``data.max_entities`` of the others,
whole.

The row cap of :mod:`.big_tables` would cut customers' histories at random rows; here the unit
kept or left out is the entity. The rule, in SQL over the files' scan (DuckDB, bounded memory):
the entities holding a rare-class row, and of the others those whose hash of (seed, entity) is
among the ``max_entities`` smallest; every row of a kept entity, in the files' order (a row
without an entity is kept too, so that validation names it). The sample depends on the rows and
the seed only. A DataFrame, or a single file DuckDB cannot read, is capped in memory by the same
rule (:func:`cap_entities`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from wgangp.data.read.big_tables import (
    ReadTable,
    TableFiles,
    TableRead,
    _count_rare,
    _gaps_line,
    _is_gap,
    _label_texts,
    _rare_class,
    check_columns,
)
from wgangp.data.read.duckdb_scan import DuckDBError, Scan, open_rows, open_scan, sql_name, sql_text
from wgangp.data.read.table_reader import ReadAdvice, one_line, read_header, read_table
from wgangp.data.schema.cells import no_such_column, no_such_label
from wgangp.data.schema.table_schema import Value
from wgangp.errors import DataError


@dataclass(frozen=True)
class EntityCap:
    """``data.entity`` and ``data.max_entities``: the unit a history table is capped by."""

    column: str
    max_entities: int


def read_by_entities(
    files: TableFiles,
    advice: ReadAdvice,
    *,
    label: str,
    positive: Value | None,
    cap: EntityCap,
    seed: int,
) -> ReadTable:
    """Every entity with a rare-class row and at most ``cap.max_entities`` others (module doc)."""
    local = files.one_local_file
    columns = (read_header(Path(files.spec)) or []) if local else check_columns(files)
    if label not in columns or cap.column not in columns:
        missing = label if label not in columns else cap.column
        if files.one_local_file:  # the reader's or the schema's own line
            return cap_entities(read_table(Path(files.spec), advice), label, positive, cap, seed)
        what = (
            no_such_label(label, columns) if missing == label else no_such_column(missing, columns)
        )
        raise DataError(f"{files.spec}: {what}")
    try:
        with open_scan(files.spec, files.files, files.parquet, files.partitions) as scan:
            counts = scan.label_counts(label)
            gaps = [text for text in counts if _is_gap(text, files.parquet)]
            if gaps:
                gap_rows = sum(counts[text] for text in gaps)
                raise DataError(_gaps_line(files.spec, label, gap_rows, sum(counts.values()), None))
            chosen, rare_texts = _rare_class(counts, label, positive, files.spec)
            where, entities = entity_where(scan, cap, label, rare_texts, seed)
            frame = scan.kept_rows(columns, where)
    except DuckDBError as err:
        if files.one_local_file:
            return cap_entities(read_table(Path(files.spec), advice), label, positive, cap, seed)
        raise DataError(
            f"{files.spec}: the table's files cannot be read ({one_line(err)}); every file must "
            "be a readable Parquet or comma-separated UTF-8 CSV file with the same header"
        ) from None
    rows, rare = sum(counts.values()), sum(counts[text] for text in rare_texts)
    read = TableRead(
        files=len(files.files), rows=rows, rare=rare, kept=len(frame),
        kept_rare=_count_rare(frame, label, chosen), capped=entities[1] < entities[2],
        max_rows=cap.max_entities, seed=seed, positive=chosen, entities=entities,
    )  # fmt: skip
    return ReadTable(frame, read)


def entity_where(
    scan: Scan, cap: EntityCap, label: str, rare_texts: list[str], seed: int
) -> tuple[str, tuple[int, int, int]]:
    """THE rule (module doc) as a SQL condition over ``scan``'s rows, and the entity counts:
    (with a rare-class row, others kept, others in all)."""
    entity = sql_name(cap.column)
    rare = (
        f"coalesce(CAST({sql_name(label)} AS VARCHAR) IN "
        f"({', '.join(sql_text(t) for t in rare_texts)}), false)"
    )
    scan.sql(
        f"CREATE OR REPLACE TEMP TABLE wgangp_rare_entities AS SELECT DISTINCT {entity} AS e "
        f"FROM {scan.source} WHERE {rare} AND {entity} IS NOT NULL"
    )
    others = (
        f"SELECT DISTINCT {entity} AS e FROM {scan.source} WHERE {entity} IS NOT NULL AND "
        f"{entity} NOT IN (SELECT e FROM wgangp_rare_entities)"
    )
    touched = int(scan.sql("SELECT count(*) FROM wgangp_rare_entities")[0][0])
    total = int(scan.sql(f"SELECT count(*) FROM ({others})")[0][0])
    kept = f"{entity} IS NULL OR {entity} IN (SELECT e FROM wgangp_rare_entities)"
    if total <= cap.max_entities:
        return "true", (touched, total, total)
    cut = scan.sql(
        f"SELECT k FROM (SELECT hash({int(seed)}, e) AS k FROM ({others})) ORDER BY k "
        f"LIMIT 1 OFFSET {int(cap.max_entities) - 1}"
    )[0][0]
    scan.sql("SET preserve_insertion_order = true")
    where = f"{kept} OR hash({int(seed)}, {entity}) <= {int(cut)}"
    return where, (touched, cap.max_entities, total)


def cap_entities(
    frame: pd.DataFrame, label: str, positive: Value | None, cap: EntityCap, seed: int,
    files: int = 1,
) -> ReadTable:  # fmt: skip
    """A table in memory under the same rule; the frame itself when nothing is over the cap."""
    unread = ReadTable(frame, TableRead(files, None, None, len(frame), None, False,
                                        cap.max_entities, seed))  # fmt: skip
    if label not in frame.columns or cap.column not in frame.columns or len(frame) == 0:
        return unread  # the schema's or validation's line
    texts = _label_texts(frame[label])
    counted = {(None if pd.isna(k) else str(k)): int(v) for k, v in texts.value_counts().items()}
    try:
        chosen, rare_texts = _rare_class(counted, label, positive, "data")
    except DataError:
        return unread
    keyed = pd.DataFrame({"e": frame[cap.column], "l": texts})
    keyed["e"] = keyed["e"].map(lambda v: None if pd.isna(v) else str(v))
    with open_rows(keyed.rename(columns={"e": cap.column, "l": label})) as scan:
        where, entities = entity_where(scan, cap, label, rare_texts, seed)
        if where != "true":
            frame = frame.iloc[scan.kept_positions(where)].reset_index(drop=True)
    rare = sum(counted.get(text, 0) for text in rare_texts)
    read = TableRead(
        files, len(keyed), rare, len(frame), _count_rare(frame, label, chosen),
        entities[1] < entities[2], cap.max_entities, seed, chosen, entities,
    )  # fmt: skip
    return ReadTable(frame, read)
