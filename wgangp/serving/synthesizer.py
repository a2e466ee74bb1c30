"""A trained generator plus its fitted feature transform: sample rows in original units.

Saved as a bundle directory (:mod:`wgangp.serving.bundle`): the generator in Keras' native format
(loaded in safe mode) and the transform, the marginal calibration (when the run fitted one,
:mod:`wgangp.serving.calibration`), the Gaussian copula drawn for a share of the rows (when the run
has one, :mod:`wgangp.serving.mixture`) and metadata as JSON; no pickle anywhere. What goes into
it is decided in one place, :func:`wgangp.synthesis.assemble.assemble`. The bundle is written as a
unit (built beside the old one, swapped in when complete, sealed by a manifest of checksums) and
loaded only when every file is the one saved and the generator fits the description: a damaged
bundle never samples.

Every row :meth:`Synthesizer.sample` returns is finite: a generator that puts out NaN or inf is
broken, and its rows would poison whatever they are written to or augmented into, so sampling
refuses (one line) instead of returning them; the CLI, training's export and the served model
all sample through here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import keras
import numpy as np
import pandas as pd

from wgangp.config import MAX_SEED
from wgangp.data.schema.table_schema import RARE, TableSchema
from wgangp.data.transform.layout import draw_discrete, slot_names
from wgangp.data.transform.stored import RETRAIN
from wgangp.data.transform.table_transform import TableTransform
from wgangp.errors import WgangpError
from wgangp.files import atomic_directory, write_text
from wgangp.model.networks import N_CLASSES
from wgangp.privacy.randomness import SECRET
from wgangp.serving.bundle import (
    BUNDLE,
    BUNDLE_FILES,
    CALIBRATION_FILE,
    COPULA_FILE,
    GENERATOR_FILE,
    MANIFEST_FILE,
    META_FILE,
    PREPROCESSING_FILE,
    REEXPORT,
    SCHEMA_FILE,
    DamagedBundleError,
    check_manifest,
    load_generator,
    write_manifest,
)
from wgangp.serving.calibration import MarginalCalibration
from wgangp.serving.conditions import Condition, parse_where, sample_where
from wgangp.serving.copula import GaussianCopula
from wgangp.serving.labels import label_class, label_value
from wgangp.serving.latent_moves import latent_noise, sample_conditioned
from wgangp.serving.memory import checked_rows, chunks, draw_memory
from wgangp.serving.mixture import CopulaMixture

_FORMAT = "wgangp.synthesizer/3"
#: What a bundle file's loader returns.
T = TypeVar("T")


class NonFiniteSamplesError(WgangpError):
    """The generator returned NaN or inf: no row is returned (nor written) from such a model."""

    reason = "nan"


@dataclass
class Synthesizer:
    """The shipped model: draws rows of either class of its table, in the table's units."""

    generator: keras.Model
    transformer: TableTransform
    latent_dim: int
    #: The table's schema: rows come back in its columns, with its label's own values.
    schema: TableSchema
    #: Where it was loaded from, for error lines ("" when built in-process by training).
    origin: str = ""
    #: Maps the generated columns onto the training marginals (None: rows as generated).
    calibration: MarginalCalibration | None = None
    #: Draws a share of each sample's rows (None: every row from the generator).
    mixture: CopulaMixture | None = None
    #: The MLflow run that trained it and the URI to load it by (``runs:/ID``), when
    #: :func:`wgangp.fit` or :func:`wgangp.load` made it; None otherwise.
    run_id: str | None = None
    model_uri: str | None = None
    #: The run's final figures (the selection's score, the held-out evaluation) when
    #: :func:`wgangp.fit` made it; empty otherwise (a bundle keeps none).
    metrics: dict[str, float] = field(default_factory=dict)
    #: What it was trained under (``privacy.epsilon``: epsilon spent, delta, how they were
    #: spent, where the noise came from), as ``synthesizer.json`` carries it; None: no privacy.
    #: Whether that is a guarantee: :attr:`guarantee`.
    privacy: dict[str, Any] | None = None

    @property
    def guarantee(self) -> dict[str, Any] | None:
        """The differential-privacy guarantee its rows carry: :attr:`privacy` when that noise
        was secret; None without privacy, or where the noise is replayable (a test key, or a
        bundle trained before DP noise came from a secret key: its noise followed the public
        seed, so anyone with the bundle can replay it)."""
        if self.privacy is None or self.privacy.get("noise") != SECRET:
            return None
        return self.privacy

    @property
    def columns(self) -> list[str]:
        """The columns of every sampled frame, in the table's order."""
        return list(self.schema.names)

    def class_of(self, value: object) -> int:
        """The class (1: rare, 0: the rest) a user names by the label's own value: ``yes`` for a
        table labelled yes/no, ``1`` or ``0`` for Kaggle's file; WgangpError in one line."""
        return label_class(self.schema, value)

    def sample(
        self,
        n: int,
        label: object = None,
        seed: int | None = None,
        batch_size: int = 8192,
        *,
        where: Mapping[str, Any] | None = None,
    ) -> pd.DataFrame:
        """``n`` rows with the table's column names and units, of the class a value of the label
        names (``label="yes"``; 1 or 0 for Kaggle's file; None: the class the model
        synthesizes), each meeting every condition of ``where`` (:mod:`.conditions`:
        ``{"merchant": ["online"], "amount": [500, None]}``). ``seed`` None: a fresh one."""
        rows = checked_rows(n)
        klass = RARE if label is None else self.class_of(label)
        conditions = self.conditions(where) if where else ()
        with draw_memory(rows, self.latent_dim, self.width, len(self.columns)):
            return self.sample_class(rows, klass, checked_seed(seed), batch_size, conditions)

    def sample_chunks(
        self,
        n: int,
        label: object = None,
        seed: int | None = None,
        *,
        where: Mapping[str, Any] | None = None,
        chunk_rows: int = 100_000,
    ) -> Iterator[pd.DataFrame]:
        """:meth:`sample`'s rows as frames of at most ``chunk_rows``, each drawn when the last
        was taken: a draw of any size in one chunk's memory. The first chunk is the plain
        sample of its size; the same arguments give the same rows (:func:`.memory.chunks`)."""
        klass = RARE if label is None else self.class_of(label)
        conditions = self.conditions(where) if where else ()
        for size, seed_ in chunks(checked_rows(n), checked_seed(seed), chunk_rows):
            yield self.sample_class(size, klass, seed_, conditions=conditions)

    def conditions(self, where: Mapping[str, Any]) -> tuple[Condition, ...]:
        """``where`` checked against the schema and the fitted bounds (:mod:`.conditions`)."""
        return parse_where(where, self.schema, self.bounds)

    def sample_class(
        self,
        n: int,
        klass: int = RARE,
        seed: int = 0,
        batch_size: int = 8192,
        conditions: tuple[Condition, ...] = (),
    ) -> pd.DataFrame:
        """``n`` rows of class ``klass`` (1: the rare class, 0: the rest) meeting every one of
        ``conditions`` (:mod:`.latent_moves`; with a copula share, rejection alone:
        :func:`.conditions.sample_where`); the label column holds the table's own value for
        that class. Each level and gap is drawn from the heads' probabilities (a stream of its
        own, after the noise's)."""
        if klass not in (0, 1):
            raise WgangpError(f"class must be 0 or 1, got {klass}")
        if n < 0:
            raise WgangpError(f"number of rows must be >= 0, got {n}")
        label_value(self.schema, klass)  # a label of 3+ values has no single rest value
        latent = ClassLatent(self, klass, batch_size)
        if conditions and n:
            if self.mixture is None:
                return sample_conditioned(latent, n, conditions, seed)
            draw = lambda rows, s: self.sample_class(rows, klass, s, batch_size)  # noqa: E731
            return sample_where(draw, n, conditions, seed)
        x = latent.decode(latent_noise(n, self.latent_dim, seed), seed)
        if self.mixture is not None and len(x):
            x = self.mixture.mix(x, klass, seed)
        drawn = draw_discrete(x, self.transformer.layout, np.random.default_rng([seed, 1]))
        return latent.rows(drawn)

    @property
    def bounds(self) -> dict[str, tuple[float, float]]:
        """Each non-categorical feature's fitted bounds in its units (datetimes in seconds):
        the values generated rows stay within when the column is clipped."""
        return {
            column.name: column.low_high()
            for column in self.transformer.columns
            if column.kind != "categorical" and column.schema.bounds is not None
        }

    def generate(
        self, n: int, klass: int = RARE, seed: int = 0, batch_size: int = 8192
    ) -> np.ndarray:
        """``n`` rows of class ``klass`` in the networks' space, as the generator puts them out
        (before calibration and the inverse transform); refused when not finite."""
        return self.generate_from(latent_noise(n, self.latent_dim, seed), klass, seed, batch_size)

    def generate_from(
        self, z: np.ndarray, klass: int = RARE, seed: int = 0, batch_size: int = 8192
    ) -> np.ndarray:
        """The generator's rows of noise ``z`` [rows, latent_dim] for class ``klass``; refused
        when not finite (``seed`` names the draw in that line)."""
        chunks = []
        for start in range(0, len(z), batch_size):
            rows = z[start : start + batch_size]
            onehot = np.zeros((len(rows), N_CLASSES), np.float32)
            onehot[:, klass] = 1.0
            chunks.append(np.asarray(self.generator([rows, onehot], training=False), np.float32))
        x = np.concatenate(chunks) if chunks else np.zeros((0, self.width), np.float32)
        self._check_finite(x, klass, seed)  # before the inverse, whose clipping hides an inf
        return x

    def _check_finite(self, x: np.ndarray, klass: int, seed: int) -> None:
        finite = np.isfinite(x)
        if finite.all():
            return
        bad_rows = int((~finite).any(axis=1).sum())
        column = self._column_at(int(np.nonzero(~finite)[1][0]))
        where = f"synthesizer {self.origin}" if self.origin else "the synthesizer"
        raise NonFiniteSamplesError(
            f"{where}: the generator returned NaN or inf in {bad_rows} of {len(x)} row(s) "
            f"(class {klass}, seed {seed}, first in column {column}); a broken model returns no "
            "rows: retrain it (the default trainer.on_nan=raise stops at the first non-finite "
            "step and writes nan_forensics.json)"
        )

    @property
    def width(self) -> int:
        """The generator's output width: the networks' space of the table."""
        return self.transformer.width

    def _column_at(self, index: int) -> str:
        return next(b.column for b in self.transformer.layout if b.start <= index < b.stop)

    def save(self, directory: Path) -> Path:
        """Write the bundle as a unit: a failed save leaves the previous bundle as it was."""
        directory = Path(directory)
        foreign = sorted(
            p.name
            for p in (directory.iterdir() if directory.is_dir() else ())
            if p.name not in (*BUNDLE_FILES, MANIFEST_FILE)
        )
        if foreign:  # the swap replaces the whole folder: never a folder of other files
            raise WgangpError(
                f"cannot save the synthesizer into {directory}: it holds {', '.join(foreign[:5])}, "
                "which are not a bundle's files; save it into a new or empty folder"
            )
        with atomic_directory(directory) as tmp:
            self.generator.save(tmp / GENERATOR_FILE)
            write_text(tmp / PREPROCESSING_FILE, self.transformer.to_json())
            if self.calibration is not None:
                write_text(tmp / CALIBRATION_FILE, self.calibration.to_json())
            if self.mixture is not None:
                write_text(tmp / COPULA_FILE, self.mixture.copula.to_json())
            write_text(tmp / SCHEMA_FILE, self.schema.to_yaml())
            meta = {
                "format": _FORMAT,
                "latent_dim": self.latent_dim,
                "calibrated": self.calibration is not None,
                "copula_share": self.mixture.share if self.mixture else 0.0,
                "columns": self.columns,
                "label": [self.schema.label, self.schema.positive],
                "keras_version": keras.__version__,
            }
            if self.privacy is not None:
                meta["privacy"] = self.privacy
            write_text(tmp / META_FILE, json.dumps(meta, indent=2))
            write_manifest(tmp)
        return directory

    @classmethod
    def load(cls, directory: Path) -> Synthesizer:
        """The bundle in ``directory``, checked file by file (one line names a bad one)."""
        directory = Path(directory)
        sealed = (directory / MANIFEST_FILE).is_file()
        if sealed:  # names the missing file of a damaged bundle
            check_manifest(directory)
        missing = [
            f
            for f in (GENERATOR_FILE, PREPROCESSING_FILE, META_FILE, SCHEMA_FILE)
            if not (directory / f).exists()
        ]
        if missing:
            raise WgangpError(
                f"{directory} is not a wgangp synthesizer (missing {', '.join(missing)}); "
                f"point at the '{BUNDLE}' artifact of a training run"
            )
        if not sealed:
            check_manifest(directory)
        table = _read(directory / SCHEMA_FILE, TableSchema.load)
        meta = _meta(directory / META_FILE, list(table.names), [table.label, table.positive])
        # The JSON first: a bad preprocessing.json fails before the slow Keras load.
        transformer = _read(directory / PREPROCESSING_FILE, _load_transform)
        features = [column.name for column in table.features]
        if [column.name for column in transformer.columns] != features:
            raise DamagedBundleError(
                f"{directory}: {PREPROCESSING_FILE} maps other columns than {SCHEMA_FILE}'s "
                f"features; {REEXPORT}"
            )
        calibration = _part(
            directory, CALIBRATION_FILE, meta["calibrated"], MarginalCalibration.load
        )
        if calibration is not None and calibration.layout != transformer.layout:
            raise DamagedBundleError(
                f"{directory / CALIBRATION_FILE} does not fit {PREPROCESSING_FILE} (another "
                f"table's columns); {REEXPORT}"
            )
        share = float(meta["copula_share"])
        names = slot_names(transformer.layout)
        copula = _part(directory, COPULA_FILE, share > 0, lambda p: GaussianCopula.load(p, names))
        mixture = CopulaMixture(copula, share) if copula is not None else None
        generator = _generator(
            directory / GENERATOR_FILE, int(meta["latent_dim"]), transformer.width
        )
        return cls(
            generator=generator,
            transformer=transformer,
            latent_dim=int(meta["latent_dim"]),
            schema=table,
            origin=str(directory),
            calibration=calibration,
            mixture=mixture,
            privacy=meta.get("privacy"),
        )


