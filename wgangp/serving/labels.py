"""The class a user asks a synthesizer for, named by the label's own value (no TensorFlow here:
``wgangp.sample`` checks ``label=`` before the slow model load)."""

from __future__ import annotations

from pathlib import Path

from wgangp.data.schema import LABEL
from wgangp.data.table_schema import TableSchema
from wgangp.data.user_table import class_of
from wgangp.errors import DataError, WgangpError
from wgangp.serving.bundle import SCHEMA_FILE


class LabelError(WgangpError):
    """``label=`` names no class of the model."""

    reason = "config"


def label_class(table: TableSchema | None, value: object) -> int:
    """1 (the rare class) or 0 (the rest) for a value of ``table``'s label (None: Kaggle's file,
    whose label ``Class`` holds 1 and 0)."""
    if table is not None:
        try:
            return class_of(table, value)
        except DataError as err:
            raise LabelError(str(err)) from None
    text = str(value).strip()
    if text not in ("0", "1"):
        raise LabelError(f"label must be 0 or 1 (the values of {LABEL}), got label={value}")
    return int(text)


def bundle_label_class(bundle: Path, value: object) -> int:
    """:func:`label_class` for the bundle in ``bundle`` (its ``schema.yaml``, if it has one)."""
    schema_file = Path(bundle) / SCHEMA_FILE
    table = TableSchema.load(schema_file) if schema_file.is_file() else None
    return label_class(table, value)
