"""stratified_split: disjoint, deterministic, stratified, and never a split without frauds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from wgangp.data import schema
from wgangp.data.simulated import simulate_creditcard
from wgangp.data.split import Split, stratified_split
from wgangp.errors import DataError


def table(rows: int = 2_000, fraud_rate: float = 0.02) -> pd.DataFrame:
    frame = simulate_creditcard(n_rows=rows, fraud_rate=fraud_rate, seed=2)
    return frame.assign(row_id=np.arange(rows))


def ids(part: pd.DataFrame) -> set[int]:
    return set(part["row_id"].tolist())


def frauds(part: pd.DataFrame) -> int:
    return int(part[schema.LABEL].sum())


def test_parts_are_disjoint_complete_and_sized() -> None:
    df = table()
    split = stratified_split(df, val_fraction=0.1, test_fraction=0.2, seed=0)
    assert isinstance(split, Split)
    assert ids(split.train) | ids(split.val) | ids(split.test) == ids(df)
    assert len(split.train) + len(split.val) + len(split.test) == len(df)
    assert not ids(split.train) & ids(split.val)
    assert not ids(split.train) & ids(split.test)
    assert not ids(split.val) & ids(split.test)
    assert (len(split.train), len(split.val), len(split.test)) == (1_400, 200, 400)
    for part in (split.train, split.val, split.test):
        assert isinstance(part.index, pd.RangeIndex) and part.index.start == 0
        assert part["row_id"].is_monotonic_increasing  # original (time) order kept
        pd.testing.assert_series_equal(part.dtypes, df.dtypes)


def test_stratified_by_class() -> None:
    split = stratified_split(table(), val_fraction=0.1, test_fraction=0.2)
    assert (frauds(split.train), frauds(split.val), frauds(split.test)) == (28, 4, 8)


def test_deterministic_by_seed() -> None:
    df = table()
    first = stratified_split(df, seed=5)
    again = stratified_split(df, seed=5)
    other = stratified_split(df, seed=6)
    for name in ("train", "val", "test"):
        pd.testing.assert_frame_equal(getattr(first, name), getattr(again, name))
    assert ids(first.test) != ids(other.test)


def test_every_split_keeps_a_fraud_with_only_three() -> None:
    df = table(rows=500, fraud_rate=0.0)  # the simulator's minimum: 2 frauds
    df.loc[df.index[100], schema.LABEL] = 1
    assert frauds(df) == 3
    for seed in range(5):
        split = stratified_split(df, val_fraction=0.05, test_fraction=0.05, seed=seed)
        assert (frauds(split.train), frauds(split.val), frauds(split.test)) == (1, 1, 1)


def test_too_few_frauds_is_a_data_error() -> None:
    with pytest.raises(DataError) as err:
        stratified_split(table(rows=500, fraud_rate=0.0))
    message = str(err.value)
    assert "\n" not in message
    assert "only 2 fraud row(s)" in message and "at least 3" in message


def test_val_fraction_zero_gives_an_empty_val_frame() -> None:
    df = table(rows=500, fraud_rate=0.0)
    split = stratified_split(df, val_fraction=0.0, test_fraction=0.3)
    assert split.val.empty
    assert list(split.val.columns) == list(df.columns)
    assert (frauds(split.train), frauds(split.test)) == (1, 1)
    assert len(split.train) + len(split.test) == len(df)
