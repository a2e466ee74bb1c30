"""The split every figure of a table rests on: the run's own (``prepare_data``, same config and
seed), so the baselines fit on the rows the model trained on and are judged on its test rows."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from omegaconf import DictConfig

from wgangp.config import to_config
from wgangp.data.prepare import prepare_data
from wgangp.data.table_schema import RARE, TableSchema


@dataclass(frozen=True)
class TableSplit:
    """A table's schema and its three splits in the run's form (features and the label)."""

    table: TableSchema
    train: pd.DataFrame
    val: pd.DataFrame
    test: pd.DataFrame

    @property
    def features(self) -> list[str]:
        return [column.name for column in self.table.features]

    def rare(self, part: str) -> pd.DataFrame:
        """The rare-class rows of ``part`` (train | val | test), features only."""
        frame = getattr(self, part)
        rare = self.table.classes(frame[self.table.label]) == RARE
        return frame.loc[rare, self.features].reset_index(drop=True)

    def common(self, part: str) -> pd.DataFrame:
        frame = getattr(self, part)
        rare = self.table.classes(frame[self.table.label]) == RARE
        return frame.loc[~rare, self.features].reset_index(drop=True)


def table_split(cfg: DictConfig, launch_dir: Path) -> TableSplit:
    """The split the run of ``cfg`` trains on."""
    config = to_config(cfg)
    data = prepare_data(config.data, seed=config.seed, launch_dir=launch_dir)
    return TableSplit(data.table, data.train, data.val, data.test)
