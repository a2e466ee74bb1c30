"""A Gaussian-mixture scale: each column through its fitted mixture's CDF onto a standard normal.

CTGAN's mode-specific normalization (Xu et al. 2019) fits a variational Gaussian mixture to each
continuous column, so a generator does not have to bend one bell into a column with several
modes. CTGAN then feeds the networks a mode one-hot plus a position within the mode, which widens
every row and needs a softmax head. This scale keeps one column per feature instead: it maps each
value through its mixture's cumulative distribution onto a standard normal, so every mode takes
its own stretch of the normal scale and the transform stays a drop-in ``preprocess.scaling`` (the
calibration, packing and serving see 30 columns either way). Unlike the empirical ``quantile``
scale, the mixture's tails are Gaussian: the inverse reaches beyond the fitted rows' range, where
real frauds beyond the training ones lie, up to ``TAIL_SDS`` standard deviations of the outermost
component (fewer where the tail's mass falls under ``ndtr(-Z_MAX)`` first). A row further out is
squashed onto that bound (37 of 29,876 normal rows of the real sample, no fraud).

Fitted with scikit-learn's ``BayesianGaussianMixture`` (CTGAN's settings: 10 components, a
Dirichlet-process prior of 1e-3, components under ``MIN_WEIGHT`` dropped) on at most ``FIT_ROWS``
rows per column, standardized first so its covariance floor is relative. Stored as plain numbers.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from scipy.special import ndtr, ndtri

from wgangp.data.numbers import MAX_PARAMETER, short_number

MAX_COMPONENTS = 10
MIN_WEIGHT = 0.005
#: Rows per column the mixture is fitted on (a seeded subsample above it): the fit's cost grows
#: with the rows, 30 columns per class, while a few thousand rows place ten modes well.
FIT_ROWS = 5000
#: The normal scale is clipped to +-Z_MAX, whose tail mass (6e-16) float64 still resolves.
Z_MAX = 8.0
#: The inverse's reach beyond the outermost component's mean, in its standard deviations.
TAIL_SDS = 8.0
_GRID_PER_COMPONENT = 257
#: How far a stored mixture's weights may sum from 1 (a fit's are 1 to float64 rounding).
WEIGHT_SUM_TOLERANCE = 1e-6


class GaussianMixtureScale:
    """Per column ``x -> ndtri(sum_k w_k ndtr((x - mean_k) / sd_k))``; ragged lists per column."""

    def __init__(
        self, weights: list[list[float]], means: list[list[float]], sds: list[list[float]]
    ) -> None:
        self.weights, self.means, self.sds = weights, means, sds
        self._tables: list[tuple[np.ndarray, np.ndarray]] | None = None

    @classmethod
    def fit(cls, x: np.ndarray, seed: int = 0) -> GaussianMixtureScale:
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.mixture import BayesianGaussianMixture

        rng = np.random.default_rng(seed)
        weights, means, sds = [], [], []
        for column in np.asarray(x, np.float64).T:
            rows = column if len(column) <= FIT_ROWS else rng.choice(column, FIT_ROWS, False)
            centre, spread = rows.mean(), rows.std()
            spread = spread if spread > 0 else 1.0  # a constant column: one narrow component
            mixture = BayesianGaussianMixture(
                n_components=min(MAX_COMPONENTS, len(rows)),
                weight_concentration_prior_type="dirichlet_process",
                weight_concentration_prior=1e-3,
                random_state=seed,
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                mixture.fit(((rows - centre) / spread)[:, None])
            keep = mixture.weights_ > MIN_WEIGHT
            w = mixture.weights_[keep]
            weights.append((w / w.sum()).tolist())
            means.append((mixture.means_[keep, 0] * spread + centre).tolist())
            sds.append((np.sqrt(mixture.covariances_[keep].ravel()) * spread).tolist())
        return cls(weights, means, sds)

    def forward(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, np.float64)
        out = np.empty_like(x)
        for i in range(x.shape[1]):
            out[:, i] = self._normal(i, x[:, i])
        return out

    def inverse(self, z: np.ndarray) -> np.ndarray:
        """Interpolate each column's table, then two Newton steps polish the root."""
        z = np.clip(np.nan_to_num(np.asarray(z, np.float64)), -Z_MAX, Z_MAX)
        out = np.empty_like(z)
        for i, (grid, normal) in enumerate(self._grid_tables()):
            target = np.clip(z[:, i], normal[0], normal[-1])
            x = np.interp(target, normal, grid)
            w, m, s = self._components(i)
            for _ in range(2):
                now = self._normal(i, x)
                density = (w * np.exp(-0.5 * ((x - m) / s) ** 2) / s).sum(axis=0)
                slope = density / np.exp(-0.5 * now**2)  # d ndtri(F(x)) / dx, up to sqrt(2 pi)
                step = np.where(slope > 0, (now - target) / np.maximum(slope, 1e-300), 0.0)
                x = np.clip(x - step, grid[0], grid[-1])
            out[:, i] = x
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"weights": self.weights, "means": self.means, "sds": self.sds}

    def nonfinite_columns(self) -> dict[int, str]:
        found = {}
        for i, (w, m, s) in enumerate(zip(self.weights, self.means, self.sds, strict=True)):
            values = np.asarray([*w, *m, *s], np.float64)
            if not np.isfinite(values).all():
                bad = values[~np.isfinite(values)][0]
                found[i] = f"mixture parameter {short_number(bad)}"
        return found

    def senseless_columns(self) -> dict[int, str]:
        """Weights that do not sum to 1 (a fit normalizes them), a mean or sd beyond
        MAX_PARAMETER: the CDF would no longer map the column onto a normal."""
        found = {}
        for i, (w, m, s) in enumerate(zip(self.weights, self.means, self.sds, strict=True)):
            total = float(np.sum(w))
            if abs(total - 1.0) > WEIGHT_SUM_TOLERANCE:
                found[i] = f"mixture weights summing to {short_number(total)}, not 1"
            elif (big := np.abs([*m, *s]).max()) > MAX_PARAMETER:
                found[i] = f"mixture parameter {short_number(big)} beyond {MAX_PARAMETER:g}"
        return found

    def width(self) -> int:
        shapes = [list(map(len, v)) for v in (self.weights, self.means, self.sds)]
        same = shapes[0] == shapes[1] == shapes[2] and all(n >= 1 for n in shapes[0])
        positive = (
            same and all(min(s) > 0 for s in self.sds) and all(min(w) >= 0 for w in self.weights)
        )
        return len(self.weights) if positive else -1

    def _normal(self, i: int, x: np.ndarray) -> np.ndarray:
        """Column ``i``'s values on the normal scale, each tail computed from its own side."""
        w, m, s = self._components(i)
        standard = (x[None, :] - m) / s
        lower = (w * ndtr(standard)).sum(axis=0)
        upper = (w * ndtr(-standard)).sum(axis=0)
        with np.errstate(divide="ignore"):
            z = np.where(lower < upper, ndtri(lower), -ndtri(upper))
        return np.clip(np.nan_to_num(z, nan=0.0), -Z_MAX, Z_MAX)

    def _components(self, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Column ``i``'s weights, means and sds as (components, 1) arrays, to broadcast on rows."""
        w, m, s = (
            np.asarray(v[i], np.float64)[:, None] for v in (self.weights, self.means, self.sds)
        )
        return w, m, s

    def _grid_tables(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per column a sorted grid of values dense around every component, and its image."""
        if self._tables is None:
            steps = np.linspace(-TAIL_SDS, TAIL_SDS, _GRID_PER_COMPONENT)
            self._tables = []
            for i, (means, sds) in enumerate(zip(self.means, self.sds, strict=True)):
                m, s = np.asarray(means), np.asarray(sds)
                grid = np.unique((m[:, None] + s[:, None] * steps).ravel())
                normal = np.maximum.accumulate(self._normal(i, grid))  # monotone for interp
                self._tables.append((grid, normal))
        return self._tables
