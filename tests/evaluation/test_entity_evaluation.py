"""run_evaluation on a table of customers' transactions: disclosure counts customers, not rows."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from wgangp.config import EvaluateConfig
from wgangp.data.schema.table_schema import ColumnSchema, TableSchema
from wgangp.errors import DataError
from wgangp.evaluation.disclosure import near_copy_share_rows
from wgangp.evaluation.suite import EvaluationResult, run_evaluation

SCHEMA = TableSchema(
    columns=(
        ColumnSchema("amount", "continuous"),
        ColumnSchema("items", "integer"),
        ColumnSchema("bad", "categorical", levels=("no", "yes")),
    ),
    label="bad",
    positive="yes",
)


def transactions(customers: range, rare: int, rows_each: int, seed: int) -> pd.DataFrame:
    """``rows_each`` rows per customer around its own point; the last ``rare`` customers are
    of the rare class (larger amounts), and the first rare one holds five times as many rows."""
    rng = np.random.default_rng(seed)
    codes = list(customers)
    counts = [rows_each] * (len(codes) - rare) + [5 * rows_each] + [rows_each] * (rare - 1)
    owner = np.repeat(codes, counts)
    is_rare = np.repeat([False] * (len(codes) - rare) + [True] * rare, counts)
    centre = rng.normal(size=len(codes))[owner - codes[0]] + 2.0 * is_rare
    return pd.DataFrame(
        {
            "amount": centre + 0.1 * rng.normal(size=len(owner)),
            "items": rng.poisson(3, len(owner)).astype(float),
            "bad": np.where(is_rare, "yes", "no"),
            "customer": owner,
        }
    )


def sampler(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed % 2**31)
    return pd.DataFrame(
        {"amount": 2.0 + rng.normal(size=n), "items": rng.poisson(3, n).astype(float)}
    )


def settings() -> EvaluateConfig:
    return EvaluateConfig(
        n_synthetic=60,
        augment_ratios=[1.0],
        seeds=1,
        max_normal_rows=300,
        c2st_repeats=2,
        gbm_max_iter=10,
        sdmetrics=True,
    )


TRAIN = transactions(range(0, 120), rare=12, rows_each=3, seed=1)
TEST = transactions(range(120, 180), rare=8, rows_each=3, seed=2)


@pytest.fixture(scope="module")
def result() -> EvaluationResult:
    return run_evaluation(TRAIN, TEST, sampler, settings(), SCHEMA, entity="customer")


def test_disclosure_counts_the_customers(result: EvaluationResult) -> None:
    table = result.tables["disclosure"].set_index("rows")
    baseline = table.loc["real_test_rare (baseline)"]
    assert (baseline["n"], baseline["entities"]) == (15 + 7 * 3, 8)
    reference = table.loc["real_train_rare (reference)"]
    assert (reference["n"], reference["entities"]) == (15 + 11 * 3, 12)
    metrics = result.metrics
    assert all(math.isfinite(v) for v in metrics.values())
    test_rare = TEST[TEST["bad"] == "yes"]
    expected = near_copy_share_rows(
        result.samples["synthetic"],
        result.samples["real_train_rare"],
        result.samples["real_test_rare"],
        SCHEMA,
        test_owners=test_rare["customer"].to_numpy(),
    )
    assert metrics["eval/near_copies"] == expected
    assert 0.0 <= metrics["eval/dcr_overfitting_protection"] <= 1.0


def test_without_the_column_distinct_rows_are_the_entities() -> None:
    train, test = TRAIN.drop(columns="customer"), TEST.drop(columns="customer")
    plain = run_evaluation(train, test, sampler, settings(), SCHEMA)
    baseline = plain.tables["disclosure"].set_index("rows").loc["real_test_rare (baseline)"]
    assert baseline["entities"] == baseline["n"] == 36


def test_a_missing_or_non_integer_entity_column_is_one_line() -> None:
    with pytest.raises(DataError, match="real_test lacks the entity column 'customer'"):
        run_evaluation(
            TRAIN, TEST.drop(columns="customer"), sampler, settings(), SCHEMA, entity="customer"
        )
    with pytest.raises(DataError, match="disclosure_train lacks the entity column 'customer'"):
        run_evaluation(
            TRAIN,
            TEST,
            sampler,
            settings(),
            SCHEMA,
            disclosure_train=TRAIN.drop(columns="customer"),
            entity="customer",
        )
    named = TRAIN.assign(customer=TRAIN["customer"].astype(str))
    with pytest.raises(DataError, match="not integer codes"):
        run_evaluation(named, TEST, sampler, settings(), SCHEMA, entity="customer")
