"""A Gaussian copula of the training rows, drawn for a share of every sample beside the generator.

The GAN and a Gaussian copula of the same training rows put too many rows in different places (the
copula keeps only the linear dependence of the columns' normal scores), so on the validation frauds
a draw that mixes both was harder to tell from real ones than either alone; docs/quality.md says
where that did not carry to unseen frauds. Per class and in the networks' space, each column goes
through the training rows' empirical quantiles onto a normal (scikit-learn's
``QuantileTransformer``, :class:`wgangp.data.scales.QuantileScale`); the copula keeps one
covariance of those scores and draws correlated normals mapped back through the same quantiles.
It never copies a row: only per-column quantiles and a 30 x 30 covariance per class are stored, as
plain numbers (JSON) beside the generator.

Each row of a draw comes from the copula with probability ``share``, decided by its own random
stream, so the first rows of a larger draw are the rows of the smaller one, as without a copula.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from wgangp.data.scales import QuantileScale
from wgangp.data.schema import CLASSES, FEATURES
from wgangp.data.transform import RETRAIN
from wgangp.errors import DataError
from wgangp.model.calibration import checked_quantiles

_FORMAT = "wgangp.copula/1"
#: Stream keys beside a draw's seed: the copula's normals and the choice of rows (never the
#: generator's noise, which is ``default_rng(seed)``).
_NORMALS, _CHOICE = 1, 2


@dataclass
class GaussianCopula:
    """Per class: the training rows' quantiles and the covariance of their normal scores; the
    share of a synthesizer's rows it draws (0 for a copula drawn on its own, as the evaluation's
    baseline)."""

    marginals: dict[int, QuantileScale]
    covariance: dict[int, np.ndarray]
    share: float = 0.0

    @classmethod
    def fit(cls, real: dict[int, np.ndarray], share: float = 0.0) -> GaussianCopula:
        """Fit on the rows of each class (the training rows, in the networks' space for a
        synthesizer's copula)."""
        marginals = {label: QuantileScale.fit(rows) for label, rows in real.items()}
        covariance = {
            label: np.cov(marginals[label].forward(rows), rowvar=False)
            for label, rows in real.items()
        }
        return cls(marginals=marginals, covariance=covariance, share=share)

    def draw(self, n: int, label: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` copula rows of class ``label``, from ``rng``'s normals."""
        values, vectors = np.linalg.eigh(self.covariance[label])
        factor = vectors * np.sqrt(np.clip(values, 0.0, None))  # covariance = factor @ factor.T
        normals = rng.standard_normal((n, len(values)))
        return self.marginals[label].inverse(normals @ factor.T)

    def mix(self, x: np.ndarray, label: int, seed: int) -> np.ndarray:
        """``x`` (generated rows of class ``label``) with each row replaced by a copula row with
        probability ``share``."""
        chosen = np.random.default_rng([seed, _CHOICE]).random(len(x)) < self.share
        mixed = np.array(x, np.float64)
        drawn = self.draw(len(x), label, np.random.default_rng([seed, _NORMALS]))
        mixed[chosen] = drawn[chosen]
        return mixed

    def to_json(self) -> str:
        classes = {
            str(label): {
                "marginals": self.marginals[label].to_dict(),
                "covariance": self.covariance[label].tolist(),
            }
            for label in sorted(self.marginals)
        }
        return json.dumps(
            {"format": _FORMAT, "share": self.share, "classes": classes}, allow_nan=False
        )

    def save(self, path: Path) -> Path:
        path.write_text(self.to_json())
        return path

    @classmethod
    def load(cls, path: Path) -> GaussianCopula:
        """A saved copula, checked: a share in (0, 1), both classes, 30 columns, finite numbers;
        DataError (one line naming the file) otherwise."""
        try:
            payload = json.loads(Path(path).read_text())
            if payload.get("format") != _FORMAT:
                raise ValueError(f"not a {_FORMAT} document")
            share = float(payload["share"])
            if not 0 < share < 1:
                raise ValueError(f"share {share} not in (0, 1)")
            classes = payload["classes"]
            if set(classes) != {str(c) for c in CLASSES}:
                raise ValueError(f"classes {sorted(classes)}")
            return cls(
                marginals={
                    int(label): checked_quantiles(parts["marginals"])
                    for label, parts in classes.items()
                },
                covariance={
                    int(label): _covariance(parts["covariance"]) for label, parts in classes.items()
                },
                share=share,
            )
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            raise DataError(f"{path} is not a usable copula ({err}); {RETRAIN}") from None


def _covariance(stored: list) -> np.ndarray:
    """A stored covariance, 30 x 30, finite and symmetric; ValueError otherwise."""
    matrix = np.asarray(stored, np.float64)
    if matrix.shape != (len(FEATURES), len(FEATURES)):
        raise ValueError(f"covariance of shape {matrix.shape}, not 30 x 30")
    if not np.isfinite(matrix).all() or not np.allclose(matrix, matrix.T):
        raise ValueError("covariance not finite and symmetric")
    return matrix
