"""The one rule after reading: fits and scores use a bounded sample of each class, the same rows
every time, and exactly the splits when the table is under the budgets."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support.creditcard import LABEL

from wgangp.config import DataConfig
from wgangp.data.prepare import prepare_data
from wgangp.data.row_sample import RowBudget
from wgangp.data.simulated import simulate_creditcard


def test_the_rest_sample_keeps_every_rare_row() -> None:
    classes = np.array([0] * 900 + [1] * 100)
    budget = RowBudget(rest=300, rare=50, seed=0)
    keep = budget.rest_sample(classes)
    assert keep is not None and keep[classes == 1].all() and keep[classes == 0].sum() == 300
    np.testing.assert_array_equal(keep, budget.rest_sample(classes))  # by seed
    assert not np.array_equal(keep, RowBudget(300, 50, seed=1).rest_sample(classes))
    assert RowBudget(rest=900, rare=50, seed=0).rest_sample(classes) is None  # under: no sample


def test_a_score_keeps_at_most_the_rare_budget(caplog: pytest.LogCaptureFixture) -> None:
    classes = np.array([0] * 900 + [1] * 100)
    budget = RowBudget(rest=300, rare=40, seed=0)
    with caplog.at_level(logging.INFO, logger="wgangp.data"):
        keep = budget.rare_keep(classes, "the probe")
    assert keep[classes == 0].all() and keep[classes == 1].sum() == 40
    assert "the probe: a uniform sample of 40 of the 100 rare-class rows" in caplog.text
    other = budget.rare_keep(classes, "the evaluation")  # another purpose, another stream
    assert not np.array_equal(keep, other)
    assert RowBudget(300, 100, seed=0).rare_keep(classes, "x") is None


def _prepared(tmp_path: Path, **caps):
    frame = simulate_creditcard(n_rows=6000, fraud_rate=0.05, seed=2)
    frame.to_parquet(tmp_path / "cards.parquet", index=False)
    data = DataConfig(path="cards.parquet", fallback="error", **caps)
    return prepare_data(data, seed=0, launch_dir=tmp_path)


def test_fits_and_scores_see_a_sample_of_each_split(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="wgangp.data"):
        data = _prepared(tmp_path, rest_sample=1000, rare_sample=30)
    parts = data.sampled
    rest = [int((data.classes(p) == 0).sum()) for p in (parts.train, parts.val, parts.test)]
    assert sum(rest) == 1000 and rest[0] > rest[2] > rest[1]  # each split's share
    for whole, part in ((data.train, parts.train), (data.val, parts.val), (data.test, parts.test)):
        assert int(data.classes(part).sum()) == int(data.classes(whole).sum())  # every rare row
        assert len(part.merge(whole, on=list(whole.columns))) == len(part)  # rows of the split
    assert "fits and scores use a uniform sample of 1000 of the 5700 rows with Class!=1" in (
        caplog.text
    )
    test = data.scored(parts.test, "evaluation: the test rows")
    assert int(data.classes(test).sum()) == 30 and int((data.classes(test) == 0).sum()) == rest[2]
    refit = data.with_validation_rows()
    assert len(refit.sampled.train) == len(parts.train) + len(parts.val)
    assert data.sampling_tags()["data.sample.train"] == str(len(parts.train))
    again = _prepared(tmp_path, rest_sample=1000, rare_sample=30).sampled
    pd.testing.assert_frame_equal(again.train, parts.train)


def test_under_the_budgets_the_sample_is_the_splits(tmp_path: Path) -> None:
    data = _prepared(tmp_path)
    parts = data.sampled
    assert data.sampled_splits is None and data.sampling_tags() == data.read.tags()
    assert parts.train is data.train and parts.test is data.test
    assert data.scored(data.test, "x") is data.test
    assert LABEL in data.train.columns
