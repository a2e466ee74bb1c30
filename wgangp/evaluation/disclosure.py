"""Disclosure: do synthetic rare-class rows copy, or sit unusually close to, real training rows?
(Not differential privacy, :mod:`wgangp.privacy`: what these distances see, a guarantee bounds.)

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

The baseline counts ENTITIES (:mod:`wgangp.data.entities`), not rows: a customer with many
held-out rows near the training rows would otherwise pull the 5th percentile down alone. Each
held-out row weighs 1 / (its entity's held-out rare rows), and every percentile, median and mean
of the baseline's distances is weighted so (:func:`weighted_percentile`); the synthetic rows
belong to no one and weigh the same. Without an entity column, rows identical in every feature
are one entity; with each row its own entity the figures are the row-based ones.

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

from wgangp.data.entities import entity_count, identical_row_groups
from wgangp.data.schema.table_schema import TableSchema
from wgangp.evaluation.encoding import TableEncoding

#: Percentile of the held-out rows' distances below which a row is a near copy.
NEAR_PERCENTILE = 5.0


def weighted_percentile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    """The ``q``-th percentile (0..100) of ``values`` weighted by positive ``weights``.

    The sorted values sit at the positions ``p_k = (S_k - w_k) / (S - w_k)``, with ``S_k`` the
    cumulative weight up to and including the k-th value and ``S`` the total (the weighted
    percentile with C = 1, Wikipedia's "Percentile"), and the result interpolates linearly
    between them. With equal weights ``p_k = k / (n - 1)``: numpy's default (linear) percentile.
    The positions rise strictly from 0 to 1 and mirror when the order is reversed. Not the same
    as repeating each value by its weight: an entity's identical rows are not one value.
    """
    values = np.asarray(values, np.float64)
    weights = np.asarray(weights, np.float64)
    if len(values) == 0 or len(values) != len(weights) or not (weights > 0).all():
        raise ValueError("weighted_percentile needs as many positive weights as values (>= 1)")
    order = np.argsort(values, kind="stable")
    sorted_values, sorted_weights = values[order], weights[order]
    if len(values) == 1:
        return float(sorted_values[0])
    cumulative = np.cumsum(sorted_weights)
    positions = (cumulative - sorted_weights) / (cumulative[-1] - sorted_weights)
    return float(np.interp(q / 100.0, positions, sorted_values))


def entity_weights(owners: np.ndarray) -> np.ndarray:
    """Each row's weight, 1 / (its entity's rows among ``owners``): every entity weighs 1."""
    _, inverse, counts = np.unique(owners, return_inverse=True, return_counts=True)
    return 1.0 / counts[inverse.reshape(-1)]


def feature_owners(rows: pd.DataFrame | np.ndarray) -> np.ndarray:
    """Each row's entity when no entity column is known: its group of rows identical in every
    column given (rows of one class: every feature)."""
    frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(np.asarray(rows))
    return identical_row_groups(frame.reset_index(drop=True))


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


def disclosure_metrics(
    synthetic: pd.DataFrame,
    real_train: pd.DataFrame,
    real_test_rare: pd.DataFrame,
    schema: TableSchema,
    *,
    copy_rtol: float,
    test_owners: np.ndarray | None = None,
    train_rare_owners: np.ndarray | None = None,
) -> tuple[dict[str, float], pd.DataFrame]:
    """DCR and exact-copy metrics (names without the ``eval/`` section) and a summary table.

    ``test_owners``: the entity of each row of ``real_test_rare`` (None: rows identical in every
    feature are one); the baseline's figures weigh each entity once (module doc).
    ``train_rare_owners``: the training rare rows' entities, counted in the table's reference row
    (None: no such row).
    """
    train = real_train.reset_index(drop=True)
    features = [c.name for c in schema.features]
    if test_owners is None:
        test_owners = feature_owners(real_test_rare.loc[:, features])
    weights = entity_weights(test_owners)
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
    p5 = weighted_percentile(dcr_baseline, weights, NEAR_PERCENTILE)
    synthetic_median = float(np.median(dcr_synthetic))
    baseline_median = weighted_percentile(dcr_baseline, weights, 50.0)
    metrics = {
        "dcr_synthetic_median": synthetic_median,
        "dcr_baseline_median": baseline_median,
        "dcr_ratio": synthetic_median / baseline_median if baseline_median > 0 else float("nan"),
        "dcr_share_below_p5": float(np.mean(dcr_synthetic < p5)),
        "exact_copies": float(copies),
    }
    rows = [
        _summary_row("synthetic", dcr_synthetic, copies, None),
        _summary_row("real_test_rare (baseline)", dcr_baseline, baseline_copies, test_owners),
    ]
    if train_rare_owners is not None:
        rows.append(_reference_row("real_train_rare (reference)", train_rare_owners))
    return metrics, pd.DataFrame(rows)


def _summary_row(
    name: str, distances: np.ndarray, copies: int, owners: np.ndarray | None
) -> dict[str, float | str]:
    """A row of the summary table; with ``owners`` its figures weigh each entity once."""
    weights = np.ones(len(distances)) if owners is None else entity_weights(owners)
    return {
        "rows": name,
        "n": len(distances),
        "entities": float("nan") if owners is None else entity_count(owners, len(distances)),
        "dcr_min": float(distances.min()),
        "dcr_p5": weighted_percentile(distances, weights, NEAR_PERCENTILE),
        "dcr_median": weighted_percentile(distances, weights, 50.0),
        "dcr_mean": float(np.average(distances, weights=weights)),
        "exact_copies_of_training_rows": copies,
    }


def _reference_row(name: str, owners: np.ndarray) -> dict[str, float | str]:
    """The training rare rows' counts: what the near copies are measured against."""
    nan = float("nan")
    return {
        "rows": name,
        "n": len(owners),
        "entities": entity_count(owners, len(owners)),
        "dcr_min": nan,
        "dcr_p5": nan,
        "dcr_median": nan,
        "dcr_mean": nan,
        "exact_copies_of_training_rows": nan,
    }


