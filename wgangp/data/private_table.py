"""A table under ``privacy.epsilon`` with no declared schema: split, described and read so that no
fact of what ships hangs on one entity beyond the budget.

Without privacy, a table's schema is inferred from every row (held-out rows too) and the split
follows it. Here, in order:

1. each row's class is its label cell against ``data.positive`` (required: public), by the one
   label rule; each row's entity is ``data.entity``'s, else its group of identical rows;
2. the split: each entity's part is a hash of its own rows (every column of the header, a public
   list) and the seed (:func:`~wgangp.data.split.independent_parts`);
3. the description: the training rows' cells read alone (:mod:`.schema.cell_reading`) and voted
   on by entity (:mod:`.schema.description_votes`); a text column's levels and the label's values
   by thresholded selection (:mod:`.schema.released`), both at :class:`DescriptionBudget`'s noise;
4. every part read by the released schema: a cell of another kind than its column's is a gap, a
   fraction in an integer column rounds, a level not released is ``other``. A gap in a column
   released as not nullable stays a gap here: the transform's released fill fills it
   (:meth:`~wgangp.data.prepare.PreparedData.with_gaps_filled`).

:func:`read_by_schema` reads a table by a schema a private run released (its evaluation):
steps 1, 2 and 4.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import dp_accounting
import numpy as np
import pandas as pd

from wgangp.config import DataConfig, PrivacyConfig
from wgangp.data.entities import entity_codes, identical_row_groups
from wgangp.data.read.source import LoadedTable
from wgangp.data.schema.cell_reading import BOOLEAN, DATE, NUMBER, CellReading, read_cells
from wgangp.data.schema.cells import find_value, label_value, no_such_column
from wgangp.data.schema.column_codes import from_seconds
from wgangp.data.schema.description_votes import (
    ColumnDescription,
    ReleasedDescription,
    release_description,
)
from wgangp.data.schema.released import released_schema
from wgangp.data.schema.table_schema import RARE, ColumnSchema, TableSchema
from wgangp.data.split import Split, stratified_split
from wgangp.errors import ConfigError, DataError
from wgangp.privacy.accountant import Budget
from wgangp.privacy.mechanisms import threshold_for
from wgangp.privacy.plan import (
    SELECTION_DELTA_SHARE,
    privacy_delta,
    statistics_noise,
    undeclared_releases,
)

#: A boolean column's levels: public, whatever its cells hold.
BOOLEAN_LEVELS = (False, True)


@dataclass
class DescriptionBudget:
    """What releasing a description costs and how: each column's votes and each selection's noise
    multiplier, the selections' threshold, the k-entity rule, the secret generator."""

    noise_multiplier: float
    threshold: float
    min_entities: int
    rng: np.random.Generator


@dataclass(frozen=True)
class PrivateReading:
    """How :func:`~wgangp.data.prepare.prepare_data` reads a table under ``privacy.epsilon``.
    Each entity's part is drawn on its own and fits read every training row. A table with a
    declared schema (Kaggle's, or ``data.schema``: public) is validated by it; one without is
    read cell by cell and its description released (module doc), at the noise ``privacy`` sets
    for it, with ``rng`` (secret: :mod:`wgangp.privacy.randomness`) and the k-entity rule; or,
    for a private run's evaluation, read by the schema it ``released``."""

    privacy: PrivacyConfig
    min_entities: int
    rng: np.random.Generator | None = None
    released: TableSchema | None = None


@dataclass
class PrivateTable:
    """The three parts in canonical form under the released schema, the description's release
    and every release's event (votes, then selections): none when read by a released schema."""

    split: Split
    schema: TableSchema
    description: ReleasedDescription | None = None
    events: list[dp_accounting.DpEvent] = field(default_factory=list)

    def classes(self) -> np.ndarray:
        """Each row's class, in the table's row order (as the split numbered them)."""
        classes = np.zeros(sum(len(rows) for rows in self.split.rows.values()), np.int64)
        for part, rows in self.split.rows.items():
            classes[rows] = self.schema.classes(getattr(self.split, part)[self.schema.label])
        return classes


