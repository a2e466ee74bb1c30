"""A trained generator plus its fitted feature transform: sample rows in original units.

Saved as a bundle directory (:mod:`wgangp.serving.bundle`): the generator in Keras' native format
(loaded in safe mode) and the transform and metadata as JSON; no pickle anywhere.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import keras
import numpy as np
import pandas as pd

from wgangp.data.schema import COLUMNS, FRAUD
from wgangp.data.transform import TabularTransformer
from wgangp.errors import WgangpError
from wgangp.model.networks import N_CLASSES
from wgangp.serving.bundle import (
    BUNDLE,
    GENERATOR_FILE,
    META_FILE,
    PREPROCESSING_FILE,
    local_bundle,
)


@dataclass
class Synthesizer:
    generator: keras.Model
    transformer: TabularTransformer
    latent_dim: int

    def sample(
        self, n: int, label: int = FRAUD, seed: int = 0, batch_size: int = 8192
    ) -> pd.DataFrame:
        """``n`` rows of class ``label`` with the original column names and units."""
        if label not in (0, 1):
            raise WgangpError(f"label must be 0 or 1, got {label}")
        if n < 0:
            raise WgangpError(f"number of rows must be >= 0, got {n}")
        rng = np.random.default_rng(seed)
        chunks = []
        for start in range(0, n, batch_size):
            rows = min(batch_size, n - start)
            z = rng.standard_normal((rows, self.latent_dim)).astype(np.float32)
            onehot = np.zeros((rows, N_CLASSES), np.float32)
            onehot[:, label] = 1.0
            chunks.append(np.asarray(self.generator([z, onehot], training=False), np.float32))
        x = np.concatenate(chunks) if chunks else np.zeros((0, len(COLUMNS) - 1), np.float32)
        frame = self.transformer.inverse_transform(x, np.full(len(x), label))
        return frame.loc[:, list(COLUMNS)]

    def save(self, directory: Path) -> Path:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self.generator.save(directory / GENERATOR_FILE)
        self.transformer.save(directory / PREPROCESSING_FILE)
        meta = {
            "format": "wgangp.synthesizer/1",
            "latent_dim": self.latent_dim,
            "columns": list(COLUMNS),
            "keras_version": keras.__version__,
        }
        (directory / META_FILE).write_text(json.dumps(meta, indent=2))
        return directory

    @classmethod
    def load(cls, directory: Path) -> Synthesizer:
        directory = Path(directory)
        missing = [
            f
            for f in (GENERATOR_FILE, PREPROCESSING_FILE, META_FILE)
            if not (directory / f).exists()
        ]
        if missing:
            raise WgangpError(
                f"{directory} is not a wgangp synthesizer (missing {', '.join(missing)}); "
                f"point at the '{BUNDLE}' artifact of a training run"
            )
        meta = json.loads((directory / META_FILE).read_text())
        generator = keras.saving.load_model(
            directory / GENERATOR_FILE, compile=False, safe_mode=True
        )
        transformer = TabularTransformer.load(directory / PREPROCESSING_FILE)
        return cls(generator=generator, transformer=transformer, latent_dim=int(meta["latent_dim"]))


def load_synthesizer(model_uri: str, tracking_uri: str | None = None) -> Synthesizer:
    """The synthesizer behind a directory, a run (``runs:/<id>``, a bare id) or a logged model.

    The artifacts are downloaded before Keras loads anything, so a wrong id fails fast.
    """
    return Synthesizer.load(local_bundle(model_uri, tracking_uri))
