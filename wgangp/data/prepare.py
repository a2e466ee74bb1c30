"""The data a run trains and is judged on: load -> schema -> validate -> split, as one call, for
every table (Kaggle's credit-card file, its simulated stand-in, a user's own table).

Training and ``python -m wgangp.evaluate`` both go through :func:`prepare_data`, so an evaluation
rebuilds exactly the split its run trained on (same file, same ``data.*`` settings, same seed),
with every group of identical rows in one split (:mod:`wgangp.data.split`).
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from wgangp.config import DataConfig
from wgangp.data.entities import INFERRED_ENTITY, row_entities
from wgangp.data.private_table import PrivateReading, check_entity_cap, undeclared_table
from wgangp.data.read.big_tables import TableRead
from wgangp.data.read.source import LoadedTable, load_table
from wgangp.data.row_subset import RowBudget, Splits
from wgangp.data.schema.description_votes import ReleasedDescription
from wgangp.data.schema.inference import infer_table
from wgangp.data.schema.review import ambiguities, require_unambiguous
from wgangp.data.schema.table_schema import RARE, TableSchema
from wgangp.data.schema.validation import canonical, label_counts, validate_table
from wgangp.data.split import Split, stratified_split
from wgangp.errors import DataError

log = logging.getLogger("wgangp.data")


@dataclass
class PreparedData:
    """The validated table's three splits, in canonical form (:mod:`wgangp.data.schema.validation`),
    its schema, and where it came from."""

    provenance: str  # "file" | "kaggle" | "simulated" | "dataframe"
    origin: str  # the file read, or "simulated(seed=..., rows=...)"
    #: The table's name in run names and MLflow (the file's stem, or simulated).
    name: str
    schema: TableSchema
    train: pd.DataFrame
    val: pd.DataFrame
    test: pd.DataFrame
    #: Rows that repeat an earlier row exactly (of them, rare-class rows); each is in its
    #: original's split.
    duplicate_rows: int = 0
    duplicate_rare: int = 0
    #: :func:`~wgangp.data.digest.table_digest` of the validated table before the split.
    digest: str = ""
    #: Whether the schema was inferred from the table (not shipped, not ``data.schema``).
    inferred: bool = False
    #: Each split's rows that fits use (the subset of the rest, every rare-class row) and that
    #: scores use (the samples of both classes), :mod:`wgangp.data.row_subset`; None: the
    #: splits themselves (no row left out).
    fit_subsets: Splits | None = None
    score_subsets: Splits | None = None
    #: The sample's sizes (``data.rest_subset``, ``data.rare_subset``) and seed.
    budget: RowBudget | None = None
    #: How the table was read: rows of each class in the files and kept (``data.max_rows``).
    read: TableRead | None = None
    #: ``data.entity``: the column (kept beside the schema's as integer codes) whose rows belong
    #: to one customer, else :data:`~wgangp.data.entities.INFERRED_ENTITY` when an inferred
    #: schema's identifier columns name the customers; None: each row is its own entity,
    #: identical rows counting once.
    entity: str | None = None
    #: Under ``privacy.epsilon`` with no declared schema: the released description and the DP
    #: releases preparing made (votes, selections), for the run's accountant; the schema is then
    #: the released one already (:mod:`wgangp.data.private_table`).
    description: ReleasedDescription | None = None
    releases: tuple = ()

    @property
    def fit_rows(self) -> Splits:
        """The rows fits use (and privacy's distances): each split's rows in the subset of the
        rest (``data.rest_subset``) and every rare-class row; the splits when under it."""
        return self.fit_subsets or Splits(self.train, self.val, self.test)

    @property
    def score_rows(self) -> Splits:
        """The rows scores compare against: each split's rows in the subsets of the rest and
        of the rare class (``data.rare_subset``); :attr:`fit_rows` when under the latter."""
        return self.score_subsets or self.fit_rows

    @property
    def features(self) -> list[str]:
        """The feature columns, in the table's order (every column but the label)."""
        return [column.name for column in self.schema.features]

    def classes(self, frame: pd.DataFrame) -> np.ndarray:
        """Each row's class (1: the rare class, the one to synthesize; 0: the rest)."""
        return self.schema.classes(frame[self.schema.label])

    def entities(self, frame: pd.DataFrame) -> np.ndarray:
        """Each row's entity (:mod:`wgangp.data.entities`): what every privacy rule counts."""
        return row_entities(frame, self.schema.names, self.entity)

    def rare(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The rows of ``frame`` of the rare class, with a fresh index."""
        return frame[self.classes(frame) == RARE].reset_index(drop=True)

    @property
    def rare_rows(self) -> str:
        """How the log counts the rare class's rows: ``with Status=bad``."""
        return f"with {self.schema.class_names[RARE]}"

    def describe(self) -> str:
        rare = f"{int(self.classes(self.train).sum())} {self.rare_rows}"
        return (
            f"{self.provenance} ({self.origin}): train {len(self.train)} rows ({rare}), "
            f"val {len(self.val)}, test {len(self.test)}"
        )

    def describe_subsets(self) -> list[str]:
        """What fits and scores use where it is not every row: a log line per subset."""
        lines = []
        for cls, parts, key, use in (
            (0, self.fit_subsets, "rest_subset", "fits and scores use"),
            (RARE, self.score_subsets, "rare_subset", "scores use"),
        ):
            if parts is None or self.budget is None:
                continue
            counts = self._class_counts(parts, cls)
            total = sum(self._class_counts(Splits(self.train, self.val, self.test), cls))
            size = self.budget.rest if cls != RARE else self.budget.rare
            if sum(counts) == total:
                continue
            named = zip(("train", "val", "test"), counts, strict=True)
            shown = ", ".join(f"{name} {count}" for name, count in named)
            lines.append(
                f"{use} a uniform subset of {size} of the {total} rows with "
                f"{self.schema.class_names[cls]} ({shown}; data.{key}, seed {self.budget.seed})"
                + ("; fits use every one" if cls == RARE else "")
            )
        return lines

    def _class_counts(self, parts: Splits, cls: int) -> list[int]:
        return [int((self.classes(p) == cls).sum()) for p in (parts.train, parts.val, parts.test)]

    def with_validation_rows(self) -> PreparedData:
        """The split a refit trains on (``trainer.refit``): training rows then validation rows,
        no validation rows left (the quality loop has used them), the same test rows."""
        train = pd.concat([self.train, self.val], ignore_index=True)

        def joined(parts: Splits | None) -> Splits | None:
            if parts is None:
                return None
            both = pd.concat([parts.train, parts.val], ignore_index=True)
            return Splits(both, parts.val.iloc[:0], parts.test)

        return replace(
            self,
            train=train,
            val=self.val.iloc[:0],
            fit_subsets=joined(self.fit_subsets),
            score_subsets=joined(self.score_subsets),
        )

    def with_released_schema(self, schema: TableSchema) -> PreparedData:
        """The split read by ``schema``, a private run's released one
        (:mod:`wgangp.data.schema.released`): in every part, a categorical's value it no longer
        lists is its ``other`` level."""
        recoded = [c for c in schema.features if c.kind == "categorical" and c.other is not None]

        def recode(frame: pd.DataFrame) -> pd.DataFrame:
            frame = frame.copy()
            for column in recoded:
                frame[column.name] = canonical(frame[column.name], column, self.origin).to_numpy()
            return frame

        def parts(splits: Splits | None) -> Splits | None:
            if splits is None:
                return None
            return Splits(recode(splits.train), recode(splits.val), recode(splits.test))

        return replace(
            self,
            schema=schema,
            train=recode(self.train),
            val=recode(self.val),
            test=recode(self.test),
            fit_subsets=parts(self.fit_subsets),
            score_subsets=parts(self.score_subsets),
        )

    def with_gaps_filled(self, fills: dict[str, object]) -> PreparedData:
        """Every part with the gaps of each column named in ``fills`` filled with its value (the
        transform's released fill of a column a private run released as not nullable)."""
        # Each fill in its column's canonical type (a level, a whole number, an instant).
        values = {
            name: canonical(pd.Series([value], dtype=object), self.schema.column(name), "fill")
            for name, value in fills.items()
        }

        def fill(frame: pd.DataFrame) -> pd.DataFrame:
            frame = frame.copy()
            for name, value in values.items():
                if frame[name].isna().any():
                    filled = frame[name].fillna(value.iloc[0])
                    frame[name] = filled.astype(value.dtype) if len(filled) else filled
            return frame

        def parts(splits: Splits | None) -> Splits | None:
            if splits is None:
                return None
            return Splits(fill(splits.train), fill(splits.val), fill(splits.test))

        return replace(
            self,
            train=fill(self.train),
            val=fill(self.val),
            test=fill(self.test),
            fit_subsets=parts(self.fit_subsets),
            score_subsets=parts(self.score_subsets),
        )

    def describe_duplicates(self) -> str:
        return (
            f"{self.duplicate_rows} row(s) repeat an earlier row exactly ({self.duplicate_rare} "
            f"of them {self.rare_rows}); each copy is in the same split as its original"
        )


def prepare_data(
    data_cfg: DataConfig,
    *,
    seed: int,
    launch_dir: Path,
    frame: pd.DataFrame | None = None,
    reading: PrivateReading | None = None,
) -> PreparedData:
    """Load the configured table (relative paths from ``launch_dir``; ``frame``, a DataFrame
    given in Python, instead of ``data.path``), give it its schema, validate it, split it.

    Each class needs ``data.min_rows_per_class`` rows (validation), and distinct rows enough for
    every split (the split's own check, :func:`~wgangp.data.split.rows_needed`); each shortfall is
    one line with the number really needed.

    ``reading`` (``privacy.epsilon``): each entity's part is drawn on its own (so one entity more
    or less moves no other between training and the held-out parts) and fits read every
    training row (a sample of a fixed size would depend on the others' count).
    """
    loaded = load_table(data_cfg, seed=seed, launch_dir=launch_dir, frame=frame)
    if reading is not None:
        check_entity_cap(loaded, data_cfg)
    if reading is not None and loaded.schema is None:
        table = undeclared_table(loaded, data_cfg, seed, reading)
        return _from_split(
            (loaded.provenance, loaded.origin, loaded.name, loaded.read),
            table.schema,
            table.split,
            table.classes(),
            data_cfg,
            seed,
            digest=table_digest(loaded.frame),
            inferred=True,
            every_row_fits=True,
            description=table.description,
            releases=tuple(table.events),
            entity=data_cfg.entity,
        )
    schema, frame, inferred = checked_table(loaded, data_cfg)
    assert frame is not None  # validated: no review asked
    entity = INFERRED_ENTITY if INFERRED_ENTITY in frame.columns else data_cfg.entity
    provenance, origin, name, read = loaded.provenance, loaded.origin, loaded.name, loaded.read
    del loaded  # the rows as read: only their canonical form goes on
    classes = schema.classes(frame[schema.label])
    digest = table_digest(frame)
    split = stratified_split(
        frame,
        classes,
        schema.class_names,
        val_fraction=data_cfg.val_fraction,
        test_fraction=data_cfg.test_fraction,
        seed=seed,
        source=origin,
        columns=schema.names,
        entities=None if entity is None else frame[entity].to_numpy(),
        entity=entity,
        independent=reading is not None,
    )
    del frame
    prepared = _from_split(
        (provenance, origin, name, read),
        schema,
        split,
        classes,
        data_cfg,
        seed,
        digest=digest,
        inferred=inferred,
        every_row_fits=reading is not None,
        entity=entity,
    )
    for line in prepared.describe_subsets():
        log.info("data: %s", line)
    return prepared


def _from_split(
    source: tuple[str, str, str, TableRead | None],
    schema: TableSchema,
    split: Split,
    classes: np.ndarray,
    data_cfg: DataConfig,
    seed: int,
    *,
    digest: str,
    inferred: bool,
    every_row_fits: bool,
    description: ReleasedDescription | None = None,
    releases: tuple = (),
    entity: str | None = None,
) -> PreparedData:
    """The prepared data of ``split`` (``classes``: the table's rows', before the split), with
    the rows fits and scores use; ``source``: provenance, origin, name and how it was read."""
    provenance, origin, name, read = source
    budget = RowBudget(data_cfg.rest_subset, data_cfg.rare_subset, seed)
    fit_subsets, score_subsets = budget.subsets(split, classes, every_row_fits=every_row_fits)
    return PreparedData(
        provenance,
        origin,
        name,
        schema,
        split.train,
        split.val,
        split.test,
        duplicate_rows=split.duplicate_rows,
        duplicate_rare=split.duplicate_rare,
        digest=digest,
        inferred=inferred,
        fit_subsets=fit_subsets,
        score_subsets=score_subsets,
        budget=budget,
        read=read,
        entity=entity,
        description=description,
        releases=releases,
    )


def checked_table(
    loaded: LoadedTable, data_cfg: DataConfig, review: list[str] | None = None
) -> tuple[TableSchema, pd.DataFrame | None, bool]:
    """The first half of :func:`prepare_data`, which ``python -m wgangp.schema`` runs too: the
    loaded table's schema, its rows validated against it into their canonical form, and whether
    the schema was inferred.

    The schema is the configured one (shipped or ``data.schema``,
    :func:`~wgangp.data.read.source.configured_schema`), with the table's own label counts (an
    edited file's may be another table's, a shipped one has none); else it is inferred from the
    rows, and a column that needs a person's decision is refused in one line. With ``review``
    (the schema command, printing an inferred schema for a person to edit), those lines are
    listed there instead, and the rows are not validated (None). An inferred schema whose
    identifier columns name customers (``data.entity`` unset) keeps them beside the rows as
    :data:`~wgangp.data.entities.INFERRED_ENTITY`'s codes."""
    # A capped table's least frequent value may no longer be the table's: the reader's count.
    positive, header, origin = loaded.positive, loaded.header, loaded.origin
    schema, inferred = loaded.schema, loaded.schema is None
    customers = None
    if schema is None:
        chosen = data_cfg.positive if data_cfg.positive is not None else positive
        inference = infer_table(
            loaded.frame, data_cfg.label, chosen, source=origin, entity=data_cfg.entity
        )
        schema, noted = inference.schema, inference.lines(origin)
        if review is not None:
            review += noted + ambiguities(loaded.frame, schema, source=origin)
            return schema, None, True
        for line in noted:
            log.warning("%s", line)
        require_unambiguous(loaded.frame, schema, source=origin)
        customers = inference.customers
    read = loaded.read
    if read is not None and (read.capped or read.files > 1):
        log.info("data: %s", read.describe(origin, f"with {schema.class_names[RARE]}"))
    frame = validate_table(
        loaded.frame,
        schema,
        source=origin,
        min_rows_per_class=data_cfg.min_rows_per_class,
        header=header,
        entity=data_cfg.entity,
    )
    if not inferred:
        counts = label_counts(frame[schema.label], schema)
        schema = replace(schema, label_counts=counts, rows=len(frame))
    if customers is not None and data_cfg.entity is None and INFERRED_ENTITY not in schema.names:
        # What inference counted, every later rule counts: one customer's 8 rows are one.
        frame[INFERRED_ENTITY] = customers.codes
    return schema, frame, inferred


def check_batch_fits(data: PreparedData, batch_size: int) -> None:
    """Fewer training rows than a batch would make every batch repeat rows: refuse it.

    The sampler draws with replacement (rare rows are always fewer than a batch: that is the
    point of class balancing), but a table smaller than one batch is almost surely the wrong
    file or a wrong ``trainer.batch_size``.
    """
    rows = len(data.train)
    if rows < batch_size:
        raise DataError(
            f"{data.origin}: the training split has {rows} rows, fewer than one batch "
            f"(trainer.batch_size={batch_size}); use a larger table or set "
            f"trainer.batch_size={max(2, rows // 2)}"
        )


def table_digest(frame: pd.DataFrame) -> str:
    """16 hex digits over the column names and every cell, in order (the index is ignored)."""
    sha = hashlib.sha256("\x1f".join(map(str, frame.columns)).encode())
    sha.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    return sha.hexdigest()[:16]
