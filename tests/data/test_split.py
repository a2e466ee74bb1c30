"""stratified_split: disjoint, deterministic, stratified, and never a split without frauds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import support.creditcard as schema
from support.creditcard import SCHEMA
from support.docs import documented, one_line

from wgangp.data.builtin.simulated import simulate_creditcard
from wgangp.data.split import Split, identical_row_groups, rows_needed
from wgangp.data.split import stratified_split as split_by_class
from wgangp.errors import DataError


def stratified_split(df, **kwargs) -> Split:
    """The split of Kaggle's table by its classes (named as messages name them)."""
    classes = SCHEMA.classes(df[schema.LABEL])
    return split_by_class(df, classes, SCHEMA.class_names, columns=schema.COLUMNS, **kwargs)


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


def test_every_split_keeps_a_fraud_and_training_two_with_only_four() -> None:
    df = table(rows=500, fraud_rate=0.0)  # the simulator's minimum: 2 frauds
    df.loc[df.index[[100, 200]], schema.LABEL] = 1
    assert frauds(df) == 4
    for seed in range(5):
        split = stratified_split(df, val_fraction=0.05, test_fraction=0.05, seed=seed)
        assert (frauds(split.train), frauds(split.val), frauds(split.test)) == (2, 1, 1)


@pytest.mark.parametrize(
    ("extra_frauds", "val_fraction", "needed"),
    [(1, 0.1, 4), (0, 0.1, 4), (0, 0.0, 3)],
    ids=["three-frauds", "two-frauds", "two-frauds-no-validation"],
)
def test_too_few_frauds_is_a_data_error(
    extra_frauds: int, val_fraction: float, needed: int
) -> None:
    """Three frauds would leave training one: half of every batch would copy that row."""
    df = table(rows=500, fraud_rate=0.0)
    df.loc[df.index[100 : 100 + extra_frauds], schema.LABEL] = 1
    assert rows_needed(val_fraction) == needed
    with pytest.raises(DataError) as err:
        stratified_split(df, val_fraction=val_fraction, source="cards.csv")
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(f"cards.csv: only {2 + extra_frauds} distinct row(s) with Class=1")
    assert f"at least {needed} are needed so that training gets 2" in message


def test_val_fraction_zero_gives_an_empty_val_frame() -> None:
    df = table(rows=500, fraud_rate=0.0)
    df.loc[df.index[100], schema.LABEL] = 1
    split = stratified_split(df, val_fraction=0.0, test_fraction=0.3)
    assert split.val.empty
    assert list(split.val.columns) == list(df.columns)
    assert (frauds(split.train), frauds(split.test)) == (2, 1)
    assert len(split.train) + len(split.test) == len(df)


# --- identical rows stay in one split ---------------------------------------------------------


def content(part: pd.DataFrame) -> set[tuple]:
    return set(map(tuple, part[list(schema.COLUMNS)].to_numpy()))


def repeated(df: pd.DataFrame, times: int) -> pd.DataFrame:
    """Every row ``times`` times, copies scattered (row_id stays unique)."""
    copies = pd.concat([df] * times, ignore_index=True)
    copies = copies.sample(frac=1.0, random_state=0).reset_index(drop=True)
    return copies.assign(row_id=np.arange(len(copies)))


def leaked(split: Split) -> int:
    """Rows of validation or test with an identical row in training."""
    train = content(split.train)
    return sum(row in train for part in (split.val, split.test) for row in content(part))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_identical_rows_land_in_one_split(seed: int) -> None:
    base = table(rows=2_000)
    df = repeated(base, 3)
    split = stratified_split(df, seed=seed)
    assert leaked(split) == 0
    assert not content(split.val) & content(split.test)
    assert ids(split.train) | ids(split.val) | ids(split.test) == ids(df)
    assert (split.duplicate_rows, split.duplicate_rare) == (2 * len(base), 2 * frauds(base))
    # Whole groups of 3: each part within a group of its fraction, frauds included.
    for part, fraction in ((split.val, 0.1), (split.test, 0.2)):
        assert abs(len(part) - fraction * len(df)) <= 3
        assert abs(frauds(part) - fraction * frauds(df)) <= 3 and frauds(part) > 0


