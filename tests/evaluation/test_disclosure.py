"""Privacy on known cases: planted copies are counted, jittered copies sit closer than new rows,
and the held-out baseline counts customers (entities), not rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.neighbors import NearestNeighbors
from support.creditcard import AMOUNT, COLUMNS, FEATURES, LABEL, PCA_FEATURES, SCHEMA, TIME

from wgangp.data.schema.table_schema import ColumnSchema, TableSchema
from wgangp.evaluation.disclosure import (
    disclosure_metrics,
    entity_weights,
    near_copy_share,
    near_copy_share_rows,
    near_copy_threshold,
    weighted_percentile,
)
from wgangp.evaluation.encoding import TableEncoding


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
    metrics, table = disclosure_metrics(synthetic, train, rows(60, 4, 1), SCHEMA, copy_rtol=1e-6)
    assert metrics["exact_copies"] == 5
    assert table.loc[0, "exact_copies_of_training_rows"] == 5
    assert table.loc[0, "dcr_min"] == 0.0


def count_copies(rows: pd.DataFrame, train: pd.DataFrame, rtol: float) -> int:
    """How many ``rows`` the evaluation counts as exact copies of a ``train`` row."""
    metrics, _ = disclosure_metrics(rows, train, train.iloc[:20], SCHEMA, copy_rtol=rtol)
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
    metrics, _ = disclosure_metrics(jittered, train, rows(60, 4, 1), SCHEMA, copy_rtol=1e-6)
    assert metrics["dcr_ratio"] < 0.5
    assert metrics["dcr_share_below_p5"] > 0.5
    assert metrics["exact_copies"] == 0


def test_fresh_rows_from_the_same_distribution_look_like_the_baseline(train) -> None:
    metrics, _ = disclosure_metrics(rows(300, 6, 1), train, rows(100, 4, 1), SCHEMA, copy_rtol=1e-6)
    assert 0.8 < metrics["dcr_ratio"] < 1.25
    assert metrics["dcr_share_below_p5"] < 0.15
    assert metrics["exact_copies"] == 0


def test_weighted_percentile_by_hand() -> None:
    """Positions (S_k - w_k) / (S - w_k): weights (3, 1, 1, 1) put 1, 2, 3, 4 at 0, 3/5, 4/5,
    1; the median interpolates between 0 and 3/5."""
    values = np.array([3.0, 1.0, 4.0, 2.0])
    weights = np.array([1.0, 3.0, 1.0, 1.0])
    assert weighted_percentile(values, weights, 50) == pytest.approx(1 + 0.5 / 0.6)
    assert weighted_percentile(values, weights, 70) == pytest.approx(2.5)
    assert weighted_percentile(values, weights, 0) == 1.0
    assert weighted_percentile(values, weights, 100) == 4.0
    # reversing the order mirrors the positions
    assert weighted_percentile(-values, weights, 50) == pytest.approx(
        -weighted_percentile(values, weights, 50)
    )
    assert weighted_percentile(np.array([7.0]), np.array([0.3]), 5) == 7.0


@pytest.mark.parametrize("weight", [1.0, 1 / 3])
def test_equal_weights_are_numpys_linear_percentile(weight: float) -> None:
    """Each row its own entity, or every entity holding as many rows: numpy's figure."""
    distances = np.abs(np.random.default_rng(0).normal(size=101))
    distances[:3] = distances[3]  # ties
    weights = np.full(len(distances), weight)
    for q in (0, 5, 12.5, 50, 95, 100):
        expected = np.percentile(distances, q)
        assert weighted_percentile(distances, weights, q) == pytest.approx(expected, rel=1e-12)


def test_entity_weights_make_each_entity_weigh_one() -> None:
    assert entity_weights(np.array([4, 4, 9, 4, 2])).tolist() == pytest.approx(
        [1 / 3, 1 / 3, 1, 1 / 3, 1]
    )