@dataclass
class ClassLatent:
    """One class of a synthesizer as :mod:`.latent_moves` sees it: noise in, rows out."""

    synthesizer: Synthesizer
    klass: int
    batch_size: int

    @property
    def latent_dim(self) -> int:
        return self.synthesizer.latent_dim

    @property
    def layout(self) -> tuple:
        return tuple(self.synthesizer.transformer.layout)

    @property
    def levels(self) -> dict[str, list]:
        return {
            column.name: list(column.schema.levels or ())
            for column in self.synthesizer.transformer.columns
            if column.kind == "categorical"
        }

    def decode(self, z: np.ndarray, seed: int = 0) -> np.ndarray:
        """The heads' rows of noise ``z``, calibrated when the model is."""
        model = self.synthesizer
        x = model.generate_from(z, self.klass, seed, self.batch_size)
        if model.calibration is not None and len(x):
            x = model.calibration.apply(x, self.klass)
        return x

    def rows(self, x: np.ndarray) -> pd.DataFrame:
        """Rows with their levels and gaps drawn -> the sample's frame, label included."""
        schema = self.synthesizer.schema
        frame = self.synthesizer.transformer.inverse(x, self.klass)
        value = label_value(schema, self.klass)
        frame.insert(schema.names.index(schema.label), schema.label, [value] * len(frame))
        return frame.loc[:, self.synthesizer.columns]


