"""Marginal calibration of a trained generator: each generated column onto the training quantiles.

A GAN trained on a few hundred frauds learns how their columns move together better than it
learns each column's own distribution (docs/quality.md). After training, per class and in the
networks' space, every generated column goes through its own empirical quantiles (fitted on a
large generated draw) and back through the quantiles of that class's training rows. Each column's
marginal then is the training rows' marginal, repeated values included, while every generated row
keeps its per-column ranks, so the dependence between columns stays the generator's. Each map is
monotone and per column. The generated quantiles are a scikit-learn ``QuantileTransformer`` fit;
the training rows' are knots that are means of groups of rows (:mod:`wgangp.data.knots`), so the
file holds no training value (docs/privacy.md). Both are
:class:`wgangp.data.scales.QuantileScale`, stored as plain numbers (JSON) beside the generator.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from wgangp.data.knots import DEFAULT_MIN_ROWS
from wgangp.data.scales import QuantileScale
from wgangp.serving.stored_tables import checked_quantiles, load_per_class, per_class_json

_FORMAT = "wgangp.calibration/1"


@dataclass
class MarginalCalibration:
    """Per class: the generated rows' quantiles and the training rows' quantiles."""

    generated: dict[int, QuantileScale]
    real: dict[int, QuantileScale]

    @classmethod
    def fit(
        cls,
        generated: dict[int, np.ndarray],
        real: dict[int, np.ndarray],
        min_rows: int = DEFAULT_MIN_ROWS,
    ) -> MarginalCalibration:
        """Fit on rows in the networks' space, keyed by class: a large generated draw and the
        training rows of that class (knots that are means of >= ``min_rows`` of them)."""
        return cls(
            {label: QuantileScale.fit(rows) for label, rows in generated.items()},
            {label: QuantileScale.fit_grouped(rows, min_rows) for label, rows in real.items()},
        )

    def apply(self, x: np.ndarray, label: int) -> np.ndarray:
        """Generated rows of class ``label`` -> the same rows with the training marginals."""
        return self.real[label].inverse(self.generated[label].forward(x))

    def to_json(self) -> str:
        return per_class_json(
            _FORMAT,
            {
                label: {"generated": scale.to_dict(), "real": self.real[label].to_dict()}
                for label, scale in self.generated.items()
            },
        )

    @classmethod
    def load(cls, path: Path) -> MarginalCalibration:
        """A saved calibration, checked: both classes, 30 columns, finite sorted quantiles;
        DataError (one line naming the file and the table) otherwise."""
        return load_per_class(
            path,
            _FORMAT,
            "calibration",
            lambda parts: cls(
                {
                    label: checked_quantiles(
                        part["generated"], f"class {label} generated quantiles"
                    )
                    for label, part in parts.items()
                },
                {
                    label: checked_quantiles(part["real"], f"class {label} real quantiles")
                    for label, part in parts.items()
                },
            ),
        )
