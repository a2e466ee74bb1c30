"""A Gaussian copula of the training rows: the columns' empirical quantiles and one covariance.

Per class and in the networks' space, each column (a number, a level's one-hot slot, a gap's
indicator) goes through the training rows' empirical quantiles onto a normal (scikit-learn's
``QuantileTransformer``, :class:`wgangp.data.transform.scales.QuantileScale`); the copula keeps
one covariance of those scores and draws correlated normals mapped back through the same
quantiles (a one-hot slot comes back 0 or 1 at its share; levels and gaps are then drawn from
them as from the generator's probabilities, :func:`wgangp.data.transform.layout.draw_discrete`).
It never copies a row: only per-column quantiles and a covariance per class are stored, as plain
numbers (JSON) beside the generator; a synthesizer's quantiles are knots that are means of groups
of training rows (:mod:`wgangp.data.knots`), so the file holds no training value
(docs/privacy.md). A synthesizer draws a share of its rows from it
(:mod:`wgangp.serving.mixture`); the evaluation draws it on its own, as a baseline, with every
training row's value (as a user's own copula would)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from wgangp.data.numbers import short_number
from wgangp.data.transform.scales import QuantileScale
from wgangp.serving.stored_tables import checked_quantiles, load_per_class, per_class_json

_FORMAT = "wgangp.copula/2"
#: The normal scores lie within +-5.2 (scikit-learn's QuantileTransformer clips its normal output
#: at ndtri(1e-7) = -5.1993) and np.cov divides by rows - 1, so no entry of their covariance
#: exceeds rows / (rows - 1) * 5.2 squared: twice that for a class of two rows, the largest.
MAX_VARIANCE = 2 * 5.2**2
#: An eigenvalue below -PSD_TOLERANCE times the largest in magnitude is no rounding of np.cov.
PSD_TOLERANCE = 1e-6


@dataclass
class GaussianCopula:
    """Per class: the training rows' quantiles and the covariance of their normal scores."""

    marginals: dict[int, QuantileScale]
    covariance: dict[int, np.ndarray]
    #: The file it was loaded from, for error lines ("" when fitted in-process).
    source: str = field(default="", compare=False)

    @classmethod
    def fit(
        cls,
        real: dict[int, np.ndarray],
        min_rows: int | None = None,
        owners: dict[int, np.ndarray] | None = None,
    ) -> GaussianCopula:
        """Fit on the rows of each class (the training rows, in the networks' space for a
        synthesizer's copula). With ``min_rows`` each marginal's knots are means of groups of
        that many entities (``owners``: each row's, per class; None: rows), what ships; without,
        every row's value (the evaluation's baseline)."""
        marginals = {
            label: QuantileScale.fit(rows)
            if min_rows is None
            else QuantileScale.fit_grouped(
                rows, min_rows, None if owners is None else owners[label]
            )
            for label, rows in real.items()
        }
        covariance = {
            label: np.cov(marginals[label].forward(rows), rowvar=False)
            for label, rows in real.items()
        }
        return cls(marginals=marginals, covariance=covariance)

    def draw(self, n: int, label: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` copula rows of class ``label``, from ``rng``'s normals."""
        values, vectors = np.linalg.eigh(self.covariance[label])
        factor = vectors * np.sqrt(np.clip(values, 0.0, None))  # covariance = factor @ factor.T
        normals = rng.standard_normal((n, len(values)))
        return self.marginals[label].inverse(normals @ factor.T)

    def to_json(self) -> str:
        return per_class_json(
            _FORMAT,
            {
                label: {"marginals": scale.to_dict(), "covariance": self.covariance[label].tolist()}
                for label, scale in self.marginals.items()
            },
        )

    @classmethod
    def load(cls, path: Path, names: list[str]) -> GaussianCopula:
        """A saved copula over the networks' columns ``names``, checked: both classes, one
        column per name, sorted finite quantiles, a covariance a fit can write; DataError (one
        line naming the file and table) otherwise."""
        return load_per_class(
            path,
            _FORMAT,
            "copula",
            lambda parts: cls(
                source=str(path),
                marginals={
                    label: checked_quantiles(p["marginals"], f"class {label} marginals", names)
                    for label, p in parts.items()
                },
                covariance={
                    label: _covariance(p["covariance"], f"class {label} covariance", names)
                    for label, p in parts.items()
                },
            ),
        )


def _covariance(stored: list, where: str, names: list[str]) -> np.ndarray:
    """A stored covariance of normal scores (``where`` names it): one row and column per name,
    finite, symmetric, within the scores' range and positive semi-definite; ValueError otherwise.
    A matrix such as ``-I`` would have every draw collapse onto a few rows, 1e300 would make every
    row extreme."""
    matrix = np.asarray(stored, np.float64)
    width = len(names)
    if matrix.shape != (width, width):
        raise ValueError(f"{where} of shape {matrix.shape}, not {width} x {width}")
    if not np.isfinite(matrix).all():
        raise ValueError(f"{where} not finite")
    if not np.allclose(matrix, matrix.T):
        i, j = np.unravel_index(np.abs(matrix - matrix.T).argmax(), matrix.shape)
        raise ValueError(
            f"{where} not symmetric ({names[i]}, {names[j]}: {short_number(matrix[i, j])} "
            f"against {short_number(matrix[j, i])})"
        )
    largest = float(np.abs(matrix).max())
    if largest > MAX_VARIANCE:
        raise ValueError(
            f"{where} holds {short_number(largest)}, beyond {short_number(MAX_VARIANCE)}, the "
            "largest a covariance of normal scores can hold"
        )
    values = np.linalg.eigvalsh(matrix)
    if values[0] < -PSD_TOLERANCE * max(abs(values[0]), abs(values[-1])):
        raise ValueError(
            f"{where} not positive semi-definite (smallest eigenvalue "
            f"{short_number(values[0])}, largest {short_number(values[-1])})"
        )
    return matrix
