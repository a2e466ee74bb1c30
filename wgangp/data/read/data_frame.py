"""A pandas DataFrame given in Python (:func:`wgangp.fit`) as a table: its columns read by the
rules a Parquet file's are (:mod:`.parquet_columns`: categories as their values, dates as
datetimes, nested columns dropped with a line), kept under the same cap by the same rule
(:func:`~wgangp.data.read.big_tables.cap_rows`). The frame itself is never changed.

A column of Python objects of several types (``1``, ``'a'``, ``2.5``, ``True``), which no Parquet
file can hold, is read as its cells' text, as a CSV of the frame holds them (``'1'``, ``'a'``,
``'2.5'``, ``'True'``), with a line: read as they are, ``True`` and ``1`` would be one value to
pandas and another to the schema's levels, and the schema inferred from the frame would refuse
the frame's own rows."""

from __future__ import annotations

import logging

import pandas as pd
import pyarrow as pa

from wgangp.data.read.big_tables import EntityShare, ReadTable, cap_rows
from wgangp.data.read.parquet_columns import NESTED_LINE, plain_cells, values_type
from wgangp.data.schema.cells import check_distinct_names, shown
from wgangp.data.schema.table_schema import Value
from wgangp.errors import DataError

log = logging.getLogger("wgangp.data")

#: How error lines and the run's records name a DataFrame's table.
ORIGIN = "DataFrame"
#: The log line of the columns of mixed types read as text (after ORIGIN).
MIXED_LINE = (
    "column(s) {names} mix value types (numbers, text, booleans), read as their text as a CSV "
    "of the frame holds them"
)


def read_data_frame(
    frame: object,
    *,
    label: str,
    positive: Value | None,
    max_rows: int,
    seed: int,
    by_entity: EntityShare | None = None,
) -> ReadTable:
    """``frame``'s rows as a table's cells (module doc), every rare-class row and at most
    ``max_rows`` of the rest."""
    if not isinstance(frame, pd.DataFrame):
        raise DataError(
            f"data must be a pandas DataFrame or a path, got {type(frame).__name__}; e.g. "
            "wgangp.fit(pd.read_csv('transactions.csv'), label='is_fraud')"
        )
    names = list(frame.columns)
    odd = [name for name in names if not isinstance(name, str)]
    if odd or isinstance(frame.columns, pd.MultiIndex):
        raise DataError(
            f"{ORIGIN}: column names must be text, got {shown(odd or names)}; name them "
            "(frame.columns = [...]) or flatten a MultiIndex"
        )
    check_distinct_names(names, ORIGIN)
    cells = {}
    nested, mixed = [], []
    for name in names:
        values = frame[name].reset_index(drop=True)
        kind = _arrow_type(values)
        if kind is not None and pa.types.is_nested(values_type(kind)):
            nested.append(name)
            continue
        if kind is None and pd.api.types.is_object_dtype(values):  # objects Arrow cannot type
            mixed.append(name)
            cells[name] = _as_text(values)
            continue
        cells[name] = plain_cells(values, kind)
    if nested:
        log.info("%s: %s", ORIGIN, NESTED_LINE.format(names=", ".join(nested)))
    if mixed:
        log.info("%s: %s", ORIGIN, MIXED_LINE.format(names=", ".join(mixed)))
    table = pd.DataFrame(cells, columns=[n for n in names if n not in nested])
    return cap_rows(
        table.reset_index(drop=True),
        label,
        positive,
        max_rows,
        seed,
        1,
        source=ORIGIN,
        by_entity=by_entity,
    )


def _arrow_type(values: pd.Series) -> pa.DataType | None:
    """The type Arrow (and so a Parquet file written from the frame) gives the column; None
    when it has none (mixed objects) or needs none (numbers, booleans, datetimes: read as they
    are, without converting a large column)."""
    plain = pd.api.types.is_numeric_dtype(values) or pd.api.types.is_datetime64_any_dtype(values)
    if plain and not isinstance(values.dtype, pd.CategoricalDtype):
        return None
    try:
        return pa.array(values, from_pandas=True).type
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return None


def _as_text(values: pd.Series) -> pd.Series:
    """Each present cell as its text (``str``), gaps kept: how a CSV of the column reads."""
    texts = values.map(lambda v: v if isinstance(v, str) else str(v), na_action="ignore")
    return texts.astype("str") if texts.notna().any() else texts
