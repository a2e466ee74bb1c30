"""Membership scores of canaries from a generator's rows: how strongly the rows it draws say that
a canary was trained on. A high score means "member".

- ``nearest``: minus the distance to the nearest drawn row (the membership audit's attack, over
  as many rows as are drawn: a generator that learned a canary draws rows next to it).
- ``density_ratio``: DOMIAS (van Breugel et al., AISTATS 2023): the log of the drawn rows'
  density at the canary over the density of a reference set of real rows there, each density a
  k-nearest-neighbour estimate (k / (n volume of the ball to the k-th neighbour)). A canary in a
  place real rows rarely reach, where the generator still draws rows, is one it learned; a place
  both fill is only a dense one.

Both read rows in one mixed-type distance space (``TableEncoding.distance_matrix``) whose scales
are fitted on rows that hold no canary, so a score never depends on which canaries went in.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.neighbors import NearestNeighbors

#: Neighbours of each density estimate.
NEIGHBOURS = 5
ATTACKS = ("nearest", "density_ratio")
#: A distance of 0 (a drawn row equal to a canary) read as this, so its logarithm is finite.
TINY = 1e-9


def kth_distance(points: np.ndarray, reference: np.ndarray, k: int) -> np.ndarray:
    """Each point's distance to its ``k``-th nearest row of ``reference``."""
    k = min(k, len(reference))
    index = NearestNeighbors(n_neighbors=k, n_jobs=1).fit(reference)
    return index.kneighbors(points)[0][:, k - 1]


def nearest_scores(canaries: np.ndarray, drawn: np.ndarray) -> np.ndarray:
    """Minus each canary's distance to its nearest drawn row."""
    return -kth_distance(canaries, drawn, 1)


def density_ratio_scores(
    canaries: np.ndarray, drawn: np.ndarray, reference: np.ndarray, k: int = NEIGHBOURS
) -> np.ndarray:
    """log p_drawn(x) - log p_reference(x) at each canary x, by k-nearest-neighbour densities in
    the space's full dimension (module doc)."""
    dimension = canaries.shape[1]
    to_drawn = np.maximum(kth_distance(canaries, drawn, k), TINY)
    to_reference = np.maximum(kth_distance(canaries, reference, k), TINY)
    sizes = np.log(len(reference)) - np.log(len(drawn))
    return dimension * (np.log(to_reference) - np.log(to_drawn)) + sizes


def scores(
    encoding, canaries: pd.DataFrame, drawn: pd.DataFrame, reference: pd.DataFrame
) -> dict[str, np.ndarray]:
    """Every attack's scores of ``canaries`` from ``drawn`` rows (``reference``: real rows, no
    canary), in ``encoding``'s distance space."""
    points = encoding.distance_matrix(canaries)
    rows = encoding.distance_matrix(drawn)
    real = encoding.distance_matrix(reference)
    return {
        "nearest": nearest_scores(points, rows),
        "density_ratio": density_ratio_scores(points, rows, real),
    }
