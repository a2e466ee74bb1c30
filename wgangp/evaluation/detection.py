"""Detection (classifier two-sample test, C2ST): can a classifier tell synthetic from real?

Real = all real frauds (training and test: the test frauds alone are too few for a stable AUC;
copying training rows is caught by the privacy metrics, not here). Synthetic rows are subsampled
to the same count, so the two classes are balanced. Stratified k-fold cross-validated ROC-AUC, the
mean over folds: 0.5 means indistinguishable, 1.0 means every synthetic row is recognisable.
Two classifiers: a linear one (standardized logistic regression; sees shifted means and
scales) and gradient boosting (sees shapes, tails and interactions).

Rows present in both classes (a synthetic row that is an exact copy of a real one) are kept in the
same fold (stratified GROUP k-fold, one group per distinct row): otherwise the copy's twin, with
the opposite label, sits in the training folds and the classifier "anti-learns" it; identical
samples then score an AUC near 0 instead of 0.5. Near-copies can still pull the AUC below 0.5;
an AUC clearly below 0.5 means copying, see the privacy metrics.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedGroupKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from wgangp.data.schema import FEATURES


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


def identical_row_groups(features: np.ndarray) -> np.ndarray:
    """One integer group per distinct row, so exact duplicates share a fold."""
    hashes = pd.util.hash_pandas_object(pd.DataFrame(features), index=False).to_numpy()
    return pd.factorize(hashes)[0]


def cross_validated_auc(
    features: np.ndarray, labels: np.ndarray, make_model, folds: int, seed: int
) -> list[float]:
    """ROC-AUC on each held-out fold of a stratified group k-fold split (see module doc)."""
    splitter = StratifiedGroupKFold(n_splits=folds, shuffle=True, random_state=seed)
    groups = identical_row_groups(features)
    scores = []
    for train_idx, test_idx in splitter.split(features, labels, groups):
        model = make_model()
        model.fit(features[train_idx], labels[train_idx])
        proba = model.predict_proba(features[test_idx])[:, 1]
        scores.append(float(roc_auc_score(labels[test_idx], proba)))
    return scores


def detection_metrics(
    real_fraud: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    folds: int,
    gbm_max_iter: int,
    seed: int,
) -> tuple[dict[str, float], pd.DataFrame]:
    """C2ST AUCs (names without the ``eval.`` prefix) and a per-fold table."""
    rng = np.random.default_rng(seed)
    n = min(len(real_fraud), len(synthetic))
    real_rows = real_fraud.iloc[np.sort(rng.choice(len(real_fraud), n, replace=False))]
    synthetic_rows = synthetic.iloc[np.sort(rng.choice(len(synthetic), n, replace=False))]
    features = np.vstack(
        [
            real_rows.loc[:, list(FEATURES)].to_numpy(dtype=np.float64),
            synthetic_rows.loc[:, list(FEATURES)].to_numpy(dtype=np.float64),
        ]
    )
    labels = np.concatenate([np.zeros(n, dtype=int), np.ones(n, dtype=int)])
    folds = min(folds, n)
    classifiers = {
        "logreg": lambda: logistic_model(seed),
        "gbm": lambda: boosting_model(seed, gbm_max_iter),
    }
    metrics: dict[str, float] = {}
    rows = []
    for name, make_model in classifiers.items():
        scores = cross_validated_auc(features, labels, make_model, folds, seed)
        metrics[f"c2st_auc_{name}"] = float(np.mean(scores))
        metrics[f"c2st_auc_{name}_std"] = float(np.std(scores))
        rows += [
            {"classifier": name, "fold": i, "roc_auc": s, "rows_per_class": n}
            for i, s in enumerate(scores)
        ]
    return metrics, pd.DataFrame(rows)
