"""The one rule after reading: fits and scores use one bounded sample of each class, drawn before
the split, the same rows every time, and exactly the splits when the table is under the budgets."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from wgangp.config import DataConfig
from wgangp.data.builtin.simulated import simulate_creditcard
from wgangp.data.prepare import PreparedData, prepare_data
from wgangp.data.row_subset import RowBudget
from wgangp.training.run_record import data_tags, read_tags


def test_the_samples_of_each_class() -> None:
    classes = np.array([0] * 900 + [1] * 100)
    fits, scores = RowBudget(rest=300, rare=40, seed=0).masks(classes)
    assert fits[classes == 1].all() and fits[classes == 0].sum() == 300  # every rare row
    assert scores[classes == 1].sum() == 40 and (scores & (classes == 0)).sum() == 300
    assert (scores <= fits).all()  # the scores' rest is the fits' rest
    again = RowBudget(rest=300, rare=40, seed=0).masks(classes)
    np.testing.assert_array_equal(scores, again[1])  # by seed
    assert not np.array_equal(scores, RowBudget(300, 40, seed=1).masks(classes)[1])
    assert RowBudget(rest=900, rare=100, seed=0).masks(classes) == (None, None)  # under both
    fits, scores = RowBudget(rest=900, rare=40, seed=0).masks(classes)
    assert fits is None and scores[classes == 0].all() and scores.sum() == 940
    fits, scores = RowBudget(rest=300, rare=100, seed=0).masks(classes)
    assert scores is None and fits.sum() == 400  # scores use what fits use
    # Under privacy fits read every row; scores keep the samples they had.
    assert RowBudget(300, 100, seed=0).masks(classes, every_row_fits=True)[0] is None
    np.testing.assert_array_equal(
        RowBudget(300, 100, seed=0).masks(classes, every_row_fits=True)[1], fits
    )
    np.testing.assert_array_equal(
        RowBudget(300, 40, seed=0).masks(classes, every_row_fits=True)[1], again[1]
    )


def _prepared(tmp_path: Path, **caps) -> PreparedData:
    frame = simulate_creditcard(n_rows=6000, fraud_rate=0.05, seed=2)
    frame.to_parquet(tmp_path / "cards.parquet", index=False)
    data = DataConfig(path="cards.parquet", fallback="error", **caps)
    return prepare_data(data, seed=0, launch_dir=tmp_path)


def _counts(data: PreparedData, frame: pd.DataFrame) -> tuple[int, int]:
    classes = data.classes(frame)
    return int((classes == 0).sum()), int(classes.sum())


def test_fits_and_scores_see_a_sample_of_each_split(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="wgangp.data"):
        data = _prepared(tmp_path, rest_subset=1000, rare_subset=100)
    splits = (data.train, data.val, data.test)
    fits, scores = data.fit_rows, data.score_rows
    rest = [_counts(data, p)[0] for p in (fits.train, fits.val, fits.test)]
    rare = [_counts(data, p)[1] for p in (scores.train, scores.val, scores.test)]
    assert sum(rest) == 1000 and rest[0] > rest[2] > rest[1]  # each split its share
    assert sum(rare) == 100 and rare[0] > rare[2] > rare[1]
    by_split = (fits.train, fits.val, fits.test), (scores.train, scores.val, scores.test)
    for whole, fit, score in zip(splits, *by_split, strict=True):
        assert _counts(data, fit)[1] == _counts(data, whole)[1]  # fits: every rare row
        assert _counts(data, score)[0] == _counts(data, fit)[0]  # one sample of the rest
        assert len(fit.merge(whole, on=list(whole.columns))) == len(fit)  # rows of the split
        assert len(score.merge(fit, on=list(whole.columns))) == len(score)
    assert "fits and scores use a uniform subset of 1000 of the 5700 rows with Class!=1" in (
        caplog.text
    )
    assert "scores use a uniform subset of 100 of the 300 rows with Class=1" in caplog.text
    refit = data.with_validation_rows()
    assert len(refit.score_rows.train) == len(scores.train) + len(scores.val)
    assert len(refit.fit_rows.train) == len(fits.train) + len(fits.val)
    tags = data_tags(data)
    assert tags["data.subset.scores.test"] == str(len(scores.test))
    again = _prepared(tmp_path, rest_subset=1000, rare_subset=100)
    pd.testing.assert_frame_equal(again.score_rows.train, scores.train)


def test_under_the_budgets_the_samples_are_the_splits(tmp_path: Path) -> None:
    data = _prepared(tmp_path)
    assert data.fit_subsets is None and data.score_subsets is None
    assert data.fit_rows.train is data.train and data.score_rows.test is data.test
    assert not any(tag.startswith("data.subset.") for tag in data_tags(data))
    assert read_tags(data.read).items() <= data_tags(data).items() and data.describe_subsets() == []


def test_real_rows_kept_by_a_rule_are_a_subset_never_a_sample() -> None:
    """docs/layout.md's glossary: a sample is generated rows, and only them."""
    import re

    from wgangp.data import row_subset

    text = Path(row_subset.__file__).read_text()
    assert not re.search(r"\bsampl", text, re.IGNORECASE)
