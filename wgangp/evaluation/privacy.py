"""Privacy: do synthetic frauds copy, or sit unusually close to, real training customers?

Distance to closest record (DCR): Euclidean distance from a row to its nearest real TRAINING row
(all of them, normals too), on features standardized with the training rows' mean and standard
deviation. The baseline is the DCR of the real TEST frauds: genuine new frauds the model never
saw. A generator that generalises puts its rows about as far from the training rows as new real
frauds are (``dcr_ratio`` near 1); a memorising one puts them closer (ratio well below 1, many rows
below the baseline's 5th percentile, exact copies).

Near copies (``near_copies``): the share of generated frauds closer to a training FRAUD than the
5th percentile of the real test frauds' distances to the training frauds: about 0.05 for rows
that are as new as new real frauds, far more for rows interpolated between customers (SMOTE) or
memorised. It is computed for the baselines too (``near_copies_smote``, ...).

Exact copies: synthetic rows whose closest training row equals them in every feature at the
file's precision: Time to the second and Amount to the cent (the file's values sit exactly on
those grids, so rounding is safe), V1..V28 within a relative tolerance ``copy_rtol`` (the file has
15 significant digits, the generator emits float32 with ~7; rounding both to a fixed number of
digits would split 1 copy in 5 at a rounding boundary, so a tolerance is used instead).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.neighbors import NearestNeighbors

from wgangp.data.schema import AMOUNT, FEATURES, TIME


def is_copy(rows: pd.DataFrame, closest: pd.DataFrame, rtol: float) -> np.ndarray:
    """Row-wise: equal to its closest training row at the file's precision (see module doc)."""
    grid = {TIME: 1.0, AMOUNT: 0.01}
    same = np.ones(len(rows), dtype=bool)
    for name in FEATURES:
        a = rows[name].to_numpy(dtype=np.float64)
        b = closest[name].to_numpy(dtype=np.float64)
        if name in grid:
            same &= np.round(a / grid[name]) == np.round(b / grid[name])
        else:
            same &= np.isclose(a, b, rtol=rtol, atol=0.0)
    return same


def closest_records(
    queries: pd.DataFrame, reference: pd.DataFrame, mean: np.ndarray, scale: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Euclidean distance (standardized features) and index of each query's nearest reference."""
    features = list(FEATURES)
    ref = (reference.loc[:, features].to_numpy(dtype=np.float64) - mean) / scale
    query = (queries.loc[:, features].to_numpy(dtype=np.float64) - mean) / scale
    index = NearestNeighbors(n_neighbors=1, algorithm="auto", n_jobs=1).fit(ref)
    distance, nearest = index.kneighbors(query)
    return distance[:, 0], nearest[:, 0]


def privacy_metrics(
    synthetic: pd.DataFrame,
    real_train: pd.DataFrame,
    real_test_fraud: pd.DataFrame,
    *,
    copy_rtol: float,
) -> tuple[dict[str, float], pd.DataFrame]:
    """DCR and exact-copy metrics (names without the ``eval/`` section) and a summary table."""
    values = real_train.loc[:, list(FEATURES)].to_numpy(dtype=np.float64)
    mean, scale = values.mean(axis=0), values.std(axis=0)
    scale[~(scale > 0)] = 1.0
    train = real_train.reset_index(drop=True)
    dcr_synthetic, nearest_synthetic = closest_records(synthetic, train, mean, scale)
    dcr_baseline, nearest_baseline = closest_records(real_test_fraud, train, mean, scale)
    copies = int(
        is_copy(synthetic.reset_index(drop=True), train.iloc[nearest_synthetic], copy_rtol).sum()
    )
    baseline_copies = int(
        is_copy(
            real_test_fraud.reset_index(drop=True), train.iloc[nearest_baseline], copy_rtol
        ).sum()
    )
    p5 = float(np.percentile(dcr_baseline, 5))
    synthetic_median = float(np.median(dcr_synthetic))
    baseline_median = float(np.median(dcr_baseline))
    metrics = {
        "dcr_synthetic_median": synthetic_median,
        "dcr_baseline_median": baseline_median,
        "dcr_ratio": synthetic_median / baseline_median if baseline_median > 0 else float("nan"),
        "dcr_share_below_p5": float(np.mean(dcr_synthetic < p5)),
        "exact_copies": float(copies),
    }
    table = pd.DataFrame(
        [
            _summary_row("synthetic", dcr_synthetic, copies),
            _summary_row("real_test_fraud (baseline)", dcr_baseline, baseline_copies),
        ]
    )
    return metrics, table


def _summary_row(name: str, distances: np.ndarray, copies: int) -> dict[str, float | str]:
    return {
        "rows": name,
        "n": len(distances),
        "dcr_min": float(distances.min()),
        "dcr_p5": float(np.percentile(distances, 5)),
        "dcr_median": float(np.median(distances)),
        "dcr_mean": float(distances.mean()),
        "exact_copies_of_training_rows": copies,
    }


def near_copy_share(
    generated: np.ndarray, train_frauds: np.ndarray, test_frauds: np.ndarray
) -> float:
    """Share of ``generated`` rows nearer a training fraud than 95% of the test frauds are.

    Distances are Euclidean on features standardized by the training frauds.
    """
    mean, scale = train_frauds.mean(axis=0), train_frauds.std(axis=0)
    scale[~(scale > 0)] = 1.0
    index = NearestNeighbors(n_neighbors=1, n_jobs=1).fit((train_frauds - mean) / scale)
    baseline, _ = index.kneighbors((test_frauds - mean) / scale)
    distances, _ = index.kneighbors((generated - mean) / scale)
    return float(np.mean(distances[:, 0] < np.percentile(baseline[:, 0], 5)))
