"""How every DP figure (``scripts.dp_peers``, ``scripts.dp_figures``, ``scripts.dp_marginals``)
scores generated rare rows, on the same rows for every method:

- the split: the rare rows 70/30 by :func:`rare_split` (the earlier figures' split: 878 and 376
  on the credit table), and the other class 70/30 by :func:`other_split` (2,240 and 960); every
  method trains on the 70% of both classes and is judged on the 30%;
- detection: a boosting C2ST of generated rare rows against the held-out real rare rows
  (:func:`held_out_scorer`; 0.5 can't tell). Under DP it reads 0.93 to 1.00 for every method;
- utility: a detector of the rare class (boosting) trained on the real training rows of the
  other class plus as many generated rare rows as there are real training ones, scored on the
  held-out real rows of both classes by PR-AUC (:func:`utility_scorer`); the same with the real
  training rare rows is the ceiling. Rows whose detector ranks the held-out rare rows first are
  useful even when a C2ST tells them from real ones.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

TRAIN_SHARE = 0.7
REPEATS, GBM_MAX_ITER, DETECTION_SEED = 10, 200, 0
#: Rows of the other class a utility detector trains on and is scored on, at most each (the
#: simulated table's 700,000 would take minutes a fit and change no ranking).
MAX_OTHER_ROWS = 20_000
UTILITY_SEED = 0


def rare_split(rare: pd.DataFrame, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rare rows split 70/30 by ``seed`` (rounded: 1,254 rows give 878 and 376)."""
    order = np.random.default_rng(seed).permutation(len(rare))
    n_train = int(round(TRAIN_SHARE * len(rare)))
    train = rare.iloc[order[:n_train]].reset_index(drop=True)
    held = rare.iloc[order[n_train:]].reset_index(drop=True)
    return train, held


def other_split(other: pd.DataFrame, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The other class's rows split 70/30 by ``seed``, a stream of its own (the rare split's
    stays as it was)."""
    order = np.random.default_rng([seed, 11]).permutation(len(other))
    n_train = int(round(TRAIN_SHARE * len(other)))
    return (
        other.iloc[order[:n_train]].reset_index(drop=True),
        other.iloc[order[n_train:]].reset_index(drop=True),
    )


def in_form(rows: pd.DataFrame, schema) -> pd.DataFrame:
    """Generated rows as the schema's features: numbers numeric, integers rounded (no clipping:
    post-processing that reads no training row)."""
    out = {}
    for column in schema.features:
        values = rows[column.name]
        if column.kind == "categorical":
            out[column.name] = values.astype(object).where(values.notna(), np.nan)
            continue
        numbers = pd.to_numeric(values, errors="coerce")
        out[column.name] = np.rint(numbers) if column.kind == "integer" else numbers
    return pd.DataFrame(out)


def held_out_scorer(
    schema, train: pd.DataFrame, held: pd.DataFrame
) -> Callable[[pd.DataFrame], float]:
    """Detection of generated rows against the ``held`` real rows, on an encoding fitted on the
    ``train`` rows: the one way every method of the DP figures is scored."""
    from threadpoolctl import threadpool_limits

    from scripts.tables_benchmark.scores import detection
    from wgangp.evaluation.encoding import TableEncoding

    encoding = TableEncoding(schema, train)
    real = encoding.model_matrix(held)

    def score(rows: pd.DataFrame) -> float:
        generated = encoding.model_matrix(in_form(rows, schema).iloc[: len(real)])
        with threadpool_limits(limits=1):
            return detection(
                real, generated, repeats=REPEATS, gbm_max_iter=GBM_MAX_ITER, seed=DETECTION_SEED
            )

    return score


def _at_most(frame: pd.DataFrame, rows: int) -> pd.DataFrame:
    if len(frame) <= rows:
        return frame
    return frame.sample(rows, random_state=UTILITY_SEED)


def utility_scorer(
    schema,
    train_rare: pd.DataFrame,
    train_other: pd.DataFrame,
    held_rare: pd.DataFrame,
    held_other: pd.DataFrame,
) -> Callable[[pd.DataFrame], float]:
    """PR-AUC on the held-out rows of a detector trained on ``train_other`` plus the first
    ``len(train_rare)`` of the rows it is given (module doc); NaN when given fewer than half."""
    from sklearn.metrics import average_precision_score
    from threadpoolctl import threadpool_limits

    from wgangp.evaluation.detection import boosting_model
    from wgangp.evaluation.encoding import TableEncoding

    encoding = TableEncoding(schema, train_rare)
    other = encoding.model_matrix(_at_most(train_other, MAX_OTHER_ROWS))
    test_other = _at_most(held_other, MAX_OTHER_ROWS)
    test_x = np.vstack([encoding.model_matrix(held_rare), encoding.model_matrix(test_other)])
    test_y = np.concatenate([np.ones(len(held_rare), int), np.zeros(len(test_other), int)])

    def score(rows: pd.DataFrame) -> float:
        rare = encoding.model_matrix(in_form(rows, schema).iloc[: len(train_rare)])
        if len(rare) < len(train_rare) / 2:
            return float("nan")
        x = np.vstack([other, rare])
        y = np.concatenate([np.zeros(len(other), int), np.ones(len(rare), int)])
        with threadpool_limits(limits=1):
            model = boosting_model(UTILITY_SEED, GBM_MAX_ITER).fit(x, y)
            return float(average_precision_score(test_y, model.predict_proba(test_x)[:, 1]))

    return score
