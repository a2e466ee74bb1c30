"""What ships, assembled in one place: a generator, its transform, and what is fitted on the
training rows after training (``ship.*``: the calibrated marginals, the copula and its share).

The step selection scores the rows this builds at every probe, and the export saves what it builds
from the selected step, so the rows a run was judged on are the rows a user gets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import keras
import pandas as pd

from wgangp.config import ShipConfig
from wgangp.data.feature_transform import FeatureTransform
from wgangp.data.schema import CLASSES, LABEL
from wgangp.data.table_schema import TableSchema
from wgangp.data.table_transform import TableTransform
from wgangp.serving.calibration import MarginalCalibration
from wgangp.serving.copula import GaussianCopula
from wgangp.serving.mixture import CopulaMixture
from wgangp.serving.synthesizer import Synthesizer
from wgangp.serving.table_calibration import TableCalibration

#: Generated rows per class the calibration's quantiles are fitted on (1,000 quantiles each).
CALIBRATION_ROWS = 20_000
#: Added to the run's seed for the calibration's draw: never the noise a user samples with.
CALIBRATION_SEED_OFFSET = 2**32


def shipped_post_processing(ship: ShipConfig, transformer: FeatureTransform) -> ShipConfig:
    """``ship`` as it applies: the copula mixture models Kaggle's 30 numbers, so a user's table
    ships without it (its calibration, :mod:`wgangp.serving.table_calibration`, follows the
    table's kinds)."""
    if isinstance(transformer, TableTransform):
        return replace(ship, copula_share=0.0)
    return ship


def assemble(
    generator: keras.Model,
    transformer: FeatureTransform,
    latent_dim: int,
    train: pd.DataFrame,
    ship: ShipConfig,
    seed: int,
    classes: Sequence[int] = CLASSES,
    table: TableSchema | None = None,
) -> Synthesizer:
    """The synthesizer that ships ``generator``: its current weights, calibrated onto ``train``'s
    marginals and mixed with a copula of ``train`` as ``ship`` says, for ``classes``.

    Each class is fitted on its own, so a probe that only draws the rare class may pass just that
    one and get the very rows the full assembly would draw. A generator that puts out NaN fails
    here, in ``Synthesizer.generate``'s one line. ``table`` is a user's table's schema (None for
    Kaggle's file): the synthesizer's rows come back in its columns and label values.
    """
    synthesizer = Synthesizer(generator, transformer, latent_dim, table=table)
    ship = shipped_post_processing(ship, transformer)
    if not ship.calibrate_marginals and not ship.copula_share:
        return synthesizer
    real = {c: transformer.transform(train[train[LABEL] == c]) for c in classes}
    if ship.calibrate_marginals:
        noise_seed = seed + CALIBRATION_SEED_OFFSET
        generated = {c: synthesizer.generate(CALIBRATION_ROWS, c, noise_seed) for c in classes}
        if isinstance(transformer, TableTransform):
            calibration = TableCalibration.fit(
                transformer.layout, generated, real, ship.min_atom_rows
            )
        else:
            calibration = MarginalCalibration.fit(generated, real, ship.min_atom_rows)
        synthesizer = replace(synthesizer, calibration=calibration)
    if ship.copula_share:
        mixture = CopulaMixture(GaussianCopula.fit(real, ship.min_atom_rows), ship.copula_share)
        synthesizer = replace(synthesizer, mixture=mixture)
    return synthesizer