def near_copy_share(
    generated: np.ndarray,
    train_rare: np.ndarray,
    test_rare: np.ndarray,
    test_owners: np.ndarray | None = None,
) -> float:
    """Share of ``generated`` rows nearer a training rare row than 95% of the held-out rare
    entities are (``test_owners``: each test row's entity; None: identical rows are one).

    Distances are Euclidean on features standardized by the training rare rows.
    """
    mean, scale = train_rare.mean(axis=0), train_rare.std(axis=0)
    scale[~(scale > 0)] = 1.0
    if test_owners is None:
        test_owners = feature_owners(test_rare)
    return _near_copy_share(
        (generated - mean) / scale,
        (train_rare - mean) / scale,
        (test_rare - mean) / scale,
        test_owners,
    )


def near_copy_share_rows(
    generated: pd.DataFrame,
    train_rare: pd.DataFrame,
    test_rare: pd.DataFrame,
    schema: TableSchema,
    test_owners: np.ndarray | None = None,
) -> float:
    """:func:`near_copy_share` for rows of a table: distances in the mixed-type space fitted on
    the training rare-class rows (for a table of numbers, the same as on its arrays)."""
    if test_owners is None:
        test_owners = feature_owners(test_rare.loc[:, [c.name for c in schema.features]])
    encoding = TableEncoding(schema, train_rare)
    return _near_copy_share(
        encoding.distance_matrix(generated),
        encoding.distance_matrix(train_rare),
        encoding.distance_matrix(test_rare),
        test_owners,
    )


def near_copy_threshold(baseline: np.ndarray, test_owners: np.ndarray) -> float:
    """The held-out rows' 5th percentile of distance, each entity weighing once."""
    return weighted_percentile(baseline, entity_weights(test_owners), NEAR_PERCENTILE)


def _near_copy_share(
    generated: np.ndarray, train: np.ndarray, test: np.ndarray, test_owners: np.ndarray
) -> float:
    index = NearestNeighbors(n_neighbors=1, n_jobs=1).fit(train)
    baseline, _ = index.kneighbors(test)
    distances, _ = index.kneighbors(generated)
    return float(np.mean(distances[:, 0] < near_copy_threshold(baseline[:, 0], test_owners)))
