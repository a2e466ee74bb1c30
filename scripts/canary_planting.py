"""Where the audits' canaries go: written into the table so that the run's own split trains on
every member, the split read back from the run's own data preparation, and rows read as the
shipped schema reads them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from scripts.canaries import REPO, TABLE, row_keys

#: Rounds of swaps :func:`plant` tries before giving up.
PLACEMENT_ROUNDS = 20
#: Keys the audits set themselves; --set may not change them.
OWN_KEYS = ("data.path", "data.label", "data.positive", "seed", "tracking.uri", "name")


def check_extra(extra: Sequence[str]) -> None:
    """An audit's extra training overrides (``--set``): ValueError (or ConfigError) names one
    that is malformed, unknown, or one of the audit's own."""
    from wgangp.overrides import check_overrides

    for item in extra:
        key = item.split("=", 1)[0].lstrip("+~")
        if "=" not in item:
            raise ValueError(f"--set takes KEY=VALUE, got {item!r}")
        if key in OWN_KEYS:
            raise ValueError(f"--set {key} is the audit's own setting")
    check_overrides(list(extra))


def trainable(
    table: pd.DataFrame, candidates: pd.DataFrame, path: Path, cfg, copies: int
) -> np.ndarray:
    """Which candidates a private run's split (each entity's part drawn from its own rows and
    the seed, :func:`wgangp.data.split.independent_parts`) would put in training, written with
    ``copies`` rows each: a private run cannot be placed, so both audits draw IN among these
    (the part is a hash of the canary's rows: unrelated to how far it lies from anything)."""
    planted = candidates.loc[candidates.index.repeat(copies)].reset_index(drop=True)
    frame = pd.concat([table, planted], ignore_index=True)
    frame.to_csv(path, index=False)
    parts, _ = parts_of(frame, cfg, independent=True)
    return np.array(parts[len(table) :: copies]) == "train"


def audit_overrides(path: Path, seed: int, work: Path, extra: Sequence[str]) -> list[str]:
    """The run's overrides: the default model on ``path`` with the audit's bookkeeping."""
    return [
        f"data.path={path}",
        f"data.label={TABLE.label}",
        f"data.positive={TABLE.positive}",
        f"seed={seed}",
        "name=membership",
        f"tracking.uri=sqlite:///{work / 'mlflow.db'}",
        "tracking.experiment=membership-audit",
        f"trainer.checkpoint_dir={work / 'checkpoints' / f'seed{seed}'}",
        "trainer.progress=false",
        "evaluate.enabled=false",
        *extra,
    ]


def canonical(frame: pd.DataFrame, schema) -> pd.DataFrame:
    """Rows as the run reads them (the schema's canonical form)."""
    from wgangp.data.schema.validation import validate_table

    return validate_table(frame, schema, source="canaries", min_rows_per_class=0)


def released_view(frame: pd.DataFrame, schema, features: Sequence[str]) -> pd.DataFrame:
    """``frame``'s ``features`` as the shipped ``schema`` reads them: a categorical's value it does
    not list is its ``other`` level. A run under ``privacy.epsilon`` ships a released schema
    (``wgangp.data.schema.released``) that lists only the levels its noisy selection kept, and
    always an ``other``: its training rows, hence its generated ones, hold ``other`` for every
    value it dropped (on the credit table at epsilon 3, every canary's rare level). Gaps stay
    gaps (a released schema may call a column with a few gaps not nullable: the encoding then
    reads a gap as no level). Without privacy the shipped schema is the inferred one and this
    changes nothing."""
    from wgangp.data.schema.validation import canonical as canonical_cells

    out = frame.loc[:, list(features)].reset_index(drop=True)
    for column in schema.features:
        if column.kind == "categorical" and column.other is not None:
            values = out[column.name].astype(object)
            present = values.notna().to_numpy()
            read = values.copy()
            read[present] = canonical_cells(values[present], column, "rows").to_numpy()
            out[column.name] = read.to_numpy()
    return out