def undeclared_table(
    loaded: LoadedTable, data_cfg: DataConfig, seed: int, reading: PrivateReading
) -> PrivateTable:
    """A table with no declared schema under ``privacy.epsilon``: its description released, or
    the released one read (:class:`PrivateReading`)."""
    check_private_label(loaded.frame, data_cfg.label, data_cfg.positive, loaded.origin)
    where: dict[str, Any] = {
        "entity": data_cfg.entity,
        "val_fraction": data_cfg.val_fraction,
        "test_fraction": data_cfg.test_fraction,
        "seed": seed,
        "source": loaded.origin,
    }
    if reading.released is not None:
        split = split_by_schema(loaded.frame, reading.released, **where)
        return PrivateTable(split, reading.released)
    budget = description_budget(reading, len(loaded.frame.columns) - 1 - bool(data_cfg.entity))
    return release_table(
        loaded.frame, label=data_cfg.label, positive=data_cfg.positive, budget=budget, **where
    )


def release_table(
    frame: pd.DataFrame,
    *,
    label: str,
    positive: object,
    entity: str | None,
    val_fraction: float,
    test_fraction: float,
    seed: int,
    source: str,
    budget: DescriptionBudget,
) -> PrivateTable:
    """Steps 1 to 4 of the module doc on the table as read."""
    features = _feature_names(frame, label, entity, source)
    frame = _with_entity_codes(frame, entity, source)
    split = _split(frame, label, positive, entity, val_fraction, test_fraction, seed, source)
    train = split.train
    owners = _owners(train, entity)
    readings = {name: read_cells(train[name]) for name in features}
    description = release_description(readings, owners, budget.noise_multiplier, budget.rng)
    columns = draft_columns(description.kept(), readings)
    if not columns:
        raise _nothing_released(source, description.threshold)
    label_column = ColumnSchema(name=label, kind="categorical", levels=_label_levels(train[label]))
    chosen = find_value(label_column.levels or (), positive)
    if chosen is None:
        raise DataError(
            f"{source}: data.positive={positive} is not a value of label {label} in the "
            "training rows; name one of its values"
        )
    draft = TableSchema(columns=(*columns, label_column), label=label, positive=chosen)
    schema, events, _ = released_schema(
        draft,
        _canonical(train, readings, draft, entity),
        owners,
        inferred=True,
        noise_multiplier=budget.noise_multiplier,
        threshold=budget.threshold,
        min_entities=budget.min_entities,
        rng=budget.rng,
    )
    schema = _without_empty_columns(schema, source, budget.threshold)
    split = _read_parts(split, schema, entity)
    return PrivateTable(split, schema, description, [description.event, *events])


def split_by_schema(
    frame: pd.DataFrame,
    schema: TableSchema,
    *,
    entity: str | None,
    val_fraction: float,
    test_fraction: float,
    seed: int,
    source: str,
) -> Split:
    """A table split as a private run split it (steps 1 and 2) and read by its released
    ``schema`` (step 4): a private run's evaluation, on the rows it held out."""
    frame = _with_entity_codes(frame, entity, source)
    split = _split(
        frame, schema.label, schema.positive, entity, val_fraction, test_fraction, seed, source
    )
    return _read_parts(split, schema, entity)


def _read_parts(split: Split, schema: TableSchema, entity: str | None) -> Split:
    """Every part of ``split`` read by ``schema`` (step 4)."""
    parts = {
        name: read_by_schema(getattr(split, name), schema, entity)
        for name in ("train", "val", "test")
    }
    return replace(split, train=parts["train"], val=parts["val"], test=parts["test"])


def read_by_schema(frame: pd.DataFrame, schema: TableSchema, entity: str | None) -> pd.DataFrame:
    """``frame``'s rows read by ``schema``, a released one (module doc, step 4); the label by the
    label rule, the entity column's codes kept beside."""
    missing = [c.name for c in schema.features if c.name not in frame]
    if missing:
        raise DataError(
            f"column(s) {', '.join(missing)} of the released schema are not in the table; "
            "evaluate on the table the run trained on"
        )
    readings = {c.name: read_cells(frame[c.name]) for c in schema.features}
    return _canonical(frame, readings, schema, entity)