def test_groups_of_different_sizes_and_the_minimum_in_distinct_rows() -> None:
    df = table(rows=600, fraud_rate=0.0)
    fraud_rows = [10, 20, 30, 40, 50, 60, 70, 80]
    df.loc[df.index[fraud_rows], schema.LABEL] = 1
    # Frauds: one row 5 times, one 2 times, four single rows -> 6 distinct.
    df.loc[df.index[fraud_rows[1:5]], list(schema.FEATURES)] = df.loc[
        df.index[fraud_rows[0]], list(schema.FEATURES)
    ].to_numpy()
    df.loc[df.index[fraud_rows[6]], list(schema.FEATURES)] = df.loc[
        df.index[fraud_rows[5]], list(schema.FEATURES)
    ].to_numpy()
    for seed in range(6):
        split = stratified_split(df, seed=seed)
        assert leaked(split) == 0
        assert split.duplicate_rare == 5
        assert len(content(split.train[split.train[schema.LABEL] == 1])) >= 2
        assert frauds(split.val) >= 1 and frauds(split.test) >= 1

    # Two distinct frauds among four rows are too few, however many copies.
    few = table(rows=500, fraud_rate=0.0)
    fraud_at = few.index[few[schema.LABEL] == 1]
    copies = few.loc[fraud_at]
    few = pd.concat([few, copies], ignore_index=True)
    with pytest.raises(DataError, match=r"only 2 distinct row\(s\) with Class=1 among 4 "):
        stratified_split(few)


def test_without_duplicates_it_is_the_row_by_row_split() -> None:
    """Runs trained before grouping existed get the same split back from wgangp.evaluate."""
    df = table()
    split = stratified_split(df, seed=3)
    rng = np.random.Generator(np.random.PCG64(3))
    expected_test = []
    for cls, (n_test, n_val) in ((0, (392, 196)), (1, (8, 4))):
        shuffled = rng.permutation(np.flatnonzero(df[schema.LABEL].to_numpy() == cls))
        expected_test += shuffled[:n_test].tolist()
        assert len(shuffled) - n_test - n_val > 0 and n_val > 0
    assert ids(split.test) == set(expected_test)
    assert split.duplicate_rows == 0


def test_row_groups_are_exact_even_on_a_hash_collision(monkeypatch: pytest.MonkeyPatch) -> None:
    df = repeated(table(rows=300), 2).loc[:, list(schema.COLUMNS)]
    groups = identical_row_groups(df)
    assert len(set(groups)) == 300
    collide = pd.Series(np.zeros(len(df), dtype=np.uint64))
    monkeypatch.setattr(pd.util, "hash_pandas_object", lambda *a, **k: collide)
    np.testing.assert_array_equal(identical_row_groups(df), groups)


def test_real_sample_repeated_three_times_leaks_no_test_fraud(real_sample) -> None:
    """The issue's measurement: row by row, 163 of 178 test frauds had a copy in training."""
    from wgangp.data.read.table_reader import read_table
    from wgangp.data.schema.validation import validate_table

    rows = validate_table(read_table(real_sample), SCHEMA, source="s", min_rows_per_class=2)
    df = repeated(rows, 3)
    split = stratified_split(df, seed=0)
    train = content(split.train)
    test_frauds = content(split.test[split.test[schema.LABEL] == 1])
    assert len(test_frauds) > 50
    assert not [row for row in test_frauds if row in train]
    assert leaked(split) == 0


def test_each_customer_is_in_one_part_with_every_row_of_theirs() -> None:
    """With entities, a customer's rows of both classes go to one part, and the rare class is
    split among the customers that hold its rows."""
    df = table(rows=3_000, fraud_rate=0.05)
    rng = np.random.default_rng(0)
    customer = rng.integers(0, 400, len(df))
    for seed in range(3):
        split = stratified_split(df, seed=seed, entities=customer, entity="customer")
        owner = {name: set(customer[split.rows[name]]) for name in ("train", "val", "test")}
        assert not owner["train"] & owner["test"] and not owner["train"] & owner["val"]
        assert not owner["val"] & owner["test"]
        assert all(frauds(part) for part in (split.train, split.val, split.test))
        assert frauds(split.test) / frauds(df) == pytest.approx(0.2, abs=0.08)


