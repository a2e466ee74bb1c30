"""SDMetrics' privacy metrics as the evaluation calls them: copies leak, new rows do not; the
membership comparison draws entities, one row each."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from support.creditcard import FEATURES, SCHEMA

from wgangp.evaluation.library_disclosure import (
    attack_columns,
    dcr_overfitting_protection,
    dcr_repeat_scores,
    disclosure_protection,
    library_disclosure,
    one_row_per_entity,
)


def _rows(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    rows = rng.normal(size=(n, len(FEATURES)))
    rows[:, 1:4] += rows[:, [0]]  # V1..V3 depend on Time a little
    rows[:, 14] += 2 * rows[:, 0] - 2 * rows[:, -1]  # V14 on Time and Amount
    return rows


def test_copies_of_training_rows_get_no_membership_protection_and_new_rows_full() -> None:
    train, holdout = _rows(100, 0), _rows(100, 1)
    copies, closer = dcr_overfitting_protection(
        train[np.arange(300) % 100], train, holdout, 0, SCHEMA
    )
    assert copies == 0.0 and closer == 1.0
    fresh, closer = dcr_overfitting_protection(_rows(300, 2), train, holdout, 0, SCHEMA)
    assert fresh > 0.8 and closer < 0.6


def test_copies_disclose_the_sensitive_column_more_than_new_rows() -> None:
    """The generic attack (no Kaggle special case): the attacker knows two numbers and guesses
    the number with the most distinct values (here Time, the first: all have 200)."""
    train = _rows(200, 0)
    frame = pd.DataFrame(train, columns=list(FEATURES))
    assert attack_columns(SCHEMA, frame) == (["V1", "V2"], ["Time"])
    copies = disclosure_protection(train, train, SCHEMA)
    assert copies < disclosure_protection(_rows(200, 2), train, SCHEMA) - 0.1


def test_library_disclosure_names_a_metric_pair_per_generator_and_a_reference_row() -> None:
    train, holdout = _rows(80, 0), _rows(40, 1)
    metrics, table = library_disclosure(
        {"": _rows(120, 2), "smote": train}, train, holdout, SCHEMA, seed=0, repeats=3
    )
    assert set(metrics) == {
        "dcr_overfitting_protection",
        "dcr_overfitting_protection_std",
        "disclosure_protection",
        "dcr_overfitting_protection_smote",
        "dcr_overfitting_protection_smote_std",
        "disclosure_protection_smote",
    }
    assert all(0.0 <= v <= 1.0 for v in metrics.values())
    assert list(table["rows"]) == ["gan", "smote", "real_test_rare (reference)"]
    assert list(table["dcr_draws"]) == [3, 3, 0]


def test_the_spread_is_over_the_draws_whose_mean_is_the_score() -> None:
    train, holdout = _rows(80, 0), _rows(40, 1)
    rows = np.vstack([train[:60], _rows(60, 2)])  # half copies: a score below its cap of 1
    scores, _ = dcr_repeat_scores(rows, train, holdout, 0, SCHEMA, repeats=3)
    metrics, _ = library_disclosure({"": rows}, train, holdout, SCHEMA, seed=0, repeats=3)
    assert len(set(scores)) > 1  # each draw compares other entities
    assert metrics["dcr_overfitting_protection"] == pytest.approx(np.mean(scores))
    assert metrics["dcr_overfitting_protection_std"] == pytest.approx(np.std(scores))
    two, _ = dcr_repeat_scores(rows, train, holdout, 0, SCHEMA, repeats=2)
    assert two == scores[:2]  # fewer draws are the first draws of more


def test_the_draw_takes_one_row_of_each_drawn_entity() -> None:
    owners = np.array([7, 7, 7, 3, 3, 5, 9, 9, 9, 9])
    seen = set()
    for seed in range(40):
        picks = one_row_per_entity(owners, 3, np.random.default_rng(seed))
        assert len(picks) == 3 and len(set(owners[picks])) == 3
        seen.update(picks.tolist())
    assert seen == set(range(10))  # every row of every entity gets its turn


def test_with_one_row_each_the_draw_is_the_row_draw_it_replaced() -> None:
    owners = np.arange(50)[::-1] * 3  # any codes: entities number by first appearance
    drawn = one_row_per_entity(owners, 20, np.random.default_rng(4))
    assert drawn.tolist() == np.random.default_rng(4).choice(50, 20, replace=False).tolist()


def test_each_repeat_compares_as_many_entities_on_each_side(monkeypatch) -> None:
    """SDMetrics replaced by a recorder: 30 training rows of 6 customers against 40 held-out
    rows of 8 draw 6 rows on each side, one per customer."""
    from sdmetrics.single_table import DCROverfittingProtection

    calls = []

    def record(train, synthetic, holdout, metadata):
        calls.append((train, holdout))
        return {"score": 1.0, "synthetic_data_percentages": {"closer_to_training": 0.5}}

    monkeypatch.setattr(DCROverfittingProtection, "compute_breakdown", record)
    train, holdout = _rows(30, 0), _rows(40, 1)
    train_owners, holdout_owners = np.arange(30) // 5, np.arange(40) % 8
    score, closer = dcr_overfitting_protection(
        _rows(10, 2),
        train,
        holdout,
        0,
        SCHEMA,
        train_owners=train_owners,
        holdout_owners=holdout_owners,
    )
    assert (score, closer) == (1.0, 0.5) and len(calls) == 5
    names = list(FEATURES)
    for drawn_train, drawn_holdout in calls:
        assert len(drawn_train) == len(drawn_holdout) == 6
        rows = [np.flatnonzero((train == r).all(axis=1))[0] for r in drawn_train[names].to_numpy()]
        assert sorted(train_owners[rows]) == list(range(6))
        rows = [
            np.flatnonzero((holdout == r).all(axis=1))[0] for r in drawn_holdout[names].to_numpy()
        ]
        assert len(set(holdout_owners[rows])) == 6
