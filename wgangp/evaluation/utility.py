"""Utility: do synthetic rare rows make a detector of the rare class better than SMOTE does?

Every detector trains on the real training rare rows plus a subsample of the real training normals
(``max_normal_rows``; the same subsample for every method within a repeat) and is scored on the
whole of ``real_test``, which no model or transform has seen. Training sets per repeat:

- ``real``: real rows only;
- ``augmented_r<ratio>``: plus ``round(ratio * #real training rare rows)`` synthetic rare rows;
- ``smote`` / ``copula`` / ``independent`` / ``ros``: plus the same number of rare rows as the
  headline ratio, made by SMOTE (SMOTE-NC on a table with categories), a Gaussian copula of the
  training rare rows, independently resampled columns (:mod:`.baselines`) or random oversampling, so
  the headline comparison is count for count;
- ``tstr`` (train synthetic, test real): the real rare rows replaced by as many synthetic ones.

``augmented`` (no suffix) is the headline ratio (default 1.0), fixed in advance, not the best
ratio on the test set, which would select on the test data. Scores: PR-AUC (average precision; the
base rate is about 0.0017), ROC-AUC, recall at the target precision. Each repeat draws a new normal
subsample, a new synthetic draw, new SMOTE neighbours and model seeds; results are mean and
standard deviation over repeats, and lifts are paired per repeat.

On a user's table the label is the table's own (``Class`` is 1 for its rare class, the one
synthesized) and the detectors see :meth:`~wgangp.evaluation.encoding.TableEncoding.model_matrix`
rows (numbers, missing indicators, one-hot categories), fitted on the training rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from imblearn.over_sampling import RandomOverSampler
from sklearn.metrics import average_precision_score, precision_recall_curve, roc_auc_score

from wgangp.data.schema.table_schema import RARE, TableSchema
from wgangp.errors import DataError
from wgangp.evaluation.baselines import BASELINES, baseline_rare, baseline_rows
from wgangp.evaluation.detection import boosting_model, logistic_model
from wgangp.evaluation.encoding import TableEncoding

#: Detector families: the main one has no suffix in metric names.
MODEL_SUFFIXES = {"gbm": "", "logreg": "_logreg"}
SCORES = ("pr_auc", "roc_auc", "recall")


@dataclass(frozen=True)
class TrainingSet:
    method: str
    ratio: float
    n_added: int
    features: np.ndarray
    labels: np.ndarray


def ratio_tag(ratio: float) -> str:
    """``1.0 -> "1"``, ``0.5 -> "0.5"``: the suffix of ``augmented_r<ratio>``."""
    return format(float(ratio), "g")


def recall_name(target_precision: float) -> str:
    """``0.9 -> "recall_at_p90"``."""
    return f"recall_at_p{format(round(target_precision * 100, 6), 'g')}"


def recall_at_precision(labels: np.ndarray, scores: np.ndarray, target: float) -> float:
    """Highest recall among thresholds whose precision reaches ``target`` (0 if none does)."""
    precision, recall, _ = precision_recall_curve(labels, scores)
    reachable = recall[precision >= target]
    return float(reachable.max()) if reachable.size else 0.0


def n_added_for(ratio: float, n_real_rare: int) -> int:
    return max(1, int(round(ratio * n_real_rare)))


def subsample_rows(n_rows: int, max_rows: int, rng: np.random.Generator) -> np.ndarray:
    """At most ``max_rows`` row numbers of ``n_rows``, drawn without replacement, sorted."""
    return np.sort(rng.choice(n_rows, min(max_rows, n_rows), replace=False))


def normal_subsample(normals: np.ndarray, max_rows: int, rng: np.random.Generator) -> np.ndarray:
    """At most ``max_rows`` of ``normals``, drawn without replacement, in their original order."""
    return normals[subsample_rows(len(normals), max_rows, rng)]


def build_training_sets(
    real_rare: np.ndarray,
    normals: np.ndarray,
    synthetic: np.ndarray,
    *,
    ratios: list[float],
    headline_ratio: float,
    smote_k_neighbors: int,
    seed: int,
    make_baseline: Callable[[str, int, int], np.ndarray] | None = None,
) -> list[TrainingSet]:
    """The training sets of one repeat; ``synthetic`` must hold enough rows for every ratio.
    ``make_baseline(name, n, seed)`` makes a baseline's rows (default: from the arrays)."""
    n_rare = len(real_rare)
    base_x = np.vstack([normals, real_rare])
    base_y = np.concatenate([np.zeros(len(normals), dtype=int), np.ones(n_rare, dtype=int)])
    sets = [TrainingSet("real", 0.0, 0, base_x, base_y)]
    for ratio in ratios:
        k = n_added_for(ratio, n_rare)
        sets.append(
            TrainingSet(
                f"augmented_r{ratio_tag(ratio)}",
                float(ratio),
                k,
                np.vstack([base_x, synthetic[:k]]),
                np.concatenate([base_y, np.ones(k, dtype=int)]),
            )
        )
    k = n_added_for(headline_ratio, n_rare)
    for method in BASELINES:
        if make_baseline is None:
            added = baseline_rare(
                method, real_rare, normals, k, smote_k_neighbors=smote_k_neighbors, seed=seed
            )
        else:
            added = make_baseline(method, k, seed)
        x, y = np.vstack([base_x, added]), np.concatenate([base_y, np.ones(k, dtype=int)])
        sets.append(TrainingSet(method, float(headline_ratio), k, x, y))
    ros = RandomOverSampler(sampling_strategy={0: len(normals), 1: n_rare + k}, random_state=seed)
    x, y = ros.fit_resample(base_x, base_y)
    sets.append(TrainingSet("ros", float(headline_ratio), k, np.asarray(x), np.asarray(y)))
    sets.append(
        TrainingSet(
            "tstr",
            1.0,
            n_rare,
            np.vstack([normals, synthetic[:n_rare]]),
            base_y.copy(),
        )
    )
    return sets