def check_private_label(frame: pd.DataFrame, label: str, positive: object, source: str) -> None:
    """The label column exists and ``data.positive`` is given (one line each)."""
    names = [str(name) for name in frame.columns]
    if label not in set(names):
        raise DataError(f"{source}: label {no_such_column(label, names)}; set data.label=<column>")
    if positive is None:
        raise ConfigError(
            "privacy.epsilon needs data.positive (the class to synthesize): choosing the rarer "
            f"value of {label} would read its counts; set data.positive=<value>"
        )


def _feature_names(frame: pd.DataFrame, label: str, entity: str | None, source: str) -> list[str]:
    names = [str(name) for name in frame.columns]
    if entity is not None and entity not in set(names):
        raise DataError(f"{source}: data.entity={entity}: {no_such_column(entity, names)}")
    return [name for name in names if name not in {label, entity}]


def _with_entity_codes(frame: pd.DataFrame, entity: str | None, source: str) -> pd.DataFrame:
    """The table with ``data.entity``'s cells as integer codes (none of its values goes on)."""
    if entity is None:
        return frame
    return frame.assign(**{entity: entity_codes(frame[entity], entity, source)})


def _split(
    frame: pd.DataFrame,
    label: str,
    positive: object,
    entity: str | None,
    val_fraction: float,
    test_fraction: float,
    seed: int,
    source: str,
) -> Split:
    """Steps 1 and 2: each row's class and entity, each entity's part drawn on its own rows."""
    wanted = label_value(positive)
    classes = np.fromiter(
        (label_value(v) == wanted for v in frame[label].to_numpy(object)), bool, len(frame)
    ).astype(np.int64)
    names = ("the rest", f"{label}={positive}")
    return stratified_split(
        frame,
        classes,
        (names[0], names[RARE]),
        val_fraction=val_fraction,
        test_fraction=test_fraction,
        seed=seed,
        source=source,
        entities=None if entity is None else frame[entity].to_numpy(np.int64),
        entity=entity,
        independent=True,
    )


def _owners(frame: pd.DataFrame, entity: str | None) -> np.ndarray:
    """Each row's entity code: ``data.entity``'s codes, else its group of identical rows."""
    if entity is not None:
        return frame[entity].to_numpy(np.int64)
    return identical_row_groups(frame)


def draft_columns(
    kept: Iterable[ColumnDescription], readings: dict[str, CellReading]
) -> list[ColumnSchema]:
    """The released kinds as schema columns with their draft levels. A text column whose every
    level is or holds an identifier has none: selection over no level leaves only ``other``,
    which :func:`_without_empty_columns` drops, so it is dropped here (a schema cannot hold a
    categorical without levels: the run failed on it)."""
    columns = []
    for described in kept:
        reading = readings[described.name]
        levels = (
            _draft_levels(reading, described.boolean) if described.kind == "categorical" else None
        )
        if levels == ():
            continue
        columns.append(
            ColumnSchema(
                name=described.name,
                kind=described.kind,  # type: ignore[arg-type]  # a voted kind is one of KINDS
                nullable=described.nullable,
                zone=reading.zone if described.kind == "datetime" else None,
                levels=levels,
            )
        )
    return columns


def _draft_levels(reading: CellReading, boolean: bool) -> tuple:
    """A categorical column's levels before selection: booleans' two, or every level text the
    training rows hold but those that are or hold an identifier (a fixed rule on the text
    alone: such cells read as ``other``); selection keeps those enough entities hold."""
    if boolean:
        return BOOLEAN_LEVELS
    texts = {t for t, hit in zip(reading.levels, reading.identifier, strict=True) if not hit}
    return tuple(sorted(t for t in texts if t is not None))


def _label_levels(values: pd.Series) -> tuple:
    levels = {label_value(v) for v in values.to_numpy(object) if not _gap(v)}
    return tuple(sorted(levels, key=lambda v: (type(v).__name__ != "str", str(v))))


