"""The split every figure of a table rests on: the run's own (``prepare_data``, same config and
seed), so the baselines fit on the rows the model trained on and are judged on its test rows."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from omegaconf import DictConfig

from wgangp.config import DataConfig, to_config
from wgangp.data.prepare import PreparedData, prepare_data
from wgangp.data.schema import FRAUD, LABEL
from wgangp.data.schema_inference import infer_schema
from wgangp.data.table_reader import read_user_table
from wgangp.data.table_schema import TableSchema


@dataclass(frozen=True)
class TableSplit:
    """A table's schema and its three splits in the run's form (features + ``Class`` 0/1)."""

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
        return frame.loc[frame[LABEL] == FRAUD, self.features].reset_index(drop=True)

    def common(self, part: str) -> pd.DataFrame:
        frame = getattr(self, part)
        return frame.loc[frame[LABEL] != FRAUD, self.features].reset_index(drop=True)


def table_split(cfg: DictConfig, launch_dir: Path) -> TableSplit:
    """The split the run of ``cfg`` trains on."""
    config = to_config(cfg)
    if not trains_user_tables() and config.data.label != LABEL:
        return _interim_split(config.data, config.seed, launch_dir)
    data = prepare_data(config.data, seed=config.seed, launch_dir=launch_dir)
    table = data.table if trains_user_tables() else TableSchema.creditcard()  # type: ignore[attr-defined]
    return TableSplit(table, data.train, data.val, data.test)


def trains_user_tables() -> bool:
    """Whether this checkout's training takes a user's table (``PreparedData.table``)."""
    return "table" in {field.name for field in dataclasses.fields(PreparedData)}


def _interim_split(data: DataConfig, seed: int, launch_dir: Path) -> TableSplit:
    """A user table split per class by ``seed`` (as ``prepare_data`` splits, not its rows), for
    the baselines while this checkout's training cannot take the table."""
    path = Path(data.path) if Path(data.path).is_absolute() else launch_dir / data.path
    frame = read_user_table(path)
    table = infer_schema(frame, data.label, data.positive, source=str(path))
    rare = (frame[data.label].astype(str) == str(table.positive)).astype(int)
    rows = frame.drop(columns=[data.label]).assign(**{LABEL: rare.to_numpy()})
    rng = np.random.default_rng(seed)
    parts: dict[str, list[pd.DataFrame]] = {"train": [], "val": [], "test": []}
    for _, of_class in rows.groupby(LABEL):
        order = of_class.iloc[rng.permutation(len(of_class))]
        n_test = round(len(order) * data.test_fraction)
        n_val = round(len(order) * data.val_fraction)
        parts["test"].append(order.iloc[:n_test])
        parts["val"].append(order.iloc[n_test : n_test + n_val])
        parts["train"].append(order.iloc[n_test + n_val :])
    train, val, test = (pd.concat(parts[k]).reset_index(drop=True) for k in parts)
    return TableSplit(table, train, val, test)
