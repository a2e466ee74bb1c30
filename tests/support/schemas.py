"""A loans table's schema edited and given back to training, as a user does with the YAML that
``python -m wgangp.schema`` prints."""

from __future__ import annotations

from pathlib import Path

from wgangp.config import DataConfig
from wgangp.data.schema.table_schema import TableSchema

#: The place error lines name for a loans frame checked without a file.
SOURCE = "loans.csv"


def loans_data(path: Path, **kwargs) -> DataConfig:
    """The data config training reads the loans table at ``path`` with (label ``Status``)."""
    return DataConfig(path=str(path), label="Status", fallback="error", **kwargs)


def edit_schema(schema: TableSchema, folder: Path, **columns: dict) -> Path:
    """``schema`` with the named columns' entries changed (None: deleted), as a YAML file."""
    raw = schema.to_dict()
    kept = []
    for entry in raw["columns"]:
        change = columns.get(entry["name"], {})
        if change is None:
            continue
        kept.append({**entry, **change})
    path = Path(folder) / "schema.yaml"
    path.write_text(TableSchema.from_dict({**raw, "columns": kept}).to_yaml())
    return path