def parts_of(frame: pd.DataFrame, cfg, independent: bool | None = None) -> tuple[list[str], object]:
    """The split each row of ``frame`` (as written to ``cfg``'s data.path) lands in, by the
    run's own :func:`~wgangp.data.prepare.prepare_data` (``independent``: a private run's split
    whatever ``cfg`` says; None: ``cfg``'s); and the prepared data.

    A private run draws each entity's part from its raw rows before it releases any description
    of the table (secret noise the audit cannot replay), so its split is read here as a private
    run's evaluation reads it: by a given schema (the rows' inferred one), the parts unchanged."""
    from wgangp.config import to_config
    from wgangp.data.prepare import PrivateReading, prepare_data
    from wgangp.data.schema.inference import infer_schema

    config = to_config(cfg)
    private = None
    if config.privacy.enabled if independent is None else independent:
        public = infer_schema(frame, config.data.label, config.data.positive)
        private = PrivateReading(config.privacy, config.ship.min_atom_rows, released=public)
    data = prepare_data(config.data, seed=config.seed, launch_dir=REPO, reading=private)
    columns = data.schema.names
    part = {}
    for name in ("train", "val", "test"):
        part.update(dict.fromkeys(row_keys(getattr(data, name), columns), name))
    keys = row_keys(canonical(frame, data.schema), columns)
    return [part[key] for key in keys], data


def is_private(cfg) -> bool:
    """Whether ``cfg`` trains under ``privacy.epsilon``."""
    from wgangp.config import to_config

    return to_config(cfg).privacy.enabled


def plant(
    table: pd.DataFrame, canaries: pd.DataFrame, path: Path, cfg, seed: int, copies: int = 1
) -> tuple[pd.DataFrame, object]:
    """Write ``table`` with ``copies`` identical rows of each of ``canaries`` to ``path`` so that
    the run's split puts every canary in training, and return the written frame and the run's
    prepared data.

    The split permutes the rare class's groups of identical rows (a canary's copies are one
    group, one entity) in order of first appearance, by seed and group count alone: swapping a
    canary's first row, when its group landed outside training, with a real rare row (one of a
    kind) that landed inside swaps their places in that order. With one copy the parts follow;
    with more, the groups ahead of the training part shrink, the cuts may move, and the swaps
    repeat on whatever landed outside. Checked on the run's own split after writing. A private
    run's split draws each entity's part from its own rows: no place moves it, so its canaries
    must be :func:`trainable` ones (RuntimeError otherwise)."""
    planted = canaries.loc[canaries.index.repeat(copies)].reset_index(drop=True)
    frame = pd.concat([table, planted], ignore_index=True)
    n = len(table)
    rare = (table[TABLE.label].astype(str) == TABLE.positive).to_numpy()
    single = ~table.duplicated(keep=False).to_numpy()
    rng = np.random.default_rng([seed, 5])
    order = np.arange(len(frame))  # frame row i is written from row order[i]
    used: set[int] = set()
    for _ in range(PLACEMENT_ROUNDS):
        written = frame.iloc[order].reset_index(drop=True)
        written.to_csv(path, index=False)
        parts, data = parts_of(written, cfg)
        at = np.argsort(order)  # where each original row is written
        firsts = [
            int(at[n + i * copies : n + (i + 1) * copies].min()) for i in range(len(canaries))
        ]
        outside = [i for i in firsts if parts[i] != "train"]
        if not outside:
            return written, data
        if is_private(cfg):  # no place moves a private run's canary
            raise RuntimeError(f"{len(outside)} canaries a private run's split does not train on")
        train = np.array([parts[at[j]] == "train" for j in range(n)])
        donors = [j for j in np.flatnonzero(rare & single & train) if j not in used]
        chosen = rng.choice(donors, len(outside), replace=False)
        used.update(int(j) for j in chosen)
        for place, donor in zip(outside, chosen, strict=True):
            there = int(at[donor])
            order[place], order[there] = order[there], order[place]
            at[order[place]], at[order[there]] = place, there
    raise RuntimeError(
        f"canaries still outside training after {PLACEMENT_ROUNDS} rounds of placement"
    )
