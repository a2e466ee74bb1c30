"""Privacy on known cases: planted copies are counted, jittered copies sit closer than new rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from support.creditcard import AMOUNT, COLUMNS, FEATURES, LABEL, PCA_FEATURES, SCHEMA, TIME

from wgangp.evaluation.privacy import privacy_metrics


def rows(n: int, seed: int, fraud: int) -> pd.DataFrame:
    """Rows at the file's precision: whole seconds, cents, 15 significant digits."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.normal(size=(n, len(FEATURES))), columns=list(FEATURES))
    frame[TIME] = rng.integers(0, 172_792, n).astype(float)
    frame[AMOUNT] = np.round(rng.lognormal(3, 1.5, n), 2)
    for name in PCA_FEATURES:
        frame[name] = [float(f"{v:.15g}") for v in frame[name]]
    frame[LABEL] = fraud
    return frame.loc[:, list(COLUMNS)]


@pytest.fixture(scope="module")
def train() -> pd.DataFrame:
    return pd.concat([rows(2000, 1, 0), rows(100, 2, 1)], ignore_index=True)


def test_five_planted_copies_are_found(train: pd.DataFrame) -> None:
    synthetic = rows(300, 3, 1)
    picked = train.sample(5, random_state=0).to_numpy()
    synthetic.iloc[[3, 50, 99, 150, 299]] = picked
    metrics, table = privacy_metrics(synthetic, train, rows(60, 4, 1), SCHEMA, copy_rtol=1e-6)
    assert metrics["exact_copies"] == 5
    assert table.loc[0, "exact_copies_of_training_rows"] == 5
    assert table.loc[0, "dcr_min"] == 0.0


def count_copies(rows: pd.DataFrame, train: pd.DataFrame, rtol: float) -> int:
    """How many ``rows`` the evaluation counts as exact copies of a ``train`` row."""
    metrics, _ = privacy_metrics(rows, train, train.iloc[:20], SCHEMA, copy_rtol=rtol)
    return int(metrics["exact_copies"])


def test_copies_that_went_through_float32_are_still_copies(train: pd.DataFrame) -> None:
    """The generator emits float32: a memorised row comes back with ~7 significant digits."""
    copies = train.iloc[:40].astype(np.float32).astype(np.float64)
    assert not np.array_equal(copies[list(PCA_FEATURES)], train.iloc[:40][list(PCA_FEATURES)])
    assert count_copies(copies, train, rtol=1e-6) == 40
    nudged = copies.copy()
    nudged["V7"] *= 1 + 1e-4  # a genuinely different row
    assert count_copies(nudged, train, rtol=1e-6) == 0


def test_amount_and_time_compare_at_cents_and_seconds(train: pd.DataFrame) -> None:
    """The shipped schema rounds Amount to 0.01 and Time to 1: copies compare on those steps."""
    assert (SCHEMA.column(AMOUNT).round, SCHEMA.column(TIME).round) == (0.01, 1)
    copies = train.iloc[:10].copy()
    copies[AMOUNT] += 0.004  # float noise below half a cent: still the same amount
    assert count_copies(copies, train, rtol=1e-6) == 10
    copies[AMOUNT] += 0.01
    assert count_copies(copies, train, rtol=1e-6) == 0
    shifted = train.iloc[:10].copy()
    shifted[TIME] += 1
    assert count_copies(shifted, train, rtol=1e-6) == 0


def test_jittered_training_rows_sit_closer_than_new_rows(train: pd.DataFrame) -> None:
    rng = np.random.default_rng(5)
    frauds = train[train[LABEL] == 1]
    jittered = frauds.sample(300, replace=True, random_state=0).reset_index(drop=True)
    stds = train[list(FEATURES)].std()
    for name in FEATURES:
        jittered[name] += rng.normal(scale=0.05 * stds[name], size=len(jittered))
    metrics, _ = privacy_metrics(jittered, train, rows(60, 4, 1), SCHEMA, copy_rtol=1e-6)
    assert metrics["dcr_ratio"] < 0.5
    assert metrics["dcr_share_below_p5"] > 0.5
    assert metrics["exact_copies"] == 0


def test_fresh_rows_from_the_same_distribution_look_like_the_baseline(train) -> None:
    metrics, _ = privacy_metrics(rows(300, 6, 1), train, rows(100, 4, 1), SCHEMA, copy_rtol=1e-6)
    assert 0.8 < metrics["dcr_ratio"] < 1.25
    assert metrics["dcr_share_below_p5"] < 0.15
    assert metrics["exact_copies"] == 0