def one_customer_close() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Held-out rare rows at distances 1.00..1.09 (one customer's ten rows) and 2..40 (one row
    each of 39 customers) from the only training rare point, 0; generated rows at 0.5, 2, 5.

    By rows (49): the 5th percentile sits at rank 2.4, 1.024. By customers (40 weighing one):
    the customer's rows span positions 0 to 0.9/39.9, the others sit at k/39 (value k + 1), so
    0.05 falls between 1/39 and 2/39: 2 + (0.05 - 1/39) * 39 = 2.95.
    """
    close = 1.0 + np.arange(10) / 100
    test = np.r_[close, np.arange(2.0, 41.0)][:, None]
    owners = np.r_[np.full(10, 100), np.arange(39)]
    return np.array([[0.5], [2.0], [5.0]]), test, owners


def test_one_customer_with_many_close_rows_no_longer_sets_the_threshold() -> None:
    generated, test, owners = one_customer_close()
    train = np.zeros((2, 1))
    rows_each = np.arange(len(test))
    assert near_copy_threshold(test[:, 0], rows_each) == pytest.approx(1.024)
    assert near_copy_threshold(test[:, 0], owners) == pytest.approx(2.95)
    assert near_copy_share(generated, train, test, rows_each) == pytest.approx(1 / 3)
    assert near_copy_share(generated, train, test, owners) == pytest.approx(2 / 3)
    # without entities, distinct rows are distinct entities: the row-based figure
    assert near_copy_share(generated, train, test) == pytest.approx(1 / 3)


def test_the_same_figures_on_rows_of_a_table() -> None:
    """The mixed-type space of a one-number table fitted on rows at 0: distance = |amount|."""
    table = TableSchema(
        columns=(
            ColumnSchema("amount", "continuous"),
            ColumnSchema("bad", "categorical", levels=("no", "yes")),
        ),
        label="bad",
        positive="yes",
    )
    generated, test, owners = one_customer_close()

    def frame(values: np.ndarray) -> pd.DataFrame:
        return pd.DataFrame({"amount": values[:, 0], "bad": "yes"})

    train, held_out = frame(np.zeros((2, 1))), frame(test)
    share = near_copy_share_rows(frame(generated), train, held_out, table, test_owners=owners)
    assert share == pytest.approx(2 / 3)
    assert near_copy_share_rows(frame(generated), train, held_out, table) == pytest.approx(1 / 3)
    # identical rows are one entity: the customer's ten rows at one point weigh once
    same = frame(np.r_[np.ones(10), np.arange(2.0, 41.0)][:, None])
    assert near_copy_share_rows(frame(generated), train, same, table) == pytest.approx(2 / 3)


def test_distinct_rows_keep_the_row_based_figures(train: pd.DataFrame) -> None:
    """Every held-out row its own entity: the figures of the row-based definition."""
    features = list(FEATURES)
    frauds = train[train[LABEL] == 1].reset_index(drop=True)
    held_out, synthetic = rows(60, 4, 1), rows(300, 6, 1)
    share = near_copy_share_rows(synthetic, frauds, held_out, SCHEMA)
    encoding = TableEncoding(SCHEMA, frauds)
    index = NearestNeighbors(n_neighbors=1).fit(encoding.distance_matrix(frauds))
    baseline = index.kneighbors(encoding.distance_matrix(held_out))[0][:, 0]
    distances = index.kneighbors(encoding.distance_matrix(synthetic))[0][:, 0]
    assert share == np.mean(distances < np.percentile(baseline, 5))
    assert near_copy_share(
        synthetic[features].to_numpy(), frauds[features].to_numpy(), held_out[features].to_numpy()
    ) == pytest.approx(share)

    metrics, table = disclosure_metrics(synthetic, train, held_out, SCHEMA, copy_rtol=1e-6)
    dcr_train = TableEncoding(SCHEMA, train)
    to_train = NearestNeighbors(n_neighbors=1).fit(dcr_train.distance_matrix(train))
    dcr_baseline = to_train.kneighbors(dcr_train.distance_matrix(held_out))[0][:, 0]
    dcr_synthetic = to_train.kneighbors(dcr_train.distance_matrix(synthetic))[0][:, 0]
    p5 = np.percentile(dcr_baseline, 5)
    assert metrics["dcr_share_below_p5"] == np.mean(dcr_synthetic < p5)
    assert metrics["dcr_baseline_median"] == pytest.approx(np.median(dcr_baseline), rel=1e-12)
    baseline_row = table.iloc[1]
    assert baseline_row["n"] == baseline_row["entities"] == 60
    assert baseline_row["dcr_p5"] == pytest.approx(p5, rel=1e-12)


def test_the_summary_counts_entities(train: pd.DataFrame) -> None:
    held_out = rows(60, 4, 1)
    owners = np.repeat(np.arange(12), 5)  # 12 customers of 5 rows
    train_owners = np.r_[np.zeros(50, int), np.arange(1, 51)]  # one customer holds 50 rows
    _, table = disclosure_metrics(
        rows(300, 6, 1),
        train,
        held_out,
        SCHEMA,
        copy_rtol=1e-6,
        test_owners=owners,
        train_rare_owners=train_owners,
    )
    assert list(table["rows"]) == [
        "synthetic",
        "real_test_rare (baseline)",
        "real_train_rare (reference)",
    ]
    assert table["n"].tolist() == [300, 60, 100]
    assert np.isnan(table.loc[0, "entities"]) and table["entities"].tolist()[1:] == [12, 51]