def _part(directory: Path, name: str, described: bool, load: Callable[[Path], T]) -> T | None:
    """An optional file of the bundle, read when ``synthesizer.json`` describes it (a calibrated
    model, a copula share); refused when the two disagree, even in a re-sealed manifest: the rows
    would silently be another model's."""
    path = directory / name
    if path.exists() != described:
        held = "does not describe" if path.exists() else "describes"
        holds = "holds" if path.exists() else "does not hold"
        raise DamagedBundleError(
            f"{directory / META_FILE} {held} {name}, but the bundle {holds} it; {REEXPORT}"
        )
    return _read(path, load) if described else None


def _load_transform(path: Path) -> TableTransform:
    return TableTransform.from_json(Path(path).read_text(), str(path))


def _read(path: Path, load: Callable[[Path], T]) -> T:
    """A JSON table of the bundle through its own loader; a loader's crash is one line too."""
    try:
        return load(path)
    except WgangpError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError, IndexError) as err:
        raise DamagedBundleError(
            f"{path} is not a usable {path.stem} table ({type(err).__name__}: "
            f"{str(err)[:160]}); {RETRAIN}"
        ) from None


def _generator(path: Path, latent_dim: int, width: int) -> keras.Model:
    """``generator.keras``, loaded in safe mode, with the inputs and output the bundle says."""
    generator = load_generator(path)
    try:
        shapes = [tuple(t.shape) for t in generator.inputs] + [tuple(generator.outputs[0].shape)]
    except (AttributeError, IndexError, TypeError):
        shapes = []
    expected = [(None, latent_dim), (None, N_CLASSES), (None, width)]
    if shapes != expected:
        got = ", ".join(str(s[-1]) if s else "?" for s in shapes) or "no inputs"
        raise DamagedBundleError(
            f"{path} takes and returns widths {got}, not the {latent_dim} (latent, from "
            f"{META_FILE}), {N_CLASSES} (classes) and {width} (features) of this "
            f"bundle; {REEXPORT}"
        )
    return generator


