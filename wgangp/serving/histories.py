"""A trained history model (``data.time``): draws whole synthetic customers, in the table's columns.

:meth:`HistorySynthesizer.sample_histories` draws ``n`` histories: each a new customer id (never a
real one: :mod:`.pseudonyms`), its attributes once, then its rows in time order: a start, the
gaps, the records, each row's label value, each shared id a new pseudonym. Timestamps come back
in the time column's zone (wall-clock time as the table showed it) and never decrease within a
history. ``label=`` asks for histories of one class: the label's rare value for histories with
at least one such row (the generator is conditioned on it, and a history it draws without one
gets one of its rows at random: docs/histories.md, Limits), another value for histories
without; None for both, at the training windows' share. ``where=`` conditions the attributes
(one value per history), by rejection.

Saved as a bundle beside the row model's (:mod:`.bundle`): ``generator.keras`` (safe mode),
``histories.json`` (the encoding: transforms, scales, pseudonym structure), ``schema.yaml``,
``synthesizer.json`` (format ``wgangp.histories/1``), sealed by ``manifest.json``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import keras
import numpy as np
import pandas as pd

from wgangp.data.histories.encoding import REPEAT, HistoryEncoding, start_seconds
from wgangp.data.histories.windows import DAY, from_wall_seconds
from wgangp.data.schema.table_schema import REST, TableSchema
from wgangp.errors import WgangpError
from wgangp.files import atomic_directory, write_text
from wgangp.model.networks import N_CLASSES
from wgangp.model.sequence_networks import PHASES  # its import registers the generator's layers
from wgangp.serving.bundle import (
    GENERATOR_FILE,
    HISTORIES_FILE,
    HISTORY_FORMAT,
    META_FILE,
    REEXPORT,
    SCHEMA_FILE,
    DamagedBundleError,
    check_manifest,
    is_history_bundle,
    load_generator,
    write_manifest,
)
from wgangp.serving.conditions import Condition, ConditionError, parse_where, round_seed
from wgangp.serving.labels import label_class, label_value
from wgangp.serving.memory import draw_memory
from wgangp.serving.pseudonyms import SharedIds
from wgangp.serving.synthesizer import NonFiniteSamplesError, Synthesizer, checked_seed

FORMAT = HISTORY_FORMAT
#: The most histories one conditional call draws before it gives up.
MAX_DRAWN = 200_000
#: Histories drawn per generator call.
CHUNK = 2048


@dataclass
class HistorySynthesizer:
    """The shipped history model (module doc)."""

    generator: keras.Model
    encoding: HistoryEncoding
    schema: TableSchema
    shared: tuple[SharedIds, ...]
    entity_prefix: str
    #: The training windows' share holding a rare-class row: ``label=None``'s mix.
    rare_share: float
    latent_dim: int
    records_per_cell: int
    origin: str = ""
    run_id: str | None = None
    model_uri: str | None = None
    #: The run's final figures when :func:`wgangp.fit` made it (as :class:`Synthesizer`'s).
    metrics: dict[str, float] = field(default_factory=dict)
    privacy: dict[str, Any] | None = field(default=None)

    @property
    def guarantee(self) -> dict[str, Any] | None:
        """No differential-privacy guarantee: ``data.time`` is refused under privacy.epsilon."""
        return None

    @property
    def columns(self) -> list[str]:
        """The columns of every sample, in the table's order (entity and time included)."""
        return list(self.encoding.roles.order)

    @property
    def noise_shape(self) -> tuple[int, int, int]:
        """The generator's noise: the attributes' width, the recurrent steps, each step's width."""
        z_attributes, z_records = self.generator.inputs[0].shape, self.generator.inputs[1].shape
        return int(z_attributes[-1]), int(z_records[1]), int(z_records[2])

    def class_of(self, value: object) -> int:
        return label_class(self.schema, value)

    def sample(self, *args: object, **kwargs: object) -> pd.DataFrame:
        raise WgangpError(
            "this model draws histories (it was trained with data.time): call "
            "sample_histories(n, label=..., seed=...), or python -m wgangp.sample histories=n"
        )

    def sample_histories(
        self,
        n: int,
        label: object = None,
        seed: int | None = None,
        where: Mapping[str, Any] | None = None,
    ) -> pd.DataFrame:
        """``n`` synthetic customers with their rows (module doc)."""
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 0:
            raise WgangpError(f"number of histories must be an integer >= 0, got {n!r}")
        klass = None if label is None else self.class_of(label)
        if klass == REST:
            label_value(self.schema, REST)  # a label of 3+ values has no single rest value
        seed = checked_seed(seed)
        conditions = self.conditions(where) if where else ()
        if not conditions:
            return self.draw(int(n), klass, seed)
        return self._draw_where(int(n), klass, seed, conditions)

    def conditions(self, where: Mapping[str, Any]) -> tuple[Condition, ...]:
        """``where`` on the attributes, checked (a record column changes within a history)."""
        roles = self.encoding.roles
        attributes = list(roles.attributes)
        for name in where if isinstance(where, Mapping) else ():
            if str(name) in set(self.columns) - set(attributes) - {roles.label}:
                raise ConditionError(
                    f"where: {name} changes within a history; conditions take the attributes, one "
                    f"value per history ({', '.join(attributes) or 'this model has none'})"
                )
        if not attributes:
            return parse_where(where, self.schema)
        kept = [self.schema.column(a) for a in attributes] + [self.schema.column(roles.label)]
        schema = TableSchema(tuple(kept), roles.label, self.schema.positive)
        return parse_where(where, schema)

    def draw(self, n: int, klass: int | None, seed: int) -> pd.DataFrame:
        """``n`` histories of class ``klass`` (None: both, at the training share) for ``seed``."""
        rng = np.random.default_rng([seed, 7])
        if klass is None:
            classes = (rng.random(n) < self.rare_share).astype(np.int64)
        else:
            classes = np.full(n, klass, np.int64)
        first, cells, step = self.noise_shape
        enc = self.encoding
        slots = enc.max_length
        # Each padded slot as a row of a row model: its share of the noise, the networks'
        # outputs and the frame's columns (docs/reliability.md measures it).
        latent = -(-(first + cells * step) // slots)
        width = enc.record_width + enc.attribute_width + PHASES + 1
        with draw_memory(n, latent, width, len(self.columns), rows_each=slots):
            z = np.random.default_rng(seed).standard_normal((n, first + cells * step))
            attributes, records, phases, mask = self._generate(z.astype(np.float32), classes, seed)
            return self._frame(attributes, records, phases, mask, classes, rng, tag=f"{seed:x}")

    def _draw_where(
        self, n: int, klass: int | None, seed: int, conditions: tuple[Condition, ...]
    ) -> pd.DataFrame:
        """Rounds of histories until ``n`` meet every condition on their attributes."""
        kept, have, drawn, round_ = [], 0, 0, 0
        met_each = np.zeros(len(conditions), np.int64)
        entity = self.encoding.roles.entity
        while have < n and drawn < MAX_DRAWN:
            rate = (have + 3) / drawn if drawn else None
            if rate is not None and have + rate * (MAX_DRAWN - drawn) < n:
                break
            size = int(min(MAX_DRAWN - drawn, max(2 * n, 1000) if rate is None else
                           max(1000, 1.2 * (n - have) / rate)))  # fmt: skip
            frame = self.draw(size, klass, round_seed(seed, round_))
            firsts = frame.drop_duplicates(entity)
            masks = np.stack([c.met(firsts) for c in conditions])
            met_each += masks.sum(axis=1)
            chosen = firsts[entity][masks.all(axis=0)].iloc[: n - have]
            kept.append(frame[frame[entity].isin(set(chosen))])
            have, drawn, round_ = have + len(chosen), drawn + size, round_ + 1
        if have < n:
            rarest = int(np.argmin(met_each))
            raise ConditionError(
                f"where: {have} of {drawn:,} generated histories met every condition and {n} are "
                f"asked for; the rarest is {conditions[rarest].text}: the model rarely makes such "
                "customers; widen the conditions or ask for fewer histories"
            )
        return pd.concat(kept, ignore_index=True)

    def _generate(
        self, z: np.ndarray, classes: np.ndarray, seed: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The generator's attributes, records, phases and mask for noise ``z``; refused when not
        finite."""
        first, cells, step = self.noise_shape
        parts: list[list[np.ndarray]] = [[], [], [], []]
        for start in range(0, len(z), CHUNK):
            rows = z[start : start + CHUNK]
            onehot = np.eye(N_CLASSES, dtype=np.float32)[classes[start : start + CHUNK]]
            inputs = [rows[:, :first], rows[:, first:].reshape(len(rows), cells, step), onehot]
            outputs = self.generator(inputs, training=False)
            for part, value in zip(parts, outputs, strict=True):
                part.append(np.asarray(value, np.float32))
        enc = self.encoding
        empty = [(0, enc.attribute_width), (0, enc.max_length, enc.record_width),
                 (0, enc.max_length, PHASES), (0, enc.max_length)]  # fmt: skip
        out = [
            np.concatenate(p) if p else np.zeros(s, np.float32)
            for p, s in zip(parts, empty, strict=True)
        ]
        bad = ~np.isfinite(out[0]).all(1) | ~np.isfinite(out[1]).all((1, 2))
        if bad.any():
            where = f"synthesizer {self.origin}" if self.origin else "the synthesizer"
            raise NonFiniteSamplesError(
                f"{where}: the generator returned NaN or inf in {int(bad.sum())} of {len(z)} "
                f"histories (seed {seed}); a broken model returns no histories: retrain it (the "
                "default trainer.on_nan=raise stops at the first non-finite step)"
            )
        return out[0], out[1], out[2], out[3]

    def _gaps(self, days_z: np.ndarray, phases: np.ndarray, position: np.ndarray) -> np.ndarray:
        """Each record's gap in seconds: its whole days, then forward to its time of day (the
        day's angle of its phase), as the generator moved its clock; 0 for a first record."""
        days = np.round(self.encoding.days.inverse(days_z))
        day_angle = np.arctan2(phases[:, 3].astype(np.float64), phases[:, 2].astype(np.float64))
        previous = np.r_[day_angle[:1], day_angle[:-1]]
        wrap = np.mod(day_angle - previous, 2 * np.pi) / (2 * np.pi) * DAY
        return np.where(position > 0, days * DAY + wrap, 0.0)

    def _frame(
        self,
        attributes: np.ndarray,
        records: np.ndarray,
        phases: np.ndarray,
        mask: np.ndarray,
        classes: np.ndarray,
        rng: np.random.Generator,
        tag: str,
    ) -> pd.DataFrame:
        """The generator's output -> the histories' rows in the table's columns (module doc)."""
        enc, roles = self.encoding, self.encoding.roles
        n = len(classes)
        present = mask > 0.5
        lengths = present.sum(1)
        history, position = np.nonzero(present)
        drawn, flat = attributes, records[present]  # levels and gaps drawn by the generator
        low, high = enc.rare_slots
        row_class = self._row_classes(flat[:, low:high], history, classes, lengths, rng)
        flat[:, low:high] = np.eye(2, dtype=np.float32)[row_class]
        width = enc.attributes.width if enc.attributes is not None else 0
        starts = start_seconds(drawn[:, width + 1], attributes[:, width + 2],
                               attributes[:, width + 3], enc.week)  # fmt: skip
        gaps = self._gaps(flat[:, 0], phases[present], position)
        elapsed = np.cumsum(gaps)
        first = np.r_[0, np.cumsum(lengths)[:-1]].astype(np.int64)
        seconds = starts[history] + elapsed - elapsed[first[history]] if len(gaps) else gaps
        table = enc.records.inverse(flat[:, 1:], row_class)
        if enc.attributes is not None:
            table = pd.concat([table, enc.attributes.inverse(drawn[:, :width], classes).iloc[
                history].reset_index(drop=True)], axis=1)  # fmt: skip
        table[roles.entity] = [f"{self.entity_prefix}{tag}-{h}" for h in history]
        time = from_wall_seconds(seconds, self.schema.column(roles.time))
        table[roles.time] = _non_decreasing(time, history)
        values = np.array([label_value(self.schema, c) for c in (0, 1)], dtype=object)
        table[roles.label] = pd.Series(values[row_class]).infer_objects()
        for shared in self.shared:
            token = table[f"{REPEAT}{shared.column}"].to_numpy(np.int64)
            table[shared.column] = shared.assign(history, seconds, row_class, token, n, rng, tag)
        del n
        return table.loc[:, self.columns]

    @staticmethod
    def _row_classes(
        onehot: np.ndarray,
        history: np.ndarray,
        classes: np.ndarray,
        lengths: np.ndarray,
        rng: np.random.Generator,
    ) -> np.ndarray:
        """Each row's class as drawn, within its history's: none rare in a history without, at
        least one in a history with (a row of it at random, when the draw gave none)."""
        drawn = onehot.argmax(1).astype(np.int64)
        drawn[classes[history] == REST] = REST
        holds = np.zeros(len(classes), np.int64)
        np.maximum.at(holds, history, drawn)
        first = np.r_[0, np.cumsum(lengths)[:-1]].astype(np.int64)
        for h in np.flatnonzero((classes == 1) & (holds == 0)):
            drawn[first[h] + int(rng.integers(lengths[h]))] = 1
        return drawn

    # -- the bundle --------------------------------------------------------------------------

    def save(self, directory: Path) -> Path:
        """Write the bundle as a unit (module doc)."""
        directory = Path(directory)
        with atomic_directory(directory) as tmp:
            self.generator.save(tmp / GENERATOR_FILE)
            parts = {
                "encoding": self.encoding.to_dict(),
                "shared": [shared.to_dict() for shared in self.shared],
            }
            write_text(tmp / HISTORIES_FILE, json.dumps(parts, indent=1, allow_nan=False))
            write_text(tmp / SCHEMA_FILE, self.schema.to_yaml())
            meta = {
                "format": FORMAT,
                "latent_dim": self.latent_dim,
                "records_per_cell": self.records_per_cell,
                "entity_prefix": self.entity_prefix,
                "rare_share": self.rare_share,
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
    def load(cls, directory: Path) -> HistorySynthesizer:
        """The bundle in ``directory``, checked (a damaged file is one line)."""
        directory = Path(directory)
        check_manifest(directory)
        try:
            meta = json.loads((directory / META_FILE).read_text())
            if meta.get("format") != FORMAT:
                raise ValueError(f"format {meta.get('format')!r}, not {FORMAT}")
            parts = json.loads((directory / HISTORIES_FILE).read_text())
            schema = TableSchema.load(directory / SCHEMA_FILE)
            encoding = HistoryEncoding.from_dict(parts["encoding"], str(directory))
            shared = tuple(SharedIds.from_dict(raw) for raw in parts["shared"])
            latent, per_cell = int(meta["latent_dim"]), int(meta["records_per_cell"])
            if list(encoding.roles.order) != list(meta["columns"]):
                raise ValueError("its columns are not its encoding's")
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
            raise DamagedBundleError(
                f"{directory} is not a usable history model ({type(err).__name__}: "
                f"{str(err)[:160]}); {REEXPORT}"
            ) from None
        generator = load_generator(directory / GENERATOR_FILE)
        return cls(
            generator, encoding, schema, shared, str(meta["entity_prefix"]),
            float(meta["rare_share"]), latent, per_cell, origin=str(directory),
            privacy=meta.get("privacy"),
        )  # fmt: skip


def _non_decreasing(times: pd.Series, history: np.ndarray) -> pd.Series:
    """Timestamps made non-decreasing within each history (a zone's skipped hour moves a wall
    time forward, which could pass the next one): each is at least the one before it."""
    if not len(times) or not pd.api.types.is_datetime64_any_dtype(times):
        return times
    zone = getattr(times.dt, "tz", None)
    utc = times.dt.tz_convert("UTC").dt.tz_localize(None) if zone is not None else times
    ns = utc.to_numpy("datetime64[ns]").astype(np.int64)
    ns = pd.Series(ns).groupby(history).cummax().to_numpy()
    fixed = pd.Series(pd.to_datetime(ns, unit="ns"))
    return fixed.dt.tz_localize("UTC").dt.tz_convert(zone) if zone is not None else fixed


def load_bundle(directory: Path) -> HistorySynthesizer | Synthesizer:
    """The model in a bundle folder: a history model (``data.time``) or a row synthesizer."""
    if is_history_bundle(directory):
        return HistorySynthesizer.load(directory)
    return Synthesizer.load(directory)
