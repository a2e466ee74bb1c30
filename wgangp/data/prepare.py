"""The data a run trains and is judged on: load -> validate -> split, as one call.

Training and ``python -m wgangp.evaluate`` both go through :func:`prepare_data`, so an evaluation
rebuilds exactly the split its run trained on (same file, same ``data.*`` settings, same seed),
with every group of identical rows in one split (:mod:`wgangp.data.split`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from wgangp.config import DataConfig
from wgangp.data.digest import table_digest
from wgangp.data.loader import load_creditcard, load_simulated
from wgangp.data.schema import LABEL
from wgangp.data.split import Split, rows_needed, stratified_split
from wgangp.data.table_schema import TableSchema
from wgangp.data.user_table import is_user_table, load_user_table
from wgangp.errors import DataError


@dataclass
class PreparedData:
    """The validated table's three splits, in original units, and where the table came from."""

    source: str  # "file" | "kaggle" | "simulated" (the credit-card schema) | "table" (a user's)
    origin: str  # the file read, or "simulated(seed=..., rows=...)"
    train: pd.DataFrame
    val: pd.DataFrame
    test: pd.DataFrame
    #: Rows that repeat an earlier row exactly (of them, rare-class rows); each is in its
    #: original's split.
    duplicate_rows: int = 0
    duplicate_frauds: int = 0
    #: :func:`~wgangp.data.digest.table_digest` of the validated table before the split.
    digest: str = ""
    #: The table's schema: Kaggle's for the credit-card file, the user's (given or inferred) else.
    table: TableSchema = field(default_factory=TableSchema.creditcard)

    @property
    def features(self) -> list[str]:
        """The feature columns, in the table's order (every column but ``Class``)."""
        return [column.name for column in self.table.features]

    @property
    def user_table(self) -> bool:
        return self.source == "table"

    @property
    def user_schema(self) -> TableSchema | None:
        """The schema a synthesizer of this table carries (None: Kaggle's built-in one)."""
        return self.table if self.user_table else None

    @property
    def rare_rows(self) -> str:
        """The rows of the class to synthesize, as the log counts them: Kaggle's file calls
        them frauds; a user's table is named by its label and value, whatever it holds."""
        if self.user_table:
            return f"with {self.table.class_names[1]}"
        return "frauds"

    def describe(self) -> str:
        rare = f"{int(self.train[LABEL].sum())} {self.rare_rows}"
        return (
            f"{self.source} ({self.origin}): train {len(self.train)} rows ({rare}), "
            f"val {len(self.val)}, test {len(self.test)}"
        )

    def dataset_record(self) -> dict[str, str]:
        """The table as an MLflow dataset (name, digest, source, schema, profile; no rows), so
        the run page's "Datasets" tells runs on different tables apart."""
        simulated = self.source == "simulated"
        name = "simulated" if simulated else Path(self.origin).name.split(".")[0]
        columns = [
            {"type": column.value_type, "name": column.name, "required": not column.nullable}
            for column in self.table.columns
        ]
        rows = len(self.train) + len(self.val) + len(self.test)
        profile = {"num_rows": rows, "num_elements": rows * len(self.table.columns)}
        return {
            "name": name,
            "digest": self.digest,
            "source_type": "code" if simulated else "local",
            "source": json.dumps({"uri": self.origin}),
            "schema": json.dumps({"mlflow_colspec": columns}),
            "profile": json.dumps(profile),
        }

    def with_validation_rows(self) -> PreparedData:
        """The split a refit trains on (``trainer.refit``): training rows then validation rows,
        no validation rows left (the quality loop has used them), the same test rows."""
        train = pd.concat([self.train, self.val], ignore_index=True)
        return replace(self, train=train, val=self.val.iloc[:0])

    def describe_duplicates(self) -> str:
        return (
            f"{self.duplicate_rows} row(s) repeat an earlier row exactly ({self.duplicate_frauds} "
            f"of them {self.rare_rows}); each copy is in the same split as its original"
        )


def prepare_data(data: DataConfig, *, seed: int, launch_dir: Path) -> PreparedData:
    """Load the configured table (relative paths from ``launch_dir``), validate it, split it.

    Each class needs ``data.min_rows_per_class`` rows, and at least what the split needs
    (:func:`~wgangp.data.split.rows_needed`), so a too-small table fails at validation with the
    number that is really needed.
    """
    min_rows = max(data.min_rows_per_class, rows_needed(data.val_fraction))
    if is_user_table(data, launch_dir):
        return _prepare_user_table(data, seed=seed, launch_dir=launch_dir)
    if data.name == "simulated":
        loaded = load_simulated(seed=seed, rows=data.simulated_rows, min_rows_per_class=min_rows)
    else:
        loaded = load_creditcard(
            data.path,
            launch_dir=launch_dir,
            fallback=data.fallback,
            cache_dir=Path(os.path.expanduser(data.cache_dir)),
            seed=seed,
            simulated_rows=data.simulated_rows,
            min_rows_per_class=min_rows,
        )
    split = stratified_split(
        loaded.frame,
        val_fraction=data.val_fraction,
        test_fraction=data.test_fraction,
        seed=seed,
        source=loaded.origin,
    )
    return _prepared(loaded.source, loaded.origin, split, loaded.frame)


def _prepare_user_table(data: DataConfig, *, seed: int, launch_dir: Path) -> PreparedData:
    """A user's table (:mod:`wgangp.data.user_table`), split like the credit-card file."""
    loaded = load_user_table(data, launch_dir)
    names = loaded.schema.class_names
    for cls in (1, 0):
        count = int((loaded.frame[LABEL] == cls).sum())
        if count < data.min_rows_per_class:
            raise DataError(
                f"{loaded.origin}: only {count} row(s) with {names[cls]}; at least "
                f"{data.min_rows_per_class} are needed (data.min_rows_per_class): use a larger "
                "table"
            )
    split = stratified_split(
        loaded.frame,
        val_fraction=data.val_fraction,
        test_fraction=data.test_fraction,
        seed=seed,
        source=loaded.origin,
        class_names=names,
        columns=list(loaded.frame.columns),
    )
    return _prepared("table", loaded.origin, split, loaded.frame, loaded.schema)


def _prepared(
    source: str,
    origin: str,
    split: Split,
    frame: pd.DataFrame,
    table: TableSchema | None = None,
) -> PreparedData:
    """The split of ``frame`` as a run's data, with the table's digest (and schema)."""
    return PreparedData(
        source,
        origin,
        split.train,
        split.val,
        split.test,
        duplicate_rows=split.duplicate_rows,
        duplicate_frauds=split.duplicate_frauds,
        digest=table_digest(frame),
        table=table or TableSchema.creditcard(),
    )


def check_batch_fits(data: PreparedData, batch_size: int) -> None:
    """Fewer training rows than a batch would make every batch repeat rows: refuse it.

    The sampler draws with replacement (rare rows are always fewer than a batch: that is the
    point of class balancing), but a table smaller than one batch is almost surely the wrong
    file or a wrong ``trainer.batch_size``.
    """
    rows = len(data.train)
    if rows < batch_size:
        raise DataError(
            f"{data.origin}: the training split has {rows} rows, fewer than one batch "
            f"(trainer.batch_size={batch_size}); use a larger table or set "
            f"trainer.batch_size={max(2, rows // 2)}"
        )
