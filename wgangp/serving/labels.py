"""The class a user asks a synthesizer for, named by the label's own value, and the label value a
sampled row carries (no TensorFlow here: ``wgangp.sample`` checks ``label=`` before the slow
model load)."""

from __future__ import annotations

from wgangp.data.schema.table_schema import RARE, REST, TableSchema, Value
from wgangp.errors import WgangpError


class LabelError(WgangpError):
    """``label=`` names no class of the model."""

    reason = "config"


def label_class(table: TableSchema, value: object) -> int:
    """1 (the rare class) or 0 (the rest) for a value of ``table``'s label (``label=bad``;
    ``1`` or ``1.0`` for Kaggle's file, whose label ``Class`` holds 1 and 0), read by the one
    rule validation reads the label's cells with
    (:class:`~wgangp.data.schema.cells.LevelLookup`)."""
    levels = table.column(table.label).lookup
    level = levels.find(value)
    if level is None:
        shown = ", ".join(map(str, levels.levels))
        raise LabelError(f"label={value} is not a value of {table.label}; use one of: {shown}")
    if level == table.positive:
        return RARE
    label_value(table, REST)  # refuses a label of more than two values
    return REST


def label_value(table: TableSchema, cls: int) -> Value:
    """The label's own value for class ``cls`` (the other value of a two-valued label for 0); a
    label of more values has no single value for the rest: LabelError."""
    if cls == RARE:
        return table.positive
    others = [v for v in table.column(table.label).levels or () if v != table.positive]
    if len(others) != 1:
        raise LabelError(
            f"label {table.label} has {len(others)} values besides {table.positive} "
            f"({', '.join(map(str, others[:5]))}); wgangp learns only {table.positive} against "
            f"the rest, so it samples only label={table.positive}"
        )
    return others[0]
