"""The cheap alternatives a fraud team would try first, judged exactly like the GAN's rows.

- SMOTE (imbalanced-learn): interpolates between a training rare-class row and one of its nearest
  rare-class neighbours, so its rows sit on segments between real customers' rows. A table with
  categorical columns or gaps gets SMOTE-NC (``SMOTENC``): numbers interpolated, each category and
  each gap indicator taken from the neighbours' most frequent value (SMOTE on one-hot columns
  would invent fractional categories); a table of categories only gets SMOTEN.
- A Gaussian copula fitted on the training rare-class rows: each column of the encoding
  (:meth:`~wgangp.evaluation.encoding.TableEncoding.model_matrix`: numbers, gap indicators,
  one-hot columns) through its empirical quantiles onto a normal scale (scikit-learn's
  ``QuantileTransformer``), one covariance of the transformed rows, multivariate normal draws
  mapped back, then decoded to valid rows (a category = the level of the largest one-hot score; a
  gap where the indicator is above 0.5; integers rounded; bounds held). Whole-number columns
  (integers, indicators, one-hot) are first spread by uniform noise of width 1, which rounding
  undoes: the transformer sends ties at a column's minimum or maximum to +-5.2 standard
  deviations, which would inflate the covariance and the share of 1s. It keeps every marginal and
  the linear dependence, nothing more, and never copies a row.
- Independent marginals: each column resampled on its own from the real rare-class training rows
  (gaps included). Every marginal is exact and every dependence between columns is gone: the
  floor any model of dependence must beat.

All see the training rare-class rows only (SMOTE also the other class it balances against, which
does not change its rows), as the GAN does.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from imblearn.over_sampling import SMOTE, SMOTEN, SMOTENC

from wgangp.data.schema.table_schema import RARE, TableSchema
from wgangp.evaluation.encoding import TableEncoding
from wgangp.serving.copula import GaussianCopula

#: The generators the GAN is compared with, by the names their metrics carry.
BASELINES = ("smote", "copula", "independent")


def smote_rare(
    rare: np.ndarray, normals: np.ndarray, n: int, *, k_neighbors: int, seed: int
) -> np.ndarray:
    """``n`` new rare rows made by SMOTE from the training rare."""
    return _oversample(SMOTE, {}, rare, normals, n, k_neighbors=k_neighbors, seed=seed)


def _oversample(
    method: type,
    options: dict,
    rare: np.ndarray,
    normals: np.ndarray,
    n: int,
    *,
    k_neighbors: int,
    seed: int,
) -> np.ndarray:
    x = np.vstack([normals, rare])
    y = np.concatenate([np.zeros(len(normals), dtype=int), np.ones(len(rare), dtype=int)])
    sampler = method(
        sampling_strategy={0: len(normals), 1: len(rare) + n},
        k_neighbors=min(k_neighbors, len(rare) - 1),
        random_state=seed,
        **options,
    )
    resampled, _ = sampler.fit_resample(x, y)
    return np.asarray(resampled)[len(x) :]


def copula_rare(rare: np.ndarray, n: int, *, seed: int) -> np.ndarray:
    """``n`` rare rows from a Gaussian copula with the training rare rows' empirical marginals
    (the one a synthesizer draws a share of its rows from, :mod:`wgangp.serving.copula`)."""
    copula = GaussianCopula.fit({RARE: rare})
    return copula.draw(n, RARE, np.random.default_rng(seed))


def independent_rare(rare: np.ndarray, n: int, *, seed: int) -> np.ndarray:
    """``n`` rows whose every column is drawn on its own from that column of ``rare``."""
    rng = np.random.default_rng(seed)
    picks = [rng.integers(0, len(rare), n) for _ in range(rare.shape[1])]
    return np.column_stack([rare[rows, j] for j, rows in enumerate(picks)])


def baseline_rare(
    name: str,
    rare: np.ndarray,
    normals: np.ndarray,
    n: int,
    *,
    smote_k_neighbors: int,
    seed: int,
) -> np.ndarray:
    """``n`` rows of the baseline ``name`` (one of :data:`BASELINES`), all-numeric rows."""
    if name == "smote":
        return smote_rare(rare, normals, n, k_neighbors=smote_k_neighbors, seed=seed)
    if name == "copula":
        return copula_rare(rare, n, seed=seed)
    if name == "independent":
        return independent_rare(rare, n, seed=seed)
    raise ValueError(f"unknown baseline {name!r}; choose one of {BASELINES}")


def smote_rows(
    rare: pd.DataFrame,
    normals: pd.DataFrame,
    n: int,
    encoding: TableEncoding,
    *,
    k_neighbors: int,
    seed: int,
) -> pd.DataFrame:
    """SMOTE's rows for an all-numeric table without gaps; SMOTE-NC (or SMOTEN) otherwise."""
    if not encoding.has_gaps_or_categories:
        made = smote_rare(
            encoding.model_matrix(rare),
            encoding.model_matrix(normals),
            n,
            k_neighbors=k_neighbors,
            seed=seed,
        )
        return encoding.decode(made)

    # numbers, then gap indicators and level codes as categorical features (-1: a gap)
    def mixed(frame: pd.DataFrame) -> np.ndarray:
        return np.hstack(
            [encoding.number_matrix(frame), encoding.indicators(frame), encoding.codes(frame)]
        )

    n_numbers = len(encoding.numbers)
    width = n_numbers + len(encoding.nullable) + len(encoding.categoricals)
    if n_numbers == 0:
        made = _oversample(
            SMOTEN, {}, mixed(rare), mixed(normals), n, k_neighbors=k_neighbors, seed=seed
        )
    else:
        options = {"categorical_features": list(range(n_numbers, width))}
        made = _oversample(
            SMOTENC, options, mixed(rare), mixed(normals), n, k_neighbors=k_neighbors, seed=seed
        )
    return _decode_mixed(made, encoding)


