"""Detection (classifier two-sample test, C2ST): can a classifier tell generated from real rare
rows?

The real side is the test rare rows, which no model or transform saw. Each repeat fits the
classifier on a random half of each set and scores ROC-AUC on the other halves; the metric is the
mean over repeats (0.5 = indistinguishable, 1.0 = every generated row is recognisable), its
``_std`` the spread over repeats. Identical rows stay on the same side of the cut, whichever set
they are in: a copy on both sides would be recognised by memory, or anti-learned, not judged by
its distribution.

Cross-validated predictions over k folds on a few hundred rows can anti-learn: a fold's held-out
rows are what its training folds lack, so real against real can read far below 0.5, and
``max(auc, 1 - auc)`` would turn that into a high score. So the AUC is never flipped, and every
score comes with its **control**: the same classifier and protocol on the test rare rows against
other real rare rows (the training rare rows), the floor a perfect generator would reach with this
little data. The baselines' rows (SMOTE, a Gaussian copula) are judged by the same protocol.

Balanced (``c2st_balanced_auc_*``): the standard C2ST compares equal numbers of rows. The
``c2st_auc_*`` metrics keep the protocol every earlier run logged (all ``evaluate.n_synthetic``
generated rows against the few test rare rows, e.g. 2,000 against 59 on Kaggle's sample), so their
numbers stay comparable across runs; the balanced ones draw, per repeat, as many rows of the larger
set as the smaller one has (a fresh draw each repeat) and then cut both in halves as above. A
balanced score rests on ``2 * min(real, generated)`` rows; its ``_std`` over repeats is its noise.

Rows reach the classifiers as :meth:`~wgangp.evaluation.encoding.TableEncoding.model_matrix`
rows: numbers, missing indicators and one-hot categories of the table's schema.

Two classifiers: a linear one (standardized logistic regression; sees shifted means and scales)
and gradient boosting (sees shapes, tails and interactions).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler


def logistic_model(seed: int) -> object:
    """Standardized logistic regression (lbfgs, single-threaded)."""
    return make_pipeline(
        StandardScaler(), LogisticRegression(max_iter=2000, C=1.0, random_state=seed)
    )


def boosting_model(seed: int, max_iter: int) -> HistGradientBoostingClassifier:
    """Small histogram gradient boosting; no early stopping so the result needs no split."""
    return HistGradientBoostingClassifier(
        max_iter=max_iter,
        learning_rate=0.1,
        max_leaf_nodes=15,
        l2_regularization=1.0,
        early_stopping=False,
        random_state=seed,
    )


#: Boosting's default smallest leaf (rows), kept wherever a fit has 200 rows or more.
MIN_LEAF_ROWS = 20


def scale_leaves_to(model: Any, fit_rows: int) -> None:
    """Give a boosting model leaves of a tenth of its fit's rows (5 to 20).

    With boosting's default of 20 rows a leaf, a fit of 30 rows cannot split at all (every
    AUC is exactly 0.5) and one of 60 splits once: a balanced test on a small held-out class
    would read "can't tell" whatever the rows. Models without leaves are left alone.
    """
    params: dict[str, Any] = getattr(model, "get_params", dict)()
    if "min_samples_leaf" in params:
        model.set_params(min_samples_leaf=min(MIN_LEAF_ROWS, max(5, fit_rows // 10)))


def identical_row_groups(features: np.ndarray) -> np.ndarray:
    """One integer group per distinct row, so exact duplicates stay together."""
    hashes = pd.util.hash_pandas_object(pd.DataFrame(features), index=False).to_numpy()
    return pd.factorize(hashes)[0]


def half_split_aucs(
    real: np.ndarray,
    other: np.ndarray,
    make_model: Callable[[int], Any],
    *,
    repeats: int,
    seed: int,
    scale_leaves: bool = False,
) -> list[float]:
    """ROC-AUC of ``make_model(repeat)`` separating ``other`` (label 1) from ``real`` (label 0),
    fitted on half of the rows and scored on the rest, once per repeat.

    The cut goes between distinct rows of both sets together: a row present in both (a copy)
    is on one side of it with all its twins, so its opposite labels cannot be memorised.
    ``scale_leaves``: a boosting model's smallest leaf follows the fit's size
    (:func:`scale_leaves_to`), as the balanced test on a few hundred rows needs.
    """
    rng = np.random.default_rng(seed)
    x = np.vstack([real, other])
    y = np.concatenate([np.zeros(len(real), dtype=int), np.ones(len(other), dtype=int)])
    groups = identical_row_groups(x)
    scores = []
    for repeat in range(repeats):
        distinct = rng.permutation(groups.max() + 1)
        fit = np.isin(groups, distinct[: len(distinct) // 2])
        if len(np.unique(y[fit])) < 2 or len(np.unique(y[~fit])) < 2:
            continue  # a cut that left one side without a class (only with a handful of rows)
        model = make_model(repeat)
        if scale_leaves:
            scale_leaves_to(model, int(fit.sum()))
        model.fit(x[fit], y[fit])
        proba = model.predict_proba(x[~fit])[:, 1]
        scores.append(float(roc_auc_score(y[~fit], proba)))
    return scores


def detection_metrics(
    real_test: np.ndarray,
    generated: dict[str, np.ndarray],
    *,
    repeats: int,
    gbm_max_iter: int,
    seed: int,
    balanced: bool = False,
) -> tuple[dict[str, float], pd.DataFrame]:
    """AUCs of the test rare rows against each set of ``generated`` rows, by name, with both
    classifiers: the metrics and one table row per repeat.

    ``generated[""]`` is the model's rows (``c2st_auc_gbm``); other names get their name as a
    suffix (``c2st_auc_gbm_control`` for other real rare rows, ``c2st_auc_gbm_copula``, ...). With
    ``balanced``, equal numbers of real and generated rows per repeat
    (:func:`balanced_half_split_aucs`), named ``c2st_balanced_auc_...``.
    """
    aucs = balanced_half_split_aucs if balanced else half_split_aucs
    prefix = "c2st_balanced_auc" if balanced else "c2st_auc"
    classifiers = {
        "logreg": lambda repeat: logistic_model(seed + repeat),
        "gbm": lambda repeat: boosting_model(seed + repeat, gbm_max_iter),
    }
    metrics: dict[str, float] = {}
    rows = []
    for name, rows_of in generated.items():
        suffix = f"_{name}" if name else ""
        size = min(len(real_test), len(rows_of))
        sizes = (size, size) if balanced else (len(real_test), len(rows_of))
        for classifier, make_model in classifiers.items():
            scores = aucs(real_test, rows_of, make_model, repeats=repeats, seed=seed)
            key = f"{prefix}_{classifier}{suffix}"
            metrics[key] = float(np.mean(scores)) if scores else float("nan")
            metrics[f"{key}_std"] = float(np.std(scores)) if scores else float("nan")
            rows += [
                {
                    "compared_with": name or "synthetic",
                    "classifier": classifier,
                    "repeat": i,
                    "roc_auc": s,
                    "real_rows": sizes[0],
                    "other_rows": sizes[1],
                }
                for i, s in enumerate(scores)
            ]
    return metrics, pd.DataFrame(rows)


def _same_model(make_model: Callable[[int], Any], repeat: int, _: int) -> Any:
    """``make_model(repeat)`` whatever repeat asks: a balanced draw's one split."""
    return make_model(repeat)


def balanced_half_split_aucs(
    real: np.ndarray,
    other: np.ndarray,
    make_model: Callable[[int], Any],
    *,
    repeats: int,
    seed: int,
) -> list[float]:
    """:func:`half_split_aucs` on equal numbers of rows: per repeat, a fresh draw of
    ``min(len(real), len(other))`` rows of each set, boosting's leaves scaled to the fit."""
    rng = np.random.default_rng(seed)
    size = min(len(real), len(other))
    scores = []
    for repeat in range(repeats):
        real_rows = real[np.sort(rng.choice(len(real), size, replace=False))]
        other_rows = other[np.sort(rng.choice(len(other), size, replace=False))]
        scores += half_split_aucs(
            real_rows,
            other_rows,
            functools.partial(_same_model, make_model, repeat),
            repeats=1,
            seed=int(rng.integers(2**31)),
            scale_leaves=True,
        )
    return scores
