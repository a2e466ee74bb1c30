"""A trained generator plus its fitted feature transform: sample rows in original units.

Saved as a bundle directory (:mod:`wgangp.serving.bundle`): the generator in Keras' native format
(loaded in safe mode) and the transform, the marginal calibration (when the run fitted one,
:mod:`wgangp.serving.calibration`), the Gaussian copula drawn for a share of the rows (when the run
has one, :mod:`wgangp.serving.mixture`) and metadata as JSON; no pickle anywhere. What goes into
it is decided in one place, :func:`wgangp.synthesis.assemble.assemble`.

Every row :meth:`Synthesizer.sample` returns is finite: a generator that puts out NaN or inf is
broken, and its rows would poison whatever they are written to or augmented into, so sampling
refuses (one line) instead of returning them; the CLI, training's export and the served model
all sample through here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import keras
import numpy as np
import pandas as pd

from wgangp.data.schema import COLUMNS, FEATURES, FRAUD
from wgangp.data.transform import RETRAIN, TabularTransformer
from wgangp.errors import WgangpError
from wgangp.model.networks import N_CLASSES
from wgangp.serving.bundle import (
    BUNDLE,
    CALIBRATION_FILE,
    COPULA_FILE,
    GENERATOR_FILE,
    META_FILE,
    PREPROCESSING_FILE,
    local_bundle,
)
from wgangp.serving.calibration import MarginalCalibration
from wgangp.serving.copula import GaussianCopula
from wgangp.serving.mixture import CopulaMixture

_FORMAT = "wgangp.synthesizer/2"


class NonFiniteSamplesError(WgangpError):
    """The generator returned NaN or inf: no row is returned (nor written) from such a model."""

    reason = "nan"


@dataclass
class Synthesizer:
    """The shipped model: draws rows of either class in original units."""

    generator: keras.Model
    transformer: TabularTransformer
    latent_dim: int
    #: Where it was loaded from, for error lines ("" when built in-process by training).
    origin: str = ""
    #: Maps the generated columns onto the training marginals (None: rows as generated).
    calibration: MarginalCalibration | None = None
    #: Draws a share of each sample's rows (None: every row from the generator).
    mixture: CopulaMixture | None = None

    def sample(
        self, n: int, label: int = FRAUD, seed: int = 0, batch_size: int = 8192
    ) -> pd.DataFrame:
        """``n`` rows of class ``label`` with the original column names and units."""
        if label not in (0, 1):
            raise WgangpError(f"label must be 0 or 1, got {label}")
        if n < 0:
            raise WgangpError(f"number of rows must be >= 0, got {n}")
        x = self.generate(n, label, seed, batch_size)
        if self.calibration is not None and len(x):
            x = self.calibration.apply(x, label)
        if self.mixture is not None and len(x):
            x = self.mixture.mix(x, label, seed)
        frame = self.transformer.inverse_transform(x, np.full(len(x), label))
        self._check_finite(frame.loc[:, list(FEATURES)].to_numpy(), label, seed)
        return frame.loc[:, list(COLUMNS)]

    def generate(
        self, n: int, label: int = FRAUD, seed: int = 0, batch_size: int = 8192
    ) -> np.ndarray:
        """``n`` rows of class ``label`` in the networks' space, as the generator puts them out
        (before calibration and the inverse transform); refused when not finite."""
        rng = np.random.default_rng(seed)
        chunks = []
        for start in range(0, n, batch_size):
            rows = min(batch_size, n - start)
            z = rng.standard_normal((rows, self.latent_dim)).astype(np.float32)
            onehot = np.zeros((rows, N_CLASSES), np.float32)
            onehot[:, label] = 1.0
            chunks.append(np.asarray(self.generator([z, onehot], training=False), np.float32))
        x = np.concatenate(chunks) if chunks else np.zeros((0, len(COLUMNS) - 1), np.float32)
        self._check_finite(x, label, seed)  # before the inverse, whose clipping hides an inf
        return x

    def _check_finite(self, x: np.ndarray, label: int, seed: int) -> None:
        finite = np.isfinite(x)
        if finite.all():
            return
        bad_rows = int((~finite).any(axis=1).sum())
        column = FEATURES[int(np.nonzero(~finite)[1][0])]
        where = f"synthesizer {self.origin}" if self.origin else "the synthesizer"
        raise NonFiniteSamplesError(
            f"{where}: the generator returned NaN or inf in {bad_rows} of {len(x)} row(s) "
            f"(label {label}, seed {seed}, first in column {column}); a broken model returns no "
            "rows: retrain it (the default trainer.on_nan=raise stops at the first non-finite "
            "step and writes nan_forensics.json)"
        )

    def save(self, directory: Path) -> Path:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self.generator.save(directory / GENERATOR_FILE)
        self.transformer.save(directory / PREPROCESSING_FILE)
        if self.calibration is not None:
            self.calibration.save(directory / CALIBRATION_FILE)
        else:  # a stale file from an earlier save here would calibrate this generator's rows
            (directory / CALIBRATION_FILE).unlink(missing_ok=True)
        if self.mixture is not None:
            self.mixture.copula.save(directory / COPULA_FILE)
        else:
            (directory / COPULA_FILE).unlink(missing_ok=True)
        meta = {
            "format": _FORMAT,
            "latent_dim": self.latent_dim,
            "copula_share": self.mixture.share if self.mixture else 0.0,
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
        meta = _meta(directory / META_FILE)
        # The JSON first: a bad preprocessing.json fails before the slow Keras load.
        transformer = TabularTransformer.load(directory / PREPROCESSING_FILE)
        calibration_file = directory / CALIBRATION_FILE
        calibration = (
            MarginalCalibration.load(calibration_file) if calibration_file.exists() else None
        )
        copula_file = directory / COPULA_FILE
        mixture = None
        if copula_file.exists():
            mixture = CopulaMixture(GaussianCopula.load(copula_file), meta["copula_share"])
        generator = keras.saving.load_model(
            directory / GENERATOR_FILE, compile=False, safe_mode=True
        )
        return cls(
            generator=generator,
            transformer=transformer,
            latent_dim=int(meta["latent_dim"]),
            origin=str(directory),
            calibration=calibration,
            mixture=mixture,
        )


def _meta(path: Path) -> dict:
    """``synthesizer.json``, checked: this format, a latent size, a copula share in [0, 1)."""
    try:
        meta = json.loads(path.read_text())
        if meta.get("format") != _FORMAT:
            raise ValueError(f"format {meta.get('format')!r}, not {_FORMAT}")
        if int(meta["latent_dim"]) < 1 or not 0 <= float(meta["copula_share"]) < 1:
            raise ValueError("latent_dim or copula_share out of range")
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise WgangpError(
            f"{path} is not a usable synthesizer description ({err}); {RETRAIN}"
        ) from None
    return meta


def load_synthesizer(model_uri: str, tracking_uri: str | None = None) -> Synthesizer:
    """The synthesizer behind a directory, a run (``runs:/<id>``, a bare id) or a logged model.

    The artifacts are downloaded before Keras loads anything, so a wrong id fails fast.
    """
    return Synthesizer.load(local_bundle(model_uri, tracking_uri))