def _meta(path: Path, columns: list[str], label: list) -> dict:
    """``synthesizer.json``, checked: this format, a latent size, whether it is calibrated, a
    copula share in [0, 1), these columns, this label and class to synthesize."""
    try:
        meta = json.loads(path.read_text())
        if not isinstance(meta, dict):
            raise ValueError("not a JSON object")
        if meta.get("format") != _FORMAT:
            raise ValueError(f"format {meta.get('format')!r}, not {_FORMAT}")
        latent = meta["latent_dim"]
        if isinstance(latent, bool) or not isinstance(latent, int) or latent < 1:
            raise ValueError(f"latent_dim {latent!r} is not a whole number >= 1")
        if not isinstance(meta["calibrated"], bool):
            raise ValueError(f"calibrated {meta['calibrated']!r} is not true or false")
        share = float(meta["copula_share"])
        if not 0 <= share < 1:
            raise ValueError(f"copula_share {share} is not in [0, 1)")
        if meta.get("columns", columns) != columns:
            raise ValueError("columns are not the table's")
        if meta.get("label") != label:
            raise ValueError(f"label and class {meta.get('label')!r} are not the schema's {label}")
        privacy = meta.get("privacy")
        if privacy is not None and not (
            isinstance(privacy, dict) and isinstance(privacy.get("epsilon"), int | float)
        ):
            raise ValueError(f"privacy {privacy!r} is not a guarantee with an epsilon")
    except (ValueError, KeyError, TypeError, AttributeError, OSError) as err:
        raise DamagedBundleError(
            f"{path} is not a usable synthesizer description ({err}); {RETRAIN}"
        ) from None
    return meta


def checked_seed(seed: int | None) -> int:
    """A sampling seed: an integer in [0, MAX_SEED], or a fresh one for None."""
    if seed is None:
        return int(np.random.SeedSequence().generate_state(1)[0])
    if (
        isinstance(seed, bool)
        or not isinstance(seed, int | np.integer)
        or not 0 <= seed <= MAX_SEED
    ):
        raise WgangpError(f"seed must be an integer in [0, {MAX_SEED}], got {seed!r}")
    return int(seed)
