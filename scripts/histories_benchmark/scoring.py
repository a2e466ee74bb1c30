"""One system's histories scored against the held-out customers: behavioral fidelity (test
customers against the floor customers, ``behavior.behavioral_fidelity``), history detection
(test customers against as many synthetic ones), and utility: a fraud detector reading velocity
features (``history_features.row_features``) trained on synthetic histories, or on the real
training customers plus the synthetic fraud-touched histories, scored on the test customers' rows
by average precision (the share of fraud rows is ~1%: ROC-AUC beside it).

The per-seed references (``control``): the same detection on two sets of real customers (test
against floor) and the detector trained on the real training customers alone.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.metrics import average_precision_score, roc_auc_score
from threadpoolctl import threadpool_limits

from scripts.histories_benchmark.split import HistorySplit
from wgangp.histories.behavior import (
    HistoryColumns,
    behavioral_fidelity,
    entity_sample,
    history_detection,
)
from wgangp.histories.history_features import row_features
from wgangp.histories.timelines import fraud_rows


def cleaned(frame: pd.DataFrame, cols: HistoryColumns) -> tuple[pd.DataFrame, int]:
    """A system's rows as the scores read them: a row without an entity or a readable time is
    dropped (counted); the label 0/1; amounts as numbers; a shared id the system does not
    generate (DGAN; the row model where wgangp's schema finds the column an identifier) is an
    empty column, so the measures that read it have nothing (``inf``)."""
    frame = frame.copy()
    for name in cols.shared:
        if name not in frame:
            frame[name] = None
    if not pd.api.types.is_datetime64_any_dtype(frame[cols.time]):
        frame[cols.time] = pd.to_datetime(frame[cols.time], errors="coerce", format="mixed")
    keep = frame[cols.time].notna() & frame[cols.entity].notna()
    frame = frame[keep].reset_index(drop=True)
    frame[cols.entity] = frame[cols.entity].astype(str)
    frame[cols.label] = fraud_rows(frame, cols).astype(int)
    if cols.amount:
        frame[cols.amount] = pd.to_numeric(frame[cols.amount], errors="coerce")
    return frame, int((~keep).sum())


def _detector(seed: int) -> HistGradientBoostingClassifier:
    return HistGradientBoostingClassifier(max_iter=200, learning_rate=0.1, random_state=seed)


def utility(train: pd.DataFrame, test: pd.DataFrame, cols: HistoryColumns, seed: int) -> dict:
    """Average precision and ROC-AUC on the test rows of a detector fitted on ``train``'s rows."""
    x_train = row_features(train, cols)
    y_train = x_train.pop("fraud").to_numpy()
    if len(np.unique(y_train)) < 2:
        return {"ap": float("nan"), "roc_auc": float("nan")}
    x_test = row_features(test, cols)
    y_test = x_test.pop("fraud").to_numpy()
    with threadpool_limits(limits=1):
        model = _detector(seed).fit(x_train, y_train)
        scores = model.predict_proba(x_test.loc[:, x_train.columns])[:, 1]
    return {
        "ap": float(average_precision_score(y_test, scores)),
        "roc_auc": float(roc_auc_score(y_test, scores)),
    }


def system_figures(
    split: HistorySplit, synthetic: pd.DataFrame, cols: HistoryColumns, seed: int, repeats: int
) -> dict[str, float]:
    """Every figure of one system's histories."""
    figures: dict[str, float] = {}
    fidelity = behavioral_fidelity(split.test, split.floor, synthetic, cols, seed=seed)
    figures |= {f"fid.{k}": v for k, v in fidelity.items()}
    cut = entity_sample(synthetic, cols.entity, split.entities("test", cols), seed)
    with threadpool_limits(limits=1):
        figures["detection"] = history_detection(split.test, cut, cols, seed, repeats=repeats)
    only = utility(synthetic, split.test, cols, seed)
    figures["utility.synthetic_ap"] = only["ap"]
    figures["utility.synthetic_roc_auc"] = only["roc_auc"]
    touched = synthetic.groupby(cols.entity)[cols.label].transform("max") > 0
    fraud_histories = synthetic[touched.to_numpy()]
    renamed = fraud_histories.assign(**{cols.entity: "syn-" + fraud_histories[cols.entity]})
    added = pd.concat([split.train, renamed], ignore_index=True)
    boosted = utility(added, split.test, cols, seed)
    figures["utility.augmented_ap"] = boosted["ap"]
    figures["utility.augmented_roc_auc"] = boosted["roc_auc"]
    figures["histories"] = float(synthetic[cols.entity].nunique())
    figures["rows_per_history"] = float(len(synthetic) / max(1, synthetic[cols.entity].nunique()))
    figures["fraud_row_share"] = float(synthetic[cols.label].mean()) if len(synthetic) else np.nan
    return figures


def control_figures(split: HistorySplit, cols: HistoryColumns, seed: int, repeats: int) -> dict:
    """The seed's references: real against real detection, the real-only detector."""
    with threadpool_limits(limits=1):
        detection = history_detection(split.test, split.floor, cols, seed, repeats=repeats)
    real = utility(split.train, split.test, cols, seed)
    return {
        "detection": detection,
        "utility.real_ap": real["ap"],
        "utility.real_roc_auc": real["roc_auc"],
        "histories": float(split.entities("test", cols)),
        "rows_per_history": float(len(split.test) / max(1, split.entities("test", cols))),
        "fraud_row_share": float(fraud_rows(split.test, cols).mean()),
    }