def _decode_mixed(made: np.ndarray, encoding: TableEncoding) -> pd.DataFrame:
    """Rows from [numbers, indicators, codes] by way of the model matrix's layout."""
    n_numbers, n_gaps = len(encoding.numbers), len(encoding.nullable)
    codes = made[:, n_numbers + n_gaps :].astype(np.int64)
    blocks = []
    for j, column in enumerate(encoding.categoricals):
        block = np.zeros((len(made), len(column.levels or ())))
        rows = np.flatnonzero(codes[:, j] >= 0)
        block[rows, codes[rows, j]] = 1.0
        blocks.append(block)
    return encoding.decode(np.hstack([made[:, : n_numbers + n_gaps], *blocks]))


def baseline_rows(
    name: str,
    rare: pd.DataFrame,
    normals: pd.DataFrame,
    n: int,
    encoding: TableEncoding,
    *,
    smote_k_neighbors: int,
    seed: int,
) -> pd.DataFrame:
    """``n`` rare-class rows of the baseline ``name`` in the table's own form (module doc)."""
    if name == "smote":
        return smote_rows(rare, normals, n, encoding, k_neighbors=smote_k_neighbors, seed=seed)
    if name == "copula":
        return copula_rows(rare, n, encoding, seed=seed)
    if name == "independent":
        return independent_rows(rare, n, encoding.schema, seed=seed)
    raise ValueError(f"unknown baseline {name!r}; choose one of {BASELINES}")


def copula_rows(rare: pd.DataFrame, n: int, encoding: TableEncoding, *, seed: int) -> pd.DataFrame:
    """The Gaussian copula's rows of the table (module doc)."""
    matrix = encoding.model_matrix(rare)
    discrete = encoding.discrete_columns()
    if discrete.any():
        noise = np.random.default_rng([seed, 1]).uniform(-0.5, 0.5, matrix.shape)
        matrix = matrix + noise * discrete
    return encoding.decode(copula_rare(matrix, n, seed=seed))


def independent_rows(rare: pd.DataFrame, n: int, schema: TableSchema, *, seed: int) -> pd.DataFrame:
    """Each feature resampled on its own from the real rare-class rows (gaps included)."""
    rng = np.random.default_rng(seed)
    out = {}
    for column in schema.features:
        rows = rng.integers(0, len(rare), n)
        out[column.name] = rare[column.name].iloc[rows].reset_index(drop=True)
    return pd.DataFrame(out)
