"""The split every figure of a table rests on: the run's own (``prepare_data``, same config and
seed), so the baselines fit on the rows the model trained on and are judged on its test rows, or
on a fourth split the run never sees (``--judge-on holdout``: carved from the file first)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from omegaconf import DictConfig

from scripts.tables_benchmark.tables import TableSpec
from wgangp.config import to_config
from wgangp.data.prepare import prepare_data
from wgangp.data.read.table_reader import read_table
from wgangp.data.schema.column_codes import level_of
from wgangp.data.schema.table_schema import NUMERIC_KINDS, RARE, TableSchema
from wgangp.data.schema.validation import validate_table

log = logging.getLogger("tables_benchmark")

#: The share of each class's rows held out before the run when judging on a fourth split.
HOLDOUT_FRACTION = 0.2


@dataclass(frozen=True)
class TableSplit:
    """A table's schema and its three splits in the run's form (features and the label)."""

    schema: TableSchema
    train: pd.DataFrame
    val: pd.DataFrame
    test: pd.DataFrame
    #: Rows the run never saw (``--judge-on holdout``), in the run's form; empty otherwise.
    holdout: pd.DataFrame | None = None

    @property
    def features(self) -> list[str]:
        return [column.name for column in self.schema.features]

    def rare(self, part: str) -> pd.DataFrame:
        """The rare-class rows of ``part`` (train | val | test), features only."""
        frame = getattr(self, part)
        rare = self.schema.classes(frame[self.schema.label]) == RARE
        return frame.loc[rare, self.features].reset_index(drop=True)

    def common(self, part: str) -> pd.DataFrame:
        frame = getattr(self, part)
        rare = self.schema.classes(frame[self.schema.label]) == RARE
        return frame.loc[~rare, self.features].reset_index(drop=True)


def table_split(
    cfg: DictConfig, launch_dir: Path, holdout: pd.DataFrame | None = None
) -> TableSplit:
    """The split the run of ``cfg`` trains on, and the held-out rows (as read) in its form."""
    config = to_config(cfg)
    data = prepare_data(config.data, seed=config.seed, launch_dir=launch_dir)
    held = None if holdout is None else _in_form(holdout, data.schema)
    return TableSplit(data.schema, data.train, data.val, data.test, held)


def carve_holdout(spec: TableSpec, path: Path, seed: int, out: Path) -> tuple[Path, pd.DataFrame]:
    """Hold out ``HOLDOUT_FRACTION`` of each class's rows of ``path`` (by ``seed``): the file the
    run reads (the rest, written under ``out/holdout``) and the held-out rows as read."""
    frame = read_table(path)
    rare = frame[spec.label].astype(str).str.strip() == str(spec.positive)
    rng = np.random.default_rng([seed, 4])
    held = np.zeros(len(frame), dtype=bool)
    for rows in (np.flatnonzero(rare), np.flatnonzero(~rare)):
        picked = rng.choice(rows, int(round(HOLDOUT_FRACTION * len(rows))), replace=False)
        held[picked] = True
    # One folder per seed, the file named as the table: the run is named after its file.
    rest = out / "holdout" / f"seed{seed}" / f"{spec.name}.csv.gz"
    rest.parent.mkdir(parents=True, exist_ok=True)
    frame[~held].to_csv(rest, index=False)
    return rest, frame[held].reset_index(drop=True)


def _in_form(frame: pd.DataFrame, schema: TableSchema) -> pd.DataFrame:
    """Held-out rows in the run's canonical form; a row with a level the run's (inferred) schema
    never saw, a number outside the bounds its values are clipped into, or a gap in a column
    the run saw none in, is dropped, as no generator could make it."""
    keep = np.ones(len(frame), dtype=bool)
    for column in schema.columns:
        if not column.nullable:
            keep &= frame[column.name].notna().to_numpy(dtype=bool)
        if column.kind in NUMERIC_KINDS and column.clip and column.bounds is not None:
            low, high = column.bounds
            values = pd.to_numeric(frame[column.name], errors="coerce")
            keep &= ~((values < low) | (values > high)).to_numpy(dtype=bool)
        if column.kind == "categorical":
            levels = tuple(column.levels or ())
            known = frame[column.name].map(
                lambda v, levels=levels: pd.isna(v) or level_of(levels, v) is not None
            )
            keep &= known.to_numpy(dtype=bool)
    if not keep.all():
        dropped = int((~keep).sum())
        log.info("holdout: %d row(s) no generator of the run could make, dropped", dropped)
    rows = frame[keep].reset_index(drop=True)
    return validate_table(rows, schema, source="holdout", min_rows_per_class=1)