def score_detector(
    model: Any,
    features: np.ndarray,
    labels: np.ndarray,
    test_x: np.ndarray,
    test_y: np.ndarray,
    target: float,
) -> dict[str, float]:
    """``model`` fitted on ``features``/``labels``, scored on the held-out rows."""
    model.fit(features, labels)
    proba = model.predict_proba(test_x)[:, 1]
    return {
        "pr_auc": float(average_precision_score(test_y, proba)),
        "roc_auc": float(roc_auc_score(test_y, proba)),
        "recall": recall_at_precision(test_y, proba, target),
    }


def synthetic_rows_needed(ratios: list[float], n_real_rare: int) -> int:
    return max(n_real_rare, *(n_added_for(r, n_real_rare) for r in ratios))


def utility_per_seed(
    real_train: pd.DataFrame,
    train_classes: np.ndarray,
    real_test: pd.DataFrame,
    test_classes: np.ndarray,
    draw_synthetic: Callable[[int, int], pd.DataFrame],
    *,
    ratios: list[float],
    headline_ratio: float,
    repeat_seeds: list[int],
    max_normal_rows: int,
    target_precision: float,
    smote_k_neighbors: int,
    gbm_max_iter: int,
    schema: TableSchema,
) -> pd.DataFrame:
    """One row per (repeat, model, training set) with its test scores; the frames hold the
    table's features, ``*_classes`` each row's class (1: the rare class)."""
    encoding = TableEncoding(schema, real_train)
    is_rare = np.asarray(train_classes) == RARE
    train_x = encoding.model_matrix(real_train)
    real_rare, all_normals = train_x[is_rare], train_x[~is_rare]
    rare_rows_frame = real_train[is_rare].reset_index(drop=True)
    normal_rows = real_train[~is_rare].reset_index(drop=True)
    if len(real_rare) < 2 or len(all_normals) < 2:
        raise DataError(
            f"real_train has {len(real_rare)} rare-class rows and {len(all_normals)} others; the "
            "evaluation needs at least 2 of each: pass the full training split"
        )
    test_x = encoding.model_matrix(real_test)
    test_y = (np.asarray(test_classes) == RARE).astype(int)
    n_needed = synthetic_rows_needed(ratios, len(real_rare))
    rows = []
    for repeat, seed in enumerate(repeat_seeds):
        rng = np.random.default_rng(seed)
        picked = subsample_rows(len(all_normals), max_normal_rows, rng)
        normals = all_normals[picked]
        synthetic = encoding.model_matrix(draw_synthetic(n_needed, seed))

        def make_baseline(
            name: str, n: int, baseline_seed: int, picked: np.ndarray = picked
        ) -> np.ndarray:
            made = baseline_rows(
                name,
                rare_rows_frame,
                normal_rows.iloc[picked],
                n,
                encoding,
                smote_k_neighbors=smote_k_neighbors,
                seed=baseline_seed,
            )
            return encoding.model_matrix(made)

        sets = build_training_sets(
            real_rare,
            normals,
            synthetic,
            ratios=ratios,
            headline_ratio=headline_ratio,
            smote_k_neighbors=smote_k_neighbors,
            seed=seed,
            make_baseline=make_baseline,
        )
        models = {
            "gbm": lambda s=seed: boosting_model(s, gbm_max_iter),
            "logreg": lambda s=seed: logistic_model(s),
        }
        for training in sets:
            for model_name, make_model in models.items():
                scores = score_detector(
                    make_model(),
                    training.features,
                    training.labels,
                    test_x,
                    test_y,
                    target_precision,
                )
                rows.append(
                    {
                        "repeat": repeat,
                        "seed": seed,
                        "model": model_name,
                        "method": training.method,
                        "ratio": training.ratio,
                        "n_added": training.n_added,
                        "n_train_rows": len(training.labels),
                        **scores,
                    }
                )
    return pd.DataFrame(rows)


