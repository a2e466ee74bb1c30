"""Privacy as SDMetrics measures it: membership inference (DCR) and attribute inference (CAP).

The near and exact copies (:mod:`wgangp.evaluation.privacy`) are this project's own distances;
these two are the field's library's, so a reader can compare them with other generators' reports.

- ``dcr_overfitting_protection``: SDMetrics' ``DCROverfittingProtection``. Each synthetic fraud is
  called closer to the training frauds or to held-out real frauds (the test split's) by its
  distance to the closest record in each; the score is ``min(1, 2 * share closer to holdout)``:
  1 when a synthetic row is no likelier to sit by a training fraud than by an unseen one (an
  attacker holding a real row learns nothing about its membership from nearby synthetic rows),
  0 when every synthetic row sits by a training fraud. The two reference sets must be the same
  size or the larger one wins by count alone, so each repeat draws as many training frauds as
  there are held-out ones (seeded; the library's own subsampling is not). The mean over repeats.
- ``disclosure_protection``: SDMetrics' ``DisclosureProtection`` with the CAP attack. An attacker
  who knows a training fraud's Time and Amount (what a merchant or the card holder knows) looks
  up synthetic frauds with the same values and guesses its V14 (the component that separates
  frauds best, docs/quality.md) from theirs; all three columns in 10 bins of the training
  frauds' range. 1 when the guess is no better than chance (one in 10 bins), lower as it
  improves.

Both are computed for the GAN's rows and for each baseline's (``_smote``, ``_copula``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from wgangp.data.schema import AMOUNT, FEATURES, TIME

#: The attacker's known columns and the one it guesses (module doc).
KNOWN = [TIME, AMOUNT]
SENSITIVE = ["V14"]
#: Bins per column of the disclosure attack (SDMetrics' default).
BINS = 10
#: Repeats of the DCR comparison, each with a fresh equal-sized draw of training frauds.
DCR_REPEATS = 5

_METADATA = {"columns": {name: {"sdtype": "numerical"} for name in FEATURES}}


def dcr_overfitting_protection(
    synthetic: np.ndarray, train: np.ndarray, holdout: np.ndarray, seed: int
) -> tuple[float, float]:
    """(score, share of synthetic rows closer to the training rows); rows in FEATURES order."""
    from sdmetrics.single_table import DCROverfittingProtection

    rng = np.random.default_rng(seed)
    size = min(len(train), len(holdout))
    frame = _frame(synthetic)
    scores, closer = [], []
    for _ in range(DCR_REPEATS):
        train_rows = _frame(train[rng.choice(len(train), size, replace=False)])
        holdout_rows = _frame(holdout[rng.choice(len(holdout), size, replace=False)])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = DCROverfittingProtection.compute_breakdown(
                train_rows, frame, holdout_rows, _METADATA
            )
        scores.append(result["score"])
        closer.append(result["synthetic_data_percentages"]["closer_to_training"])
    return float(np.mean(scores)), float(np.mean(closer))


def disclosure_protection(synthetic: np.ndarray, train: np.ndarray) -> float:
    """SDMetrics' CAP disclosure protection of the training frauds (module doc)."""
    from sdmetrics.single_table import DisclosureProtection

    columns = [*KNOWN, *SENSITIVE]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(
            DisclosureProtection.compute(
                _frame(train)[columns],
                _frame(synthetic)[columns],
                known_column_names=KNOWN,
                sensitive_column_names=SENSITIVE,
                continuous_column_names=columns,
                num_discrete_bins=BINS,
            )
        )


def library_privacy(
    generated: dict[str, np.ndarray], train: np.ndarray, holdout: np.ndarray, seed: int
) -> tuple[dict[str, float], pd.DataFrame]:
    """Both metrics for each generator in ``generated`` (name -> rows; "" is the GAN's), named
    ``dcr_overfitting_protection{_name}`` and ``disclosure_protection{_name}``, and a table with
    the held-out real frauds' disclosure protection as the reference a fresh real sample gets."""
    metrics: dict[str, float] = {}
    rows = []
    for name, synthetic in generated.items():
        suffix = f"_{name}" if name else ""
        score, closer = dcr_overfitting_protection(synthetic, train, holdout, seed)
        disclosure = disclosure_protection(synthetic, train)
        metrics[f"dcr_overfitting_protection{suffix}"] = score
        metrics[f"disclosure_protection{suffix}"] = disclosure
        rows.append(
            {
                "rows": name or "gan",
                "dcr_overfitting_protection": score,
                "closer_to_training": closer,
                "disclosure_protection": disclosure,
            }
        )
    rows.append(
        {
            "rows": "real_test_fraud (reference)",
            "dcr_overfitting_protection": float("nan"),
            "closer_to_training": float("nan"),
            "disclosure_protection": disclosure_protection(holdout, train),
        }
    )
    return metrics, pd.DataFrame(rows)


def _frame(rows: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(np.asarray(rows, np.float64), columns=list(FEATURES))
