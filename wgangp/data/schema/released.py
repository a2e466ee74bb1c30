"""The schema a run under ``privacy.epsilon`` ships and fits with: nothing in it read from the
training rows without noise.

What an inferred schema takes from the rows, and what becomes of it here:

- a text column's levels (those >= k entities hold): released by thresholded selection
  (:func:`~wgangp.privacy.mechanisms.dp_levels`, each entity counting its most-held level); the
  levels that pass, in the schema's order, and always an ``other`` level for every other value
  (whether any value falls outside would itself be read off the rows);
- the label's values besides the class to synthesize (``data.positive``, given: public): the
  same selection; a value that fails is read as the rest's, as any unlisted one is;
- bounds of numbers and datetimes: dropped, for the transform's DP fit to release
  (:mod:`wgangp.data.transform.private_column`);
- counts (gaps per column, rows per label value, the row count): dropped.

What stays is the table's description, taken as public: column names, kinds, text formats and
zones, whether a column may be empty, booleans' two values, and which columns inference set aside
as identifiers (docs/privacy.md says so, and how to make all of it public by construction: give
``data.schema``). A schema the user gave (``data.schema``, a shipped one) is public by
declaration: its levels and bounds stay; only the counts the run added go.
"""

from __future__ import annotations

from dataclasses import replace

import dp_accounting
import numpy as np
import pandas as pd

from wgangp.data.schema.cells import LevelLookup
from wgangp.data.schema.table_schema import ColumnSchema, TableSchema
from wgangp.privacy.mechanisms import dp_levels

#: Names for the level that stands for every unreleased value, tried in order.
_OTHER_NAMES = ("other", "rare levels", "other_2", "other_3")


def released_schema(
    schema: TableSchema,
    frame: pd.DataFrame,
    entities: np.ndarray,
    *,
    inferred: bool,
    noise_multiplier: float,
    threshold: float,
    min_entities: int,
    rng: np.random.Generator,
) -> tuple[TableSchema, list[dp_accounting.DpEvent], int]:
    """``(schema, events, selections)``: the schema to ship (module doc), the releases' events,
    and how many level selections ran (each adds the delta of
    :func:`~wgangp.privacy.mechanisms.selection_delta_for` at ``threshold``)."""
    events: list[dp_accounting.DpEvent] = []
    columns = []
    for column in schema.columns:
        column = replace(column, missing=0)
        if inferred and _selectable(column, schema):
            kept, event, _ = dp_levels(
                frame[column.name].to_numpy(),
                np.asarray(entities),
                noise_multiplier,
                threshold,
                rng,
                min_entities=min_entities,
            )
            events.append(event)
            column = _with_levels(column, kept, schema)
        elif inferred and column.kind != "categorical":
            column = replace(column, bounds=None)
        columns.append(column)
    released = replace(schema, columns=tuple(columns), label_counts=(), rows=None)
    return released, events, len(events)


def _selectable(column: ColumnSchema, schema: TableSchema) -> bool:
    """A categorical whose levels are read off the rows (booleans' two values are not)."""
    if column.kind != "categorical":
        return False
    return not all(isinstance(level, bool | np.bool_) for level in column.levels or ())


def _with_levels(column: ColumnSchema, kept: dict, schema: TableSchema) -> ColumnSchema:
    """The column with the released levels, in its order; a feature gains an ``other`` level,
    the label keeps the class to synthesize whatever its count."""
    levels = column.levels or ()
    if column.name == schema.label:
        chosen = tuple(v for v in levels if v in kept or v == schema.positive)
        return replace(column, levels=chosen, other=None)
    chosen = tuple(v for v in levels if v in kept and v != column.other)
    lookup = LevelLookup(chosen)
    other = next(
        (name for name in _OTHER_NAMES if lookup.find(name) is None), f"other_{len(chosen) + 1}"
    )
    return replace(column, levels=(*chosen, other), other=other)
