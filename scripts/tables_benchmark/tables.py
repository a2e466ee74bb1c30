"""The tables the benchmark runs on: file, label column and the class to synthesize; a table
built here (``generated.py``) is written under the benchmark's output folder."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from scripts.tables_benchmark.generated import lender_table

#: Where the shared data folder is when the environment does not say (from the repo root).
DEFAULT_SHARED = Path("../shared/data")
SHARED_VARIABLE = "WGANGP_SHARED_DATA"


@dataclass(frozen=True)
class TableSpec:
    """One table: its short name, its file under the shared data folder (or, for a table built
    here, under ``generated/`` of the output folder), its label and class."""

    name: str
    file: str
    label: str
    positive: str
    #: Built by code, not read from the shared folder.
    generated: bool = False

    def path(self, shared: Path, out: Path | None = None) -> Path:
        if self.generated:
            return (out or Path(".")) / "generated" / self.file
        return shared / self.file

    def write(self, out: Path) -> Path:
        """A generated table's file (written once; the same rows for every seed)."""
        path = self.path(Path("."), out)
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            lender_table().to_csv(path, index=False)
        return path


TABLES = {
    spec.name: spec
    for spec in (
        TableSpec("creditcard", "creditcard_real_sample.csv.gz", "Class", "1"),
        TableSpec("default_islr", "tables/default_islr.csv.gz", "default", "Yes"),
        TableSpec("credit_data", "tables/credit_data_modeldata.csv.gz", "Status", "bad"),
        TableSpec("lender", "lender.csv", "deny", "yes", generated=True),
    )
}


def shared_data_dir(option: str | None) -> Path:
    """``--data`` if given, else ``$WGANGP_SHARED_DATA``, else ``../shared/data``; absolute."""
    chosen = option or os.environ.get(SHARED_VARIABLE) or str(DEFAULT_SHARED)
    return Path(chosen).expanduser().resolve()


def chosen_tables(names: str) -> list[TableSpec]:
    """The tables named in a comma-separated list; ValueError names an unknown one."""
    specs = []
    for name in (part.strip() for part in names.split(",") if part.strip()):
        if name not in TABLES:
            raise ValueError(f"unknown table {name!r}: choose from {', '.join(TABLES)}")
        specs.append(TABLES[name])
    if not specs:
        raise ValueError(f"no table given: choose from {', '.join(TABLES)}")
    return specs
