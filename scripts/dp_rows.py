"""The rows of the DP figures' runs (``scripts.dp_figures``): a table as read (what wgangp trains
on) and validated (what is scored), and each seed's parts: the 70% of each class every method
trains on (``scripts.dp_scores``' splits, the peers' too), and the rows it is judged on."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from scripts.dp_scores import other_split, rare_split
from scripts.tables_benchmark.tables import TABLES, shared_data_dir

#: The tables this script knows: the two shared ones and the simulator's million rows.
TABLE_NAMES = ("credit_data", "default_islr", "simulated_million")
SIMULATED_ROWS, SIMULATED_SEED = 1_000_000, 0
#: The share of the training rare rows ``--judge-on val`` scores against.
VAL_SHARE = 0.2


@dataclass
class Table:
    """A table's rows as read (what wgangp trains on), the same rows validated (what is scored),
    its schema, label and class, and the overrides its runs need."""

    name: str
    raw: pd.DataFrame
    clean: pd.DataFrame
    schema: object
    label: str
    positive: object
    overrides: tuple[str, ...] = ()

    @property
    def features(self) -> list[str]:
        return [column.name for column in self.schema.features]

    def rare_positions(self) -> np.ndarray:
        from wgangp.data.schema.table_schema import RARE

        classes = np.asarray(self.schema.classes(self.clean[self.schema.label]))
        return np.flatnonzero(classes == RARE)


def load_table(name: str, data: str | None) -> Table:
    """``name``'s rows: a shared table as dp_peers reads it, or the simulator's million rows."""
    from wgangp.data.read.table_reader import read_table
    from wgangp.data.schema.inference import infer_schema
    from wgangp.data.schema.validation import validate_table

    if name == "simulated_million":
        from wgangp.data.builtin.creditcard import HEADER, creditcard_schema
        from wgangp.data.builtin.simulated import simulate_creditcard

        raw = simulate_creditcard(n_rows=SIMULATED_ROWS, seed=SIMULATED_SEED)
        schema = creditcard_schema()
        source = f"simulated(seed={SIMULATED_SEED}, rows={SIMULATED_ROWS})"
        clean = validate_table(raw, schema, source=source, min_rows_per_class=1, header=HEADER)
        overrides = ("data.schema=creditcard",)
        return Table(name, raw, clean, schema, schema.label, schema.positive, overrides)
    spec = TABLES[name]
    path = spec.path(shared_data_dir(data))
    if not path.is_file():
        raise FileNotFoundError(f"no table at {path}: give --data the shared data folder")
    raw = read_table(path)
    schema = infer_schema(raw, spec.label, spec.positive, source=path.name)
    clean = validate_table(raw, schema, source=path.name, min_rows_per_class=1)
    assert len(clean) == len(raw), "validation keeps every row: rows are matched by position"
    return Table(name, raw.reset_index(drop=True), clean, schema, spec.label, spec.positive)


@dataclass
class Parts:
    """One seed's rows: what wgangp trains on (both classes' training rows, as read), the
    training rare rows (features, validated), the rare rows scored against, and the other
    class's training and judged rows (features, validated: utility's)."""

    frame: pd.DataFrame
    train: pd.DataFrame
    judged: pd.DataFrame
    train_other: pd.DataFrame
    judged_other: pd.DataFrame


def seed_parts(table: Table, seed: int, judge_on: str) -> Parts:
    """dp_scores' 70/30 splits of each class (every method trains on the same 70%); under
    ``val`` 20% of each class's 70% carved out (seeded) to be judged on instead, the held-out
    30% left unread."""
    positions = table.rare_positions()
    others = np.setdiff1d(np.arange(len(table.clean)), positions)
    parts = []
    for chosen, split in ((positions, rare_split), (others, other_split)):
        rows = table.clean.iloc[chosen][table.features].reset_index(drop=True)
        rows["_position"] = chosen
        train, held = split(rows, seed)  # the position carried along
        if judge_on == "val":
            order = np.random.default_rng((seed, 1)).permutation(len(train))
            n_val = int(round(VAL_SHARE * len(train)))
            held = train.iloc[order[:n_val]].reset_index(drop=True)
            train = train.iloc[order[n_val:]].reset_index(drop=True)
        parts.append((train, held))
    (train, judged), (train_other, judged_other) = parts
    keep = np.zeros(len(table.raw), bool)
    keep[train["_position"].to_numpy()] = True
    keep[train_other["_position"].to_numpy()] = True
    frame = table.raw.loc[keep].reset_index(drop=True)
    return Parts(
        frame, *(f.drop(columns="_position") for f in (train, judged, train_other, judged_other))
    )
