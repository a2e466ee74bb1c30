"""Privacy: do synthetic rare-class rows copy, or sit unusually close to, real training rows?

Distance to closest record (DCR): Euclidean distance from a row to its nearest real TRAINING row
(all of them, the other class too), in the mixed-type space of :mod:`wgangp.evaluation.encoding`
fitted on the training rows: numbers standardized with their mean and standard deviation, a gap
adds 1 through its indicator, a category that differs counts 1 (for a table of numbers: the
standardized features). The baseline is the DCR of the real TEST rare-class rows:
genuine new rows the model never saw. A generator that generalises puts its rows about as far
from the training rows as new real rows are (``dcr_ratio`` near 1); a memorising one puts them
closer (ratio well below 1, many rows below the baseline's 5th percentile, exact copies).

Near copies (``near_copies``): the share of generated rows closer to a training rare-class row
than the 5th percentile of the real test rows' distances to the training rare-class rows (same
space, fitted on the training rare-class rows): about 0.05 for rows that are as new as new real
rows, far more for rows interpolated between customers (SMOTE) or memorised. It is computed for
the baselines too (``near_copies_smote``, ...).

Exact copies: synthetic rows whose closest training row equals them in every feature, with gaps in
the same columns. Categories, integers and datetimes must be equal; continuous values within a
relative tolerance ``copy_rtol``; a number column with a ``round`` step on the step (Kaggle's Time
to the second, Amount to the cent: the file's values sit exactly on those grids, so rounding is
safe), the others within ``copy_rtol`` (Kaggle's file has 15 significant digits, the generator
emits float32 with ~7; rounding both to a fixed number of digits would split 1 copy in 5 at a
rounding boundary).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.neighbors import NearestNeighbors

from wgangp.data.table_schema import TableSchema
from wgangp.evaluation.encoding import TableEncoding


def is_copy(
    rows: pd.DataFrame, closest: pd.DataFrame, rtol: float, schema: TableSchema
) -> np.ndarray:
    """Row-wise: equal to its closest training row in every feature (see module doc); a number
    column with a ``round`` step (Kaggle's Time in seconds, Amount in cents) compares on it."""
    grid = {c.name: float(c.round) for c in schema.features if c.round is not None}
    same = np.ones(len(rows), dtype=bool)
    for column in schema.features:
        name = column.name
        if column.kind == "categorical" or column.kind == "datetime":
            a, b = rows[name].reset_index(drop=True), closest[name].reset_index(drop=True)
            gap_a, gap_b = a.isna().to_numpy(), b.isna().to_numpy()
            equal = (a.astype(object) == b.astype(object)).to_numpy(dtype=bool)
            same &= (gap_a & gap_b) | (~gap_a & ~gap_b & equal)
            continue
        a = rows[name].to_numpy(dtype=np.float64)
        b = closest[name].to_numpy(dtype=np.float64)
        if name in grid:
            equal = np.round(a / grid[name]) == np.round(b / grid[name])
        elif column.kind == "integer":
            equal = a == b
        else:
            equal = np.isclose(a, b, rtol=rtol, atol=0.0)
        if column.nullable:
            equal = equal | (np.isnan(a) & np.isnan(b))
        same &= equal
    return same


def closest_records(
    queries: pd.DataFrame, reference: pd.DataFrame, encoding: TableEncoding
) -> tuple[np.ndarray, np.ndarray]:
    """Euclidean distance (mixed-type space) and index of each query's nearest reference."""
    ref = encoding.distance_matrix(reference)
    query = encoding.distance_matrix(queries)
    index = NearestNeighbors(n_neighbors=1, algorithm="auto", n_jobs=1).fit(ref)
    distance, nearest = index.kneighbors(query)
    return distance[:, 0], nearest[:, 0]


def privacy_metrics(
    synthetic: pd.DataFrame,
    real_train: pd.DataFrame,
    real_test_rare: pd.DataFrame,
    schema: TableSchema,
    *,
    copy_rtol: float,
) -> tuple[dict[str, float], pd.DataFrame]:
    """DCR and exact-copy metrics (names without the ``eval/`` section) and a summary table."""
    train = real_train.reset_index(drop=True)
    encoding = TableEncoding(schema, train)
    dcr_synthetic, nearest_synthetic = closest_records(synthetic, train, encoding)
    dcr_baseline, nearest_baseline = closest_records(real_test_rare, train, encoding)
    copies = int(
        is_copy(
            synthetic.reset_index(drop=True), train.iloc[nearest_synthetic], copy_rtol, schema
        ).sum()
    )
    baseline_copies = int(
        is_copy(
            real_test_rare.reset_index(drop=True), train.iloc[nearest_baseline], copy_rtol, schema
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
            _summary_row("real_test_rare (baseline)", dcr_baseline, baseline_copies),
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


def near_copy_share(generated: np.ndarray, train_rare: np.ndarray, test_rare: np.ndarray) -> float:
    """Share of ``generated`` rows nearer a training rare row than 95% of the test rare rows are.

    Distances are Euclidean on features standardized by the training rare rows.
    """
    mean, scale = train_rare.mean(axis=0), train_rare.std(axis=0)
    scale[~(scale > 0)] = 1.0
    return _near_copy_share(
        (generated - mean) / scale, (train_rare - mean) / scale, (test_rare - mean) / scale
    )


def near_copy_share_rows(
    generated: pd.DataFrame,
    train_rare: pd.DataFrame,
    test_rare: pd.DataFrame,
    schema: TableSchema,
) -> float:
    """:func:`near_copy_share` for rows of a table: distances in the mixed-type space fitted on
    the training rare-class rows (for a table of numbers, the same as on its arrays)."""
    encoding = TableEncoding(schema, train_rare)
    return _near_copy_share(
        encoding.distance_matrix(generated),
        encoding.distance_matrix(train_rare),
        encoding.distance_matrix(test_rare),
    )


def _near_copy_share(generated: np.ndarray, train: np.ndarray, test: np.ndarray) -> float:
    index = NearestNeighbors(n_neighbors=1, n_jobs=1).fit(train)
    baseline, _ = index.kneighbors(test)
    distances, _ = index.kneighbors(generated)
    return float(np.mean(distances[:, 0] < np.percentile(baseline[:, 0], 5)))
