"""A trained generator plus its fitted preprocessing: sample rows in original units.

Saved as a directory (no pickle anywhere): ``generator.keras`` (Keras native format, loaded in
safe mode), ``preprocessing.json`` and ``synthesizer.json`` (latent size, columns, versions).
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

GENERATOR_FILE = "generator.keras"
PREPROCESSING_FILE = "preprocessing.json"
META_FILE = "synthesizer.json"
#: Artifact path of the bundle inside an MLflow run.
ARTIFACT_PATH = "synthesizer"


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
                f"point at the '{ARTIFACT_PATH}' artifact of a training run"
            )
        meta = json.loads((directory / META_FILE).read_text())
        generator = keras.saving.load_model(
            directory / GENERATOR_FILE, compile=False, safe_mode=True
        )
        transformer = TabularTransformer.load(directory / PREPROCESSING_FILE)
        return cls(generator=generator, transformer=transformer, latent_dim=int(meta["latent_dim"]))

    @classmethod
    def from_uri(cls, uri: str, tracking_uri: str | None = None) -> Synthesizer:
        """Load from a directory, ``runs:/<id>[/synthesizer]``, a bare run id or an artifact URI."""
        if Path(uri).is_dir():
            return cls.load(Path(uri))
        import mlflow

        if uri.startswith("runs:/") and uri.rstrip("/").count("/") == 1:
            uri = f"{uri.rstrip('/')}/{ARTIFACT_PATH}"
        elif "://" not in uri and ":" not in uri:  # a bare run id
            uri = f"runs:/{uri}/{ARTIFACT_PATH}"
        try:
            local = mlflow.artifacts.download_artifacts(artifact_uri=uri, tracking_uri=tracking_uri)
        except Exception as err:
            raise WgangpError(
                f"cannot download synthesizer {uri} ({type(err).__name__}); check the run id and "
                "MLFLOW_TRACKING_URI / tracking_uri"
            ) from err
        local_path = Path(local)
        if not (local_path / META_FILE).exists() and (local_path / ARTIFACT_PATH).is_dir():
            local_path = local_path / ARTIFACT_PATH
        return cls.load(local_path)