def _gap(value: object) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def _canonical(
    frame: pd.DataFrame, readings: dict[str, CellReading], schema: TableSchema, entity: str | None
) -> pd.DataFrame:
    """Each feature read by its column's kind (module doc, step 4), the label's values by the
    label rule, the entity's codes as they are."""
    columns: dict[str, pd.Series] = {}
    for column in schema.features:
        columns[column.name] = _read_column(readings[column.name], column)
    label = schema.label
    columns[label] = pd.Series([label_value(v) for v in frame[label].to_numpy(object)])
    if entity is not None:
        columns[entity] = pd.Series(frame[entity].to_numpy(np.int64))
    return pd.DataFrame(columns)


def _read_column(reading: CellReading, column: ColumnSchema) -> pd.Series:
    """One column's cells as its released kind's canonical type; cells of other kinds gaps."""
    kinds = reading.kinds
    if column.kind == "categorical":
        levels = column.levels or ()
        if levels == BOOLEAN_LEVELS:
            out = pd.Series(reading.booleans, dtype=object)
            return out.where(kinds == BOOLEAN, None)
        listed = set(levels)
        other = column.other
        values = [
            None if text is None else (text if text in listed or other is None else other)
            for text in reading.levels
        ]
        return pd.Series(values, dtype=object)
    if column.kind == "datetime":
        seconds = reading.dates.astype("datetime64[ns]").astype(np.int64) / 1e9
        dates = from_seconds(np.where(kinds == DATE, seconds, 0.0), column.zone)
        return dates.mask(kinds != DATE)
    numbers = np.where(kinds == NUMBER, reading.numbers, np.nan)
    if column.kind == "integer":
        gaps = np.isnan(numbers)
        whole = np.round(np.where(gaps, 0.0, numbers)).astype(np.int64)
        if gaps.any():
            return pd.Series(pd.arrays.IntegerArray(whole, gaps))
        return pd.Series(whole)
    return pd.Series(numbers)


def _without_empty_columns(schema: TableSchema, source: str, threshold: float) -> TableSchema:
    """A text column whose selection released no level holds only ``other``: it tells nothing,
    so it is dropped (post-processing); when none is left, one line."""
    kept = tuple(
        c
        for c in schema.columns
        if c.name == schema.label or not (c.kind == "categorical" and c.levels == (c.other,))
    )
    if len(kept) < 2:
        raise _nothing_released(source, threshold)
    return replace(schema, columns=kept)


def _nothing_released(source: str, threshold: float) -> DataError:
    return DataError(
        f"{source}: under privacy.epsilon no column is released as a feature (each holds "
        f"identifiers, or fewer than {threshold:.0f} entities hold a value: the noise's "
        "threshold); declare the features in data.schema, or use a larger table"
    )


def check_entity_cap(loaded: LoadedTable, data_cfg: DataConfig) -> None:
    """Under ``privacy.epsilon`` a table is never cut by rows: a row cap lets one customer's rows
    evict others' (unbounded influence). Over ``data.max_rows`` without ``data.entity_share``:
    one line."""
    read = loaded.read
    if read is None or not read.capped or read.entity_share is not None:
        return
    raise DataError(
        f"{loaded.origin}: the table has more than data.max_rows={data_cfg.max_rows} rows besides "
        "the class to synthesize, and under privacy.epsilon a cap by rows would let one "
        "customer's rows evict others'; set data.entity_share=<share> to keep every customer "
        "with that class and that share of the others, each whole (by a hash of its id), or "
        "raise data.max_rows"
    )


def description_budget(reading: PrivateReading, features: int) -> DescriptionBudget:
    """The noise of an undeclared table's description, fixed by the config and the header
    alone: as noisy as each of the most releases such a table could need
    (:func:`~wgangp.privacy.plan.undeclared_releases`), its selections' threshold from their
    fixed share of delta."""
    privacy = reading.privacy
    assert privacy.epsilon is not None and reading.rng is not None
    delta = privacy_delta(privacy.delta)
    selections = features + 1
    selection_delta = SELECTION_DELTA_SHARE * delta
    accounted = Budget(privacy.epsilon, delta - selection_delta)
    sigma = statistics_noise(accounted, privacy.statistics_share, undeclared_releases(features))
    threshold = threshold_for(
        sigma, selection_delta / selections, min_entities=reading.min_entities
    )
    return DescriptionBudget(sigma, float(threshold), reading.min_entities, reading.rng)
