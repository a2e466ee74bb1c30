"""What each generator's rows are scored by, the same way for every generator of a table.

- ``detection``: the balanced C2ST: the real held-out rare rows against as many generated rows,
  gradient boosting fitted on a random half of both and scored (ROC-AUC) on the other half,
  averaged over repeats (the project's protocol, :mod:`wgangp.evaluation.detection`). 0.5: can't
  tell; the control (real training rare rows against the held-out ones) is the floor at this
  number of rows.
- ``near_copies``: the share of rows nearer a training rare row than 95% of the held-out rare
  rows are, identical rows counting once (:func:`wgangp.evaluation.disclosure.near_copy_share_rows`:
  the benchmark's tables name no entity column). The control's is that of
  real rare rows nobody trained on (another held-out split's): what rows as new as real ones
  read. Its mean is above 0.05 (the threshold is an order statistic of a few dozen rows) and it
  moves by several hundredths between splits.
- ``exact_copies``: rows equal, column by column, to a real training row (either class).
- ``form``: rows outside the table's form: a category not among the levels, a fractional
  integer, a number outside the table's bounds; and the largest gap in the share of empty cells
  against the real rare training rows, in points.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.neighbors import NearestNeighbors

from wgangp.data.schema.table_schema import TableSchema
from wgangp.evaluation.detection import boosting_model, half_split_aucs
from wgangp.evaluation.disclosure import near_copy_share_rows

#: Relative tolerance of an exact copy (float32 output against the file's digits).
COPY_RTOL = 1e-6


def detection(
    real: np.ndarray, other: np.ndarray, *, repeats: int, gbm_max_iter: int, seed: int
) -> float:
    """Mean ROC-AUC of the boosting detector telling ``other`` from ``real`` (equal counts)."""
    scores = half_split_aucs(
        real,
        other,
        lambda repeat: boosting_model(seed + repeat, gbm_max_iter),
        repeats=repeats,
        seed=seed,
        scale_leaves=True,
    )
    return float(np.mean(scores))


def near_copies(
    table: TableSchema, rows: pd.DataFrame, train_rare: pd.DataFrame, test_rare: pd.DataFrame
) -> float:
    """The project's near-copy share in its mixed-type distance space."""
    return near_copy_share_rows(rows, train_rare, test_rare, table)


def exact_copies(generated: np.ndarray, train_all: np.ndarray) -> int:
    """Generated rows whose nearest training row equals them in every column (``COPY_RTOL``)."""
    mean, scale = train_all.mean(axis=0), train_all.std(axis=0)
    scale[~(scale > 0)] = 1.0
    index = NearestNeighbors(n_neighbors=1, n_jobs=1).fit((train_all - mean) / scale)
    _, nearest = index.kneighbors((generated - mean) / scale)
    closest = train_all[nearest[:, 0]]
    same = np.isclose(generated, closest, rtol=COPY_RTOL, atol=1e-9).all(axis=1)
    return int(same.sum())


def form(table: TableSchema, rows: pd.DataFrame, real_rare: pd.DataFrame) -> dict[str, float]:
    """Shares of rows with an invalid category, a fractional integer, a number out of bounds;
    the largest difference in the share of gaps of a column (points)."""
    invalid = np.zeros(len(rows), bool)
    fractional = np.zeros(len(rows), bool)
    outside = np.zeros(len(rows), bool)
    gap_points = 0.0
    for column in table.features:
        values, real = rows[column.name], real_rare[column.name]
        present = values.notna().to_numpy()
        gap_points = max(gap_points, 100 * abs(values.isna().mean() - real.isna().mean()))
        if column.kind == "categorical":
            invalid |= present & ~values.isin(list(column.levels or ())).to_numpy()
        elif column.kind in ("continuous", "integer"):
            numbers = pd.to_numeric(values, errors="coerce").to_numpy(np.float64)
            if column.kind == "integer":
                fractional |= present & (numbers != np.round(numbers))
            if column.bounds is not None:
                low, high = (float(b) for b in column.bounds)
                outside |= present & ((numbers < low) | (numbers > high))
    return {
        "invalid_category": float(invalid.mean()),
        "fractional_integer": float(fractional.mean()),
        "out_of_bounds": float(outside.mean()),
        "gap_share_points": float(gap_points),
    }
