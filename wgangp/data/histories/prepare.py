"""The data a history run trains and is judged on: load -> shared ids aside -> schema -> validate ->
the columns' roles -> split by entity, as one call.

The row flow of :func:`wgangp.data.prepare.prepare_data` with a history table's differences: the
read keeps every entity with a rare-class row and at most ``data.max_entities`` of the others
(never a cap by rows, which would cut histories); the shared-id columns
(:mod:`.roles`) leave the table before its schema is inferred, so none of their values can ship,
and rejoin the validated rows as integer codes; every split holds whole entities, stratified by
whether an entity has a rare-class row (:func:`~wgangp.data.split.stratified_split`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from wgangp.config import DataConfig
from wgangp.data.entities import entity_codes
from wgangp.data.histories.roles import (
    HistoryRoles,
    attribute_columns,
    check_time_column,
    check_time_kind,
    free_prefix,
    shared_columns,
)
from wgangp.data.histories.windows import Windows, cut_windows
from wgangp.data.prepare import PreparedData, checked_table, table_digest
from wgangp.data.read.source import load_table
from wgangp.data.schema.cells import no_such_column
from wgangp.data.split import stratified_split
from wgangp.errors import DataError

log = logging.getLogger("wgangp.data")


@dataclass
class HistoryData:
    """A history table split by entity: ``rows`` (its frames hold the schema's columns, the
    entity's codes and each shared column's codes) and the columns' ``roles``."""

    rows: PreparedData
    roles: HistoryRoles
    #: For the entity and each shared column, a prefix no real value starts with.
    prefixes: dict[str, str]

    def windows(self, part: str, max_length: int) -> Windows:
        """The windows of a split's entities (``train``, ``val``, ``test``)."""
        frame = getattr(self.rows, part)
        return cut_windows(
            frame,
            entity=self.roles.entity,
            time_column=self.rows.schema.column(self.roles.time),
            row_classes=self.rows.classes(frame),
            max_length=max_length,
        )

    def describe(self) -> str:
        parts = {"train": self.rows.train, "val": self.rows.val, "test": self.rows.test}
        entity = self.roles.entity
        counts = ", ".join(f"{name} {frame[entity].nunique()}" for name, frame in parts.items())
        return (
            f"{self.rows.provenance} ({self.rows.origin}): entities {counts}; attributes "
            f"{list(self.roles.attributes)}, records {list(self.roles.records)}, shared ids "
            f"{list(self.roles.shared)}"
        )


def prepare_histories(
    data_cfg: DataConfig, *, seed: int, launch_dir: Path, frame: pd.DataFrame | None = None
) -> HistoryData:
    """Load the configured table (or ``frame``) as histories of ``data.entity`` ordered by
    ``data.time`` (module doc); each problem one line."""
    entity, time = str(data_cfg.entity), str(data_cfg.time)
    loaded = load_table(data_cfg, seed=seed, launch_dir=launch_dir, frame=frame)
    source, table = loaded.origin, loaded.frame
    names = [str(name) for name in table.columns]
    if entity not in set(names):
        raise DataError(f"{source}: data.entity={entity}: {no_such_column(entity, names)}")
    check_time_column(table, time, source)
    owners = entity_codes(table[entity], entity, source)
    excluded = (entity, time, data_cfg.label)
    shared = shared_columns(table, owners, excluded, data_cfg.shared)
    if shared:
        log.info("%s: shared ids (new pseudonymous ids in samples): %s", source, ", ".join(shared))
    kept_aside = {name: pd.factorize(table[name])[0] for name in shared}
    prefixes = {name: free_prefix(table[name], f"syn-{name}-") for name in (entity, *shared)}
    loaded = replace(loaded, frame=table.drop(columns=list(shared)))
    del table
    schema, rows, inferred = checked_table(loaded, data_cfg)
    assert rows is not None  # validated: only the schema command's review leaves it None
    check_time_kind(schema, time, loaded.frame, source)
    for name, codes in kept_aside.items():
        rows[name] = codes
    candidates = [c.name for c in schema.features if c.name != time]
    attributes = attribute_columns(rows, rows[entity].to_numpy(), candidates)
    keep = {*schema.names, entity, *shared}
    roles = HistoryRoles(
        entity=entity,
        time=time,
        label=schema.label,
        attributes=attributes,
        records=tuple(name for name in candidates if name not in set(attributes)),
        shared=shared,
        order=tuple(name for name in names if name in keep),
    )
    classes = schema.classes(rows[schema.label])
    split = stratified_split(
        rows,
        classes,
        schema.class_names,
        val_fraction=data_cfg.val_fraction,
        test_fraction=data_cfg.test_fraction,
        seed=seed,
        source=source,
        columns=schema.names,
        entities=rows[entity].to_numpy(),
        entity=entity,
    )
    prepared = PreparedData(
        loaded.provenance,
        source,
        loaded.name,
        schema,
        split.train,
        split.val,
        split.test,
        digest=table_digest(rows),
        inferred=inferred,
        read=loaded.read,
        entity=entity,
    )
    return HistoryData(prepared, roles, prefixes)