def test_too_few_customers_with_the_rare_class_is_one_line_naming_the_entity() -> None:
    df = table(rows=500, fraud_rate=0.02)
    customer = np.where(df[schema.LABEL] == 1, 7, np.arange(len(df)) + 100)
    customer[df.index[df[schema.LABEL] == 1][0]] = 8  # two customers hold every fraud
    with pytest.raises(DataError) as err:
        stratified_split(df, entities=customer, entity="customer_id", source="tx.csv")
    assert str(err.value) == (
        "tx.csv: only 2 customer_id value(s) hold rows with Class=1; at least 4 are needed so "
        "that training gets 2 and validation and test one each: use a larger table or another "
        "data.entity than customer_id"
    )


# --- under privacy.epsilon: each entity's part drawn on its own ----------------------------------


def _part_of_each_row(split: Split) -> dict[int, str]:
    return {i: name for name in ("train", "val", "test") for i in ids(getattr(split, name))}


@pytest.mark.parametrize("with_entities", [True, False])
def test_a_private_split_moves_no_one_when_an_entity_leaves(with_entities: bool) -> None:
    """One customer (or one distinct row) fewer, and the rows reordered: every other row keeps
    its part. The exact split, by contrast, reshuffles many (what the private one avoids)."""
    df = table(rows=3_000, fraud_rate=0.05)
    customer = np.random.default_rng(0).integers(0, 400, len(df))
    if not with_entities:
        customer = np.arange(len(df))
    leaving = customer[np.flatnonzero(df[schema.LABEL] == 1)[3]]
    keep = np.flatnonzero(customer != leaving)
    order = np.random.default_rng(1).permutation(keep)
    fewer = df.iloc[order].reset_index(drop=True)
    codes = pd.factorize(customer[order])[0]

    def parts(frame: pd.DataFrame, owners: np.ndarray, independent: bool) -> dict[int, str]:
        entities = dict(entities=owners, entity="customer") if with_entities else {}
        return _part_of_each_row(
            stratified_split(frame, seed=3, independent=independent, **entities)
        )

    before, after = parts(df, customer, True), parts(fewer, codes, True)
    assert all(before[i] == part for i, part in after.items())
    moved = parts(df, customer, False), parts(fewer, codes, False)
    assert sum(moved[0][i] != part for i, part in moved[1].items()) > 100


def test_a_private_split_meets_the_fractions_in_expectation() -> None:
    df = table(rows=3_000, fraud_rate=0.05)
    customer = np.random.default_rng(0).integers(0, 400, len(df))
    split = stratified_split(df, seed=0, entities=customer, entity="customer", independent=True)
    owner = {name: set(customer[split.rows[name]]) for name in ("train", "val", "test")}
    assert not owner["train"] & owner["test"] and not owner["train"] & owner["val"]
    assert len(split.test) / len(df) == pytest.approx(0.2, abs=0.05)
    assert len(split.val) / len(df) == pytest.approx(0.1, abs=0.04)
    assert all(frauds(part) for part in (split.train, split.test))


def test_a_private_draw_without_a_test_fraud_is_one_line() -> None:
    df = table(rows=500, fraud_rate=0.02)
    rare = np.flatnonzero(df[schema.LABEL] == 1)
    df = df.drop(index=rare[4:]).reset_index(drop=True)  # 4 frauds: the fewest a split takes
    stratified_split(df, seed=0, source="tx.csv", independent=True)
    with pytest.raises(DataError) as err:
        stratified_split(df, seed=2, source="tx.csv", independent=True)
    assert documented(one_line(err), path="tx.csv") == (
        "<path>: under privacy.epsilon each entity's part is drawn on its own, and seed 2 leaves "
        "3 entities with Class=1 in training and 0 in test (at least 2 and 1 are needed): use a "
        "larger table or another seed"
    )
