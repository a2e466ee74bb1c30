"""What ships, assembled in one place: a generator, its transform, and what is fitted on the
training rows after training (``ship.*``: the calibrated marginals, the copula and its share).

The step selection scores the rows this builds at every probe, and the export saves what it builds
from the selected step, so the rows a run was judged on are the rows a user gets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import keras
import numpy as np
import pandas as pd

from wgangp.config import MAX_SEED, ShipConfig
from wgangp.data.schema.table_schema import CLASSES, TableSchema
from wgangp.data.transform.private_column import PrivateFit
from wgangp.data.transform.table_transform import TableTransform
from wgangp.serving.calibration import MarginalCalibration
from wgangp.serving.copula import GaussianCopula
from wgangp.serving.mixture import CopulaMixture
from wgangp.serving.synthesizer import Synthesizer

#: Generated rows per class the calibration's quantiles are fitted on (1,000 quantiles each).
CALIBRATION_ROWS = 20_000
#: Added to the run's seed for the calibration's draw: past every seed a user can sample with,
#: so never their noise.
CALIBRATION_SEED_OFFSET = MAX_SEED + 1


def assemble(
    generator: keras.Model,
    transformer: TableTransform,
    latent_dim: int,
    table: TableSchema,
    train: pd.DataFrame,
    ship: ShipConfig,
    seed: int,
    classes: Sequence[int] = CLASSES,
    entities: np.ndarray | None = None,
    dp: PrivateFit | None = None,
) -> Synthesizer:
    """The synthesizer that ships ``generator`` for the table ``table``: its current weights,
    calibrated onto ``train``'s marginals and mixed with a copula of ``train`` as ``ship`` says,
    for ``classes``; their tables count ``entities`` (each row of ``train``'s entity code; None:
    each row its own, :mod:`wgangp.data.entities`).

    Each class is fitted on its own, so a probe that only draws the rare class may pass just that
    one and get the very rows the full assembly would draw. A generator that puts out NaN fails
    here, in ``Synthesizer.generate``'s one line. ``dp``: a run under ``privacy.epsilon``,
    whose calibration's targets are DP releases at its noise.
    """
    synthesizer = Synthesizer(generator, transformer, latent_dim, table)
    if not ship.calibrate_marginals and not ship.copula_share:
        return synthesizer
    of_class = table.classes(train[table.label])
    real = {c: transformer.transform(train[of_class == c], c) for c in classes}
    owners = None if entities is None else {c: entities[of_class == c] for c in classes}
    if ship.calibrate_marginals:
        noise_seed = seed + CALIBRATION_SEED_OFFSET
        generated = {c: synthesizer.generate(CALIBRATION_ROWS, c, noise_seed) for c in classes}
        calibration = MarginalCalibration.fit(
            transformer.layout, generated, real, ship.min_atom_rows, owners, dp
        )
        synthesizer = replace(synthesizer, calibration=calibration)
    if ship.copula_share:
        copula = GaussianCopula.fit(real, ship.min_atom_rows, owners)
        mixture = CopulaMixture(copula, ship.copula_share)
        synthesizer = replace(synthesizer, mixture=mixture)
    return synthesizer
