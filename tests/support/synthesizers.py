"""Synthesizers built in-process, without a training run: an untrained generator over Kaggle's
shipped schema (``support.creditcard.SCHEMA``) and a TableTransform fitted on a small simulated
table. Weights can be set to NaN or to huge values to play a broken model."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from support.creditcard import FEATURES, LABEL, SCHEMA
from wgangp.data.builtin.simulated import simulate_creditcard
from wgangp.data.transform.table_transform import TableTransform
from wgangp.serving.synthesizer import Synthesizer

#: The latent size of the untrained generators here.
LATENT = 4
#: Weight fills that break a generator: NaN, or values whose outputs overflow float32 to inf.
BROKEN_WEIGHTS = {"nan": np.nan, "huge": 1e30}


def simulated_rows(rows: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Simulated rows of Kaggle's 31 columns (``Class`` 0/1, the table's own values)."""
    return simulate_creditcard(n_rows=rows, seed=seed)


def creditcard_transform(train: pd.DataFrame, **options) -> TableTransform:
    """The shipped schema's transform fitted on ``train`` (its classes from ``Class``)."""
    return TableTransform.fit(train, SCHEMA, SCHEMA.classes(train[LABEL]), **options)


def untrained_generator(
    latent: int = LATENT,
    width: int = len(FEATURES),
    hidden: Sequence[int] = (8,),
    weights: str = "random",
):
    """A generator of Kaggle's width (its weights drawn with seed 0: the same on every machine);
    ``weights`` "nan" or "huge" break every weight."""
    import keras

    from wgangp.model.networks import build_generator

    keras.utils.set_random_seed(0)
    generator = build_generator(latent, width, list(hidden))
    if weights != "random":
        fill = BROKEN_WEIGHTS[weights]
        generator.set_weights([np.full_like(w, fill) for w in generator.get_weights()])
    return generator


def creditcard_synthesizer(
    weights: str = "random",
    *,
    train: pd.DataFrame | None = None,
    latent: int = LATENT,
    width: int | None = None,
    hidden: Sequence[int] = (8,),
) -> Synthesizer:
    """An untrained synthesizer of Kaggle's table: its transform fitted on ``train`` (default
    1,000 simulated rows), a generator of ``width`` outputs (default the transform's)."""
    train = simulated_rows() if train is None else train
    transformer = creditcard_transform(train)
    generator = untrained_generator(latent, width or transformer.width, hidden, weights)
    return Synthesizer(generator, transformer, latent, SCHEMA)


def fraud_team_synthesizer(rows: int = 2000, seed: int = 0, hidden: Sequence[int] = (8,)):
    """An untrained synthesizer of a fraud team's table (``support.tables``: a merchant level
    with gaps, a count, an amount, a day, the label ``is_fraud``): its schema inferred and its
    transform fitted on ``rows`` rows, as a run would."""
    from support.tables import fraud_team_table
    from wgangp.data.schema.inference import infer_schema
    from wgangp.data.schema.validation import validate_table

    frame = fraud_team_table(rows, frauds=rows // 5, seed=seed)
    schema = infer_schema(frame, "is_fraud")
    table = validate_table(frame, schema, source="fraud team table", min_rows_per_class=1)
    transformer = TableTransform.fit(table, schema, schema.classes(table[schema.label]))
    generator = untrained_generator(LATENT, transformer.width, hidden)
    return Synthesizer(generator, transformer, LATENT, schema)