def summarize(per_seed: pd.DataFrame, headline_ratio: float) -> pd.DataFrame:
    """Mean and standard deviation (population, ddof=0) per model and training set."""
    grouped = per_seed.groupby(["model", "method"], sort=False)
    summary = grouped[["ratio", "n_added"]].first()
    for score in SCORES:
        summary[f"{score}_mean"] = grouped[score].mean()
        summary[f"{score}_std"] = grouped[score].std(ddof=0)
    summary = summary.reset_index()
    summary["headline"] = summary["method"] == f"augmented_r{ratio_tag(headline_ratio)}"
    return summary


def utility_metrics(
    per_seed: pd.DataFrame, headline_ratio: float, target_precision: float
) -> dict[str, float]:
    """Flat metrics (names without the ``eval/`` section), e.g. ``pr_auc_smote_logreg_std``."""
    headline = f"augmented_r{ratio_tag(headline_ratio)}"
    score_names = {
        "pr_auc": "pr_auc",
        "roc_auc": "roc_auc",
        "recall": recall_name(target_precision),
    }
    metrics: dict[str, float] = {}
    for model_name, suffix in MODEL_SUFFIXES.items():
        rows = per_seed[per_seed["model"] == model_name]
        by_method = {m: g.sort_values("repeat") for m, g in rows.groupby("method", sort=False)}
        for method, group in by_method.items():
            aliases = [method] + (["augmented"] if method == headline else [])
            for score, public in score_names.items():
                values = group[score].to_numpy()
                for alias in aliases:
                    metrics[f"{public}_{alias}{suffix}"] = float(values.mean())
                    metrics[f"{public}_{alias}{suffix}_std"] = float(values.std())
        augmented = by_method[headline]["pr_auc"].to_numpy()
        for baseline in ("real", "ros", *BASELINES):
            lift = augmented - by_method[baseline]["pr_auc"].to_numpy()
            metrics[f"lift_vs_{baseline}{suffix}"] = float(lift.mean())
            metrics[f"lift_vs_{baseline}{suffix}_std"] = float(lift.std())
    return metrics
