"""SDMetrics' privacy metrics as the evaluation calls them: copies leak, new rows do not."""

from __future__ import annotations

import numpy as np
import pandas as pd
from support.creditcard import FEATURES, SCHEMA

from wgangp.evaluation.library_privacy import (
    attack_columns,
    dcr_overfitting_protection,
    disclosure_protection,
    library_privacy,
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


def test_library_privacy_names_a_metric_pair_per_generator_and_a_reference_row() -> None:
    train, holdout = _rows(80, 0), _rows(40, 1)
    metrics, table = library_privacy(
        {"": _rows(120, 2), "smote": train}, train, holdout, SCHEMA, seed=0
    )
    assert set(metrics) == {
        "dcr_overfitting_protection",
        "disclosure_protection",
        "dcr_overfitting_protection_smote",
        "disclosure_protection_smote",
    }
    assert all(0.0 <= v <= 1.0 for v in metrics.values())
    assert list(table["rows"]) == ["gan", "smote", "real_test_rare (reference)"]
