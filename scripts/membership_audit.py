"""Membership inference on planted canaries: how much the shipped synthesizer gives away about
whether one rare-class row was in its training table.

What it measures. For each seed, 3K candidate canaries (``--canaries`` K, default 20) are built
from the shared credit table (``Status``, rare class ``bad``). Each starts from a different real
complete ``bad`` row (every number inside its column's 0.5th to 99.5th percentile among the
``bad`` rows); three of its number columns are moved into a rare end of that column among the
``bad`` rows (an observed value from the 0.5th to the 2nd percentile, or from the 98th to the
99.5th, an end kept when at most 3% of the rows lie that far out: a debt of 0 is no rare end),
and one categorical column is set to a level at most 5% of the ``bad`` rows hold (and at least
10 rows of the table, so the inferred schema keeps it). Every value exists in the table,
integers stay whole, no canary equals a real row or another, and the canaries together lift no
tail value to an atom (a value 5 rare rows share ships as itself; so one canary's value never
makes another's more likely). That last rule bounds K: on the credit table seeds 0 to 3 yield
138 to 145 candidates, so K = 46 at most (more fails in one line). The candidates are split at
random into K IN, K OUT and K FRESH, IN among those a private run's split would train on (there
an entity's part is a hash of its rows and the seed, unrelated to where the canary lies), so an
audit with ``privacy.epsilon`` and one without plant the same canaries. Each IN canary is
written ``--copies`` R times (default 1): R identical rows are one entity (the split, the
k-entity rules and differential privacy count identical rows once), a customer with R records,
as a transactions table holds; the networks without privacy train on every row. The table plus
the IN canaries is written to a work folder and the default model is trained on it in-process
(the config ``python -m wgangp.train`` would compose, with the table, its label and
``data.positive=bad`` given, the seed, a temporary MLflow store, no end-of-run evaluation, and
any ``--set`` overrides). The IN canaries are placed in the file so that the run's own split
puts every one of them in its training split (appended at the end, 3 to 6 of 20 would land in
validation or test on seeds 0 to 2, and be no members; a private run's split needs no placing);
the placement is checked on the run's split before training.

The attack. The shipped synthesizer draws M rare-class rows (M = the training split's rare
rows); a candidate's score is minus its distance to the nearest drawn row in the mixed-type
space of the near-copy figures (``wgangp.evaluation.privacy``: the table's encoding fitted on
the training rare rows, ``closest_records``). A high score guesses "member". Every row in that
space (candidates, drawn rows, SMOTE's rows and the training rare rows the scales are fitted
on) is read by the levels of the schema that ships in the bundle: under ``privacy.epsilon`` it
is the released schema, which lists only the levels its noisy selection kept and always an
``other`` level for the rest (``rare levels`` where ``other`` is itself a kept level), so a
candidate's level the run never released (on the credit table at epsilon 3, seeds 0 to 3,
``Home: ignore`` and ``Marital: widow`` or ``divorced``: every canary's) reads as that level,
as the run's own training rows read it. Without privacy the shipped schema is the inferred one
and nothing is recoded. Reported per seed and pooled over seeds (scores concatenated): the AUC
of IN against OUT, the advantage max_t (TPR - FPR) over every threshold, 95% bootstrap
intervals (IN and OUT resampled within each seed), a one-sided permutation p-value and the
null's 95th percentile (labels shuffled within each seed: what an audit of this size reads 1
time in 20 with nothing to find). The bootstrap interval of the advantage, a maximum over
thresholds, lies above 0 even for pure noise: read the advantage against the null. The same
statistics for OUT against FRESH (both never trained on) are one such draw of the noise, at
this K. The positive control: the same attack on as many rows of SMOTE(-NC) fitted on the same
training split (``scripts.tables_benchmark.baselines``; the same real rows, not the released
schema's view of them), a generator that puts rows on the segments between training rows, so
its rows sit next to the IN canaries: what the audit reads when the generator does leak
membership.

Run it (a seed takes about as long as its training run: 4 to 4.5 minutes for the default,
about 15 s at ``trainer.steps=500``, 5.5 to 7.5 minutes under ``privacy.epsilon`` with the
private experiment's settings, on the shared 2-core machine; seeds run one after another)::

    python -m scripts.membership_audit [--data DIR] [--seeds 0,1,2] [--canaries 20] \\
        [--copies 1] [--set key=value ...] [--out FILE] [--work DIR]

``--data``: the shared data folder (else ``$WGANGP_SHARED_DATA``, else ``../shared/data``).
``--set``: an extra training override, repeatable (``--set trainer.steps=500`` for a quicker,
weaker model). Under privacy, the private experiment's settings (conf/experiment/private.yaml;
the run turns the step selection off itself)::

    --set privacy.epsilon=3 --set model.critic.hidden=[128,128] --set trainer.steps=500 \\
        --set trainer.n_critic=2 --set trainer.batch_size=256

and its baseline without privacy: the same settings and ``--set select.every=0``, so that only
DP differs (``--set ship.calibrate_marginals=false`` on both compares the networks' own rows).
``--out``: JSON lines, one per seed, generator and comparison, and one pooled per generator and
comparison. ``--work``: keep the runs (their tables with canaries, MLflow store and bundles)
in DIR; by default they go to a temporary folder that is deleted at the end.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from scripts.tables_benchmark.tables import TABLES, shared_data_dir

log = logging.getLogger("membership_audit")

REPO = Path(__file__).resolve().parents[1]
TABLE = TABLES["credit_data"]
#: Percentiles of a number column's rare rows between which a canary's moved values are drawn:
#: the 0.5th to the 2nd, and the 98th to the 99.5th.
TAIL_QUANTILES = (0.005, 0.02, 0.98, 0.995)
#: A tail is rare when at most this share of the rare rows lie at or beyond its inner end.
MAX_TAIL_SHARE = 0.03
#: ship.min_atom_rows: a value this many rare rows share ships as itself (an atom).
ATOM_ROWS = 5
#: Number columns moved per canary, and the share of rare rows a canary's level may hold.
MOVED_NUMBERS = 3
MAX_LEVEL_SHARE = 0.05
#: A canary's level must be held by this many rows of the table (kept by the schema: >= k).
MIN_LEVEL_ROWS = 10
#: Keys the audit sets itself; --set may not change them.
OWN_KEYS = ("data.path", "data.label", "data.positive", "seed", "tracking.uri", "name")
BOOTSTRAP = 2000
PERMUTATIONS = 2000
GROUPS = ("in", "out", "fresh")
#: Rounds of swaps :func:`plant` tries before giving up.
PLACEMENT_ROUNDS = 20


# ---------------------------------------------------------------- canaries


def tail_values(rare: pd.DataFrame, numbers: Sequence[str]) -> dict[str, list[np.ndarray]]:
    """Each number column's rare ends among ``rare`` rows: the distinct values observed from
    its 0.5th to its 2nd percentile, and from its 98th to its 99.5th (the outer ends: observed
    values at or beyond those points), each end kept when at most :data:`MAX_TAIL_SHARE` of the
    rows lie at or beyond its inner end (a column whose low end is a common value, such as a
    debt of 0, keeps only its high end)."""
    tails: dict[str, list[np.ndarray]] = {}
    for name in numbers:
        values = rare[name].dropna().to_numpy(np.float64)
        q = [
            np.quantile(values, p, method="lower" if p < 0.5 else "higher") for p in TAIL_QUANTILES
        ]
        ends = (
            (values[(values >= q[0]) & (values <= q[1])], np.mean(values <= q[1])),
            (values[(values >= q[2]) & (values <= q[3])], np.mean(values >= q[2])),
        )
        kept = [np.unique(end) for end, share in ends if share <= MAX_TAIL_SHARE]
        if kept:
            tails[name] = kept
    return tails


def rare_levels(
    table: pd.DataFrame, rare: pd.DataFrame, categoricals: Sequence[str]
) -> list[tuple[str, str]]:
    """(column, level) pairs a canary may take: levels at most :data:`MAX_LEVEL_SHARE` of the
    rare rows hold, held by at least :data:`MIN_LEVEL_ROWS` rows of the table."""
    chosen = []
    for name in categoricals:
        shares = rare[name].value_counts(normalize=True, dropna=True)
        counts = table[name].value_counts(dropna=True)
        for level, share in shares.items():
            if share <= MAX_LEVEL_SHARE and counts.get(level, 0) >= MIN_LEVEL_ROWS:
                chosen.append((name, str(level)))
    return chosen


def row_keys(frame: pd.DataFrame, columns: Sequence[str]) -> list[tuple]:
    """Each row as a hashable tuple (numbers rounded to 6 decimals, gaps as None)."""
    cells = []
    for name in columns:
        values = frame[name]
        if pd.api.types.is_numeric_dtype(values):
            rounded = np.round(values.to_numpy(np.float64), 6)
            cells.append([None if np.isnan(v) else float(v) for v in rounded])
        else:
            cells.append([None if pd.isna(v) else str(v) for v in values])
    return list(zip(*cells, strict=True))


def make_canaries(
    table: pd.DataFrame, label: str, positive: str, n: int, seed: int
) -> pd.DataFrame:
    """``n`` canaries of the rare class (module doc), in the table's columns and dtypes.

    Each starts from a different real rare row. Together their tail values lift none to an
    atom: a value fewer than :data:`ATOM_ROWS` rare rows hold stays held by fewer than that
    many rare rows and canaries (else the canaries would ship it as a point mass, and one
    canary's value would raise another's chance of being matched)."""
    rng = np.random.default_rng([seed, 1])
    rare = table[table[label].astype(str) == positive]
    features = [c for c in table.columns if c != label]
    numbers = [c for c in features if pd.api.types.is_numeric_dtype(table[c])]
    categoricals = [c for c in features if c not in numbers]
    tails = tail_values(rare, numbers)
    levels = rare_levels(table, rare, categoricals)
    if len(tails) < MOVED_NUMBERS or not levels:
        raise ValueError(
            f"the table has {len(tails)} number columns with rare tails and {len(levels)} rare "
            f"levels; canaries need {MOVED_NUMBERS} and 1"
        )
    # Base rows: complete, every number inside its column's outer tail points among the rare
    # rows (so a canary holds no value beyond them, well inside the bounds the schema fits).
    inside = np.ones(len(rare), dtype=bool)
    for name in numbers:
        values = rare[name].dropna().to_numpy()
        low = np.quantile(values, TAIL_QUANTILES[0], method="lower")
        high = np.quantile(values, TAIL_QUANTILES[-1], method="higher")
        inside &= rare[name].between(low, high).to_numpy()
    bases = rare[inside].dropna().reset_index(drop=True)
    held = {name: rare[name].value_counts().to_dict() for name in numbers}
    planted: dict[tuple[str, float], int] = {}
    seen = set(row_keys(table, features))
    rows: list[pd.Series] = []
    columns = sorted(tails)
    for base in rng.permutation(len(bases)):
        if len(rows) == n:
            break
        row = bases.iloc[int(base)].copy()
        moved = [str(name) for name in rng.choice(columns, MOVED_NUMBERS, replace=False)]
        for name in moved:
            ends = tails[name]
            row[name] = rng.choice(ends[int(rng.integers(len(ends)))]).item()
        column, level = levels[int(rng.integers(len(levels)))]
        row[column] = level
        row = pd.DataFrame([row]).astype(table.dtypes.to_dict()).iloc[0]
        cells = [  # every value in a tail, moved or the base row's own
            (name, float(row[name]))
            for name, ends in tails.items()
            if any(float(row[name]) in end for end in ends)
        ]
        if any(
            held[name].get(value, 0) < ATOM_ROWS
            and held[name].get(value, 0) + planted.get((name, value), 0) + 1 >= ATOM_ROWS
            for name, value in cells
        ):
            continue
        key = row_keys(pd.DataFrame([row]), features)[0]
        if key not in seen:  # never a real row, nor another canary
            seen.add(key)
            rows.append(row)
            for cell in cells:
                planted[cell] = planted.get(cell, 0) + 1
    if len(rows) < n:
        raise ValueError(f"only {len(rows)} canaries from {len(bases)} base rows, {n} wanted")
    return pd.DataFrame(rows).astype(table.dtypes.to_dict()).reset_index(drop=True)


def assign_groups(n_each: int, seed: int, trainable: np.ndarray | None = None) -> np.ndarray:
    """A random group (in, out, fresh) for each of 3 x ``n_each`` candidates, ``n_each`` each;
    IN drawn among the ``trainable`` ones (a mask: those a private run's split would train on),
    OUT and FRESH among the rest of the candidates."""
    rng = np.random.default_rng([seed, 2])
    count = 3 * n_each
    trainable = np.ones(count, bool) if trainable is None else np.asarray(trainable, bool)
    if trainable.sum() < n_each:
        raise ValueError(
            f"only {int(trainable.sum())} of {count} candidates would be trained on under "
            f"privacy's split, {n_each} wanted: ask fewer --canaries"
        )
    groups = np.full(count, GROUPS[1], dtype=object)
    members = rng.choice(np.flatnonzero(trainable), n_each, replace=False)
    groups[members] = GROUPS[0]
    others = rng.permutation(np.flatnonzero(groups != GROUPS[0]))
    groups[others[n_each:]] = GROUPS[2]
    return groups.astype(str)


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


# ---------------------------------------------------------------- statistics


def auc(members: np.ndarray, others: np.ndarray) -> float:
    """P(a member's score > another's), ties counting one half (Mann-Whitney)."""
    members, others = np.asarray(members, float), np.asarray(others, float)
    if not len(members) or not len(others):
        return float("nan")
    diff = np.subtract.outer(members, others)
    return float(np.mean(diff > 0) + 0.5 * np.mean(diff == 0))


def advantage(members: np.ndarray, others: np.ndarray) -> float:
    """max over thresholds t of TPR - FPR, guessing "member" for a score >= t (0 when no
    threshold separates them better than guessing no one)."""
    members, others = np.asarray(members, float), np.asarray(others, float)
    thresholds = np.unique(np.concatenate([members, others]))
    tpr = (members[None, :] >= thresholds[:, None]).mean(axis=1)
    fpr = (others[None, :] >= thresholds[:, None]).mean(axis=1)
    return float(max(0.0, np.max(tpr - fpr)))


Statistic = Callable[[np.ndarray, np.ndarray], float]


def bootstrap_interval(
    members: Sequence[np.ndarray],
    others: Sequence[np.ndarray],
    statistic: Statistic,
    seed: int,
    repeats: int | None = None,
) -> tuple[float, float]:
    """95% percentile interval of ``statistic`` on the concatenated groups, each seed's members
    and others resampled with replacement on their own."""
    rng = np.random.default_rng([seed, 3])
    repeats = repeats or BOOTSTRAP
    values = np.empty(repeats)
    for r in range(repeats):
        a = np.concatenate([g[rng.integers(len(g), size=len(g))] for g in members])
        b = np.concatenate([g[rng.integers(len(g), size=len(g))] for g in others])
        values[r] = statistic(a, b)
    low, high = np.percentile(values, [2.5, 97.5])
    return float(low), float(high)


def permutation_null(
    members: Sequence[np.ndarray],
    others: Sequence[np.ndarray],
    statistic: Statistic,
    seed: int,
    repeats: int | None = None,
) -> tuple[float, float]:
    """What ``statistic`` reads when membership carries no signal, labels shuffled within each
    seed: the one-sided p-value of the observed value, (1 + #{shuffled >= observed}) /
    (1 + repeats), and the shuffled values' 95th percentile (what an audit of this size reads
    one time in 20 with nothing to find)."""
    rng = np.random.default_rng([seed, 4])
    repeats = repeats or PERMUTATIONS
    observed = statistic(np.concatenate(members), np.concatenate(others))
    pooled = [np.concatenate([a, b]) for a, b in zip(members, others, strict=True)]
    sizes = [len(a) for a in members]
    values = np.empty(repeats)
    for r in range(repeats):
        shuffled = [rng.permutation(p) for p in pooled]
        a = np.concatenate([p[:k] for p, k in zip(shuffled, sizes, strict=True)])
        b = np.concatenate([p[k:] for p, k in zip(shuffled, sizes, strict=True)])
        values[r] = statistic(a, b)
    p_value = (1 + int(np.sum(values >= observed - 1e-12))) / (1 + repeats)
    return p_value, float(np.percentile(values, 95))


def compare(
    members: Sequence[np.ndarray], others: Sequence[np.ndarray], seed: int
) -> dict[str, float]:
    """AUC and advantage of ``members`` (scores, one array per seed) against ``others``, with
    their bootstrap intervals, permutation p-values and the null's 95th percentiles."""
    a, b = np.concatenate(members), np.concatenate(others)
    figures: dict[str, float] = {"n_members": len(a), "n_others": len(b)}
    for name, statistic in (("auc", auc), ("advantage", advantage)):
        figures[name] = statistic(a, b)
        low, high = bootstrap_interval(members, others, statistic, seed)
        figures[f"{name}_low"], figures[f"{name}_high"] = low, high
        p_value, null95 = permutation_null(members, others, statistic, seed)
        figures[f"{name}_p"], figures[f"{name}_null95"] = p_value, null95
    return figures


# ---------------------------------------------------------------- one seed


@dataclass
class SeedResult:
    """One seed's candidates' distances to the nearest generated row, by generator (the
    default's shipped synthesizer; SMOTE on the same training split, a generator known to put
    rows next to its training rows) and group."""

    seed: int
    distances: dict[str, dict[str, np.ndarray]]
    #: Each group's distances to the nearest real training rare row (not a canary).
    isolation: dict[str, np.ndarray] = field(default_factory=dict)
    train_rare: int = 0
    generated: int = 0
    wall_s: float = float("nan")
    run_id: str | None = None
    #: Identical rows of each IN canary in the table (one entity).
    copies: int = 1

    def scores(self, group: str, generator: str = "default") -> np.ndarray:
        return -self.distances[generator][group]


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
    value it dropped (on the credit table at epsilon 3, every canary's rare level). Without
    privacy the shipped schema is the inferred one and this changes nothing."""
    from wgangp.data.schema.validation import canonical as canonical_cells

    out = frame.loc[:, list(features)].reset_index(drop=True)
    for column in schema.features:
        if column.kind == "categorical" and column.other is not None:
            out[column.name] = canonical_cells(out[column.name], column, "rows").to_numpy()
    return out


def parts_of(frame: pd.DataFrame, cfg, independent: bool | None = None) -> tuple[list[str], object]:
    """The split each row of ``frame`` (as written to ``cfg``'s data.path) lands in, by the
    run's own :func:`~wgangp.data.prepare.prepare_data` (``independent``: a private run's split
    whatever ``cfg`` says; None: ``cfg``'s); and the prepared data."""
    from wgangp.config import to_config
    from wgangp.data.prepare import prepare_data

    config = to_config(cfg)
    private = config.privacy.enabled if independent is None else independent
    data = prepare_data(config.data, seed=config.seed, launch_dir=REPO, private=private)
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


def run_seed(
    table: pd.DataFrame,
    seed: int,
    n_each: int,
    work: Path,
    extra: Sequence[str],
    copies: int = 1,
) -> SeedResult:
    """Plant, train, sample and score one seed's canaries (module doc)."""
    from scripts.tables_benchmark.baselines import smote_rows
    from scripts.tables_benchmark.codes import TableCodes
    from scripts.tables_benchmark.default_model import compose, train_default
    from wgangp.data.schema.table_schema import RARE
    from wgangp.evaluation.encoding import TableEncoding
    from wgangp.evaluation.privacy import closest_records
    from wgangp.serving.synthesizer import Synthesizer

    start = time.perf_counter()
    folder = work / f"seed{seed}"
    folder.mkdir(parents=True, exist_ok=True)
    candidates = make_canaries(table, TABLE.label, TABLE.positive, 3 * n_each, seed)
    path = folder / "credit_data.csv"  # the run is named after the file
    cfg = compose(audit_overrides(path, seed, work, extra))
    groups = assign_groups(n_each, seed, trainable(table, candidates, path, cfg, copies))
    _, data = plant(table, candidates[groups == "in"], path, cfg, seed, copies)
    features = data.features
    train_rare = data.rare(data.train).loc[:, features]
    model = train_default(cfg, folder / "run", REPO)
    synthesizer = Synthesizer.load(model.synthesizer_dir)
    generated = synthesizer.sample_class(len(train_rare), RARE, seed=seed)
    wall = time.perf_counter() - start
    # The positive control: SMOTE(-NC) on the same training rows, as many rows.
    rest = data.train.loc[data.classes(data.train) != RARE, features]
    codes = TableCodes.fit(data.schema, data.train)
    smote = smote_rows(codes, train_rare, rest, len(train_rare), seed)
    rows = canonical(candidates, data.schema).loc[:, features]
    planted = set(row_keys(rows, features))  # told apart before any level reads as `other`
    real = np.array([key not in planted for key in row_keys(train_rare, features)])
    # Every row read by the shipped schema's levels (the released one under privacy.epsilon);
    # the space's scales fitted on the real training rare rows: the near copies' space.
    released = synthesizer.schema
    reference = released_view(train_rare, released, features)
    encoding = TableEncoding(released, reference)
    rows = released_view(rows, released, features)
    distances = {}
    for name, drawn in (("default", generated), ("smote", smote)):
        distance, _ = closest_records(rows, released_view(drawn, released, features), encoding)
        distances[name] = {g: distance[groups == g] for g in GROUPS}
    isolation, _ = closest_records(rows, reference.loc[real], encoding)
    return SeedResult(
        seed,
        distances,
        {g: isolation[groups == g] for g in GROUPS},
        train_rare=len(train_rare),
        generated=len(generated),
        wall_s=wall,
        run_id=model.run_id,
        copies=copies,
    )


Picks = Sequence[tuple[np.ndarray, np.ndarray]]


def _difference(
    first: Sequence[SeedResult], second: Sequence[SeedResult], picks: Picks, statistic: Statistic
) -> float:
    """``statistic`` of the picked IN against the picked OUT scores (per seed, the indices in
    ``picks``), in ``first`` minus in ``second``."""
    values = []
    for results in (first, second):
        a = np.concatenate([r.scores("in")[i] for r, (i, _) in zip(results, picks, strict=True)])
        b = np.concatenate([r.scores("out")[j] for r, (_, j) in zip(results, picks, strict=True)])
        values.append(statistic(a, b))
    return values[0] - values[1]


def paired_difference(
    first: Sequence[SeedResult], second: Sequence[SeedResult], seed: int = 0
) -> dict[str, float]:
    """The shipped synthesizer's AUC and advantage (IN against OUT) in ``first`` minus those in
    ``second``: two audits of the same seeds, hence of the same canaries, trained two ways (say
    without and with privacy). The 95% interval resamples each seed's IN and OUT canaries with
    replacement, the same canaries in both audits; ``*_p`` is the share of resamples where the
    difference is at most 0 (one-sided: ``first`` gives more away). ValueError when the audits
    differ in seeds, canaries or copies."""

    def shape(results: Sequence[SeedResult]) -> list[tuple[int, ...]]:
        return [
            (r.seed, r.copies, *(len(r.distances["default"][g]) for g in GROUPS)) for r in results
        ]

    if shape(first) != shape(second):
        raise ValueError("the two audits differ in seeds, canaries or copies: nothing to pair")
    rng = np.random.default_rng([seed, 6])
    whole = [(np.arange(len(r.scores("in"))), np.arange(len(r.scores("out")))) for r in first]
    resamples = [
        [(rng.integers(len(i), size=len(i)), rng.integers(len(j), size=len(j))) for i, j in whole]
        for _ in range(BOOTSTRAP)
    ]
    figures: dict[str, float] = {}
    for name, statistic in (("auc", auc), ("advantage", advantage)):
        draws = np.array([_difference(first, second, p, statistic) for p in resamples])
        figures[name] = _difference(first, second, whole, statistic)
        low, high = np.percentile(draws, [2.5, 97.5])
        figures[f"{name}_low"], figures[f"{name}_high"] = float(low), float(high)
        figures[f"{name}_p"] = float(np.mean(draws <= 0))
    return figures


def paired_text(figures: dict[str, float], results: Sequence[SeedResult]) -> str:
    """One line: the paired difference of two audits (:func:`paired_difference`)."""
    members = sum(len(r.scores("in")) for r in results)
    others = sum(len(r.scores("out")) for r in results)
    seeds = ",".join(str(r.seed) for r in results)
    return (
        f"paired over {members} IN and {others} OUT canaries (seeds {seeds}), first minus "
        f"second: AUC {figures['auc']:+.3f} [{figures['auc_low']:+.3f}, "
        f"{figures['auc_high']:+.3f}] (resamples at or below 0: {figures['auc_p']:.3f}), "
        f"advantage {figures['advantage']:+.3f} [{figures['advantage_low']:+.3f}, "
        f"{figures['advantage_high']:+.3f}] (resamples at or below 0: "
        f"{figures['advantage_p']:.3f})"
    )


# ---------------------------------------------------------------- report

COMPARISONS = {"in_vs_out": ("in", "out"), "out_vs_fresh": ("out", "fresh")}


def records(results: Sequence[SeedResult], extra: Sequence[str]) -> list[dict[str, object]]:
    """One record per seed, generator and comparison, then the pooled ones (with 2+ seeds). A
    seed's records hold its candidates' distances (:func:`results_of` reads them back)."""
    rows: list[dict[str, object]] = []
    sets: list[tuple[str, Sequence[SeedResult]]] = [(str(r.seed), [r]) for r in results]
    if len(results) > 1:
        sets.append(("pooled", results))
    for label, chosen in sets:
        for generator in chosen[0].distances:
            for comparison, (a, b) in COMPARISONS.items():
                figures = compare(
                    [r.scores(a, generator) for r in chosen],
                    [r.scores(b, generator) for r in chosen],
                    seed=sum(r.seed for r in chosen),
                )
                row: dict[str, object] = {
                    "seed": label, "generator": generator, "comparison": comparison, **figures
                }  # fmt: skip
                for group in (a, b):
                    distances = np.concatenate([r.distances[generator][group] for r in chosen])
                    isolation = np.concatenate([r.isolation[group] for r in chosen])
                    row[f"median_distance_{group}"] = float(np.median(distances))
                    row[f"median_isolation_{group}"] = float(np.median(isolation))
                row["train_rare"] = [r.train_rare for r in chosen]
                row["generated"] = [r.generated for r in chosen]
                row["wall_s"] = [round(r.wall_s, 1) for r in chosen]
                row["run_id"] = [r.run_id for r in chosen]
                row["copies"] = chosen[0].copies
                row["overrides"] = list(extra)
                if len(chosen) == 1:
                    row["distances"] = {
                        name: {g: values[g].tolist() for g in GROUPS}
                        for name, values in chosen[0].distances.items()
                    }
                    row["isolation"] = {g: chosen[0].isolation[g].tolist() for g in GROUPS}
                rows.append(row)
    return rows


def results_of(rows: Sequence[dict[str, object]]) -> tuple[list[SeedResult], list[str]]:
    """The seeds' results (and overrides) back from :func:`records`' rows."""
    results = {}
    extra: list[str] = []
    for row in rows:
        if row["seed"] == "pooled" or row["seed"] in results:
            continue
        results[row["seed"]] = SeedResult(
            int(row["seed"]),
            {
                name: {g: np.array(v) for g, v in values.items()}
                for name, values in row["distances"].items()
            },
            {g: np.array(v) for g, v in row["isolation"].items()},
            train_rare=row["train_rare"][0],
            generated=row["generated"][0],
            wall_s=row["wall_s"][0],
            run_id=row["run_id"][0],
            copies=int(row.get("copies", 1)),
        )
        extra = list(row["overrides"])
    return list(results.values()), extra


def p_text(p: float) -> str:
    """A permutation p-value to 3 decimals; below 0.001 as such (2,000 shuffles)."""
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def interval(row: dict[str, object], name: str) -> str:
    return f"{row[name]:.3f} [{row[f'{name}_low']:.3f}, {row[f'{name}_high']:.3f}]"


def table_text(rows: Sequence[dict[str, object]]) -> str:
    """The printed markdown table: one line per seed (and pooled) and comparison."""
    lines = [
        "| seed | generator | comparison | n | AUC [95% CI] | p | advantage [95% CI] | p | "
        "null 95% | median distance | median isolation | wall s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        a, b = COMPARISONS[str(row["comparison"])]
        lines.append(
            f"| {row['seed']} | {row['generator']} | {a.upper()} vs {b.upper()} | "
            f"{row['n_members']}+{row['n_others']} | {interval(row, 'auc')} | "
            f"{p_text(row['auc_p'])} | {interval(row, 'advantage')} | "
            f"{p_text(row['advantage_p'])} | "
            f"{row['advantage_null95']:.3f} | "
            f"{row[f'median_distance_{a}']:.2f} / {row[f'median_distance_{b}']:.2f} | "
            f"{row[f'median_isolation_{a}']:.2f} / {row[f'median_isolation_{b}']:.2f} | "
            f"{', '.join(f'{w:.0f}' for w in row['wall_s'])} |"
        )
    lines += [
        "",
        "Scores: minus the distance to the nearest generated rare row (default: the shipped"
        " synthesizer; smote: SMOTE on the same training rows, the positive control). Wall s:"
        " planting and training. p: one-sided permutation"
        " p-value; null 95%: the advantage 1 audit in 20 of this size reads with nothing to find."
        " The bootstrap interval of the advantage (a maximum over thresholds) sits above 0 even"
        " then: read the advantage against null 95% and OUT vs FRESH. Median isolation: distance"
        " to the nearest real training rare row.",
    ]
    return "\n".join(lines)


# ---------------------------------------------------------------- command


def arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m scripts.membership_audit",
        description="Membership inference on planted canaries (see the module docstring).",
    )
    parser.add_argument("--data", default=None, help="shared data folder ($WGANGP_SHARED_DATA)")
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated seeds")
    parser.add_argument("--canaries", type=int, default=20, help="K: IN, OUT and FRESH each")
    parser.add_argument(
        "--copies",
        type=int,
        default=1,
        help="identical rows of each IN canary: one entity holding that many rows",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an extra training override, e.g. privacy.epsilon=3 (repeatable)",
    )
    parser.add_argument("--out", default=None, help="JSON lines file of the figures")
    parser.add_argument("--work", default=None, help="keep the runs here (default: a temp dir)")
    parser.add_argument(
        "--from-results",
        default=None,
        metavar="FILE",
        help="recompute and print the figures of an earlier --out file instead of training",
    )
    parser.add_argument(
        "--against",
        default=None,
        metavar="FILE",
        help="with --from-results: also the paired difference, that file's audit minus this one",
    )
    return parser.parse_args(argv)


def check_arguments(args: argparse.Namespace) -> list[int]:
    """The seeds; ValueError (or ConfigError) names a bad argument."""
    from wgangp.cli import check_overrides

    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"--seeds needs distinct integers, got {args.seeds!r}")
    if args.canaries < 2:
        raise ValueError(f"--canaries must be >= 2, got {args.canaries}")
    if args.copies < 1:
        raise ValueError(f"--copies must be >= 1, got {args.copies}")
    for item in args.set:
        key = item.split("=", 1)[0].lstrip("+~")
        if "=" not in item:
            raise ValueError(f"--set takes KEY=VALUE, got {item!r}")
        if key in OWN_KEYS:
            raise ValueError(f"--set {key} is the audit's own setting")
    check_overrides(args.set)
    return seeds


def main(argv: Sequence[str] | None = None) -> int:
    from wgangp.errors import WgangpError

    args = arguments(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    if args.from_results:
        lines = Path(args.from_results).read_text().splitlines()
        results, extra = results_of([json.loads(line) for line in lines if line.strip()])
        code = report(records(results, extra), args.out)
        if args.against:
            lines = Path(args.against).read_text().splitlines()
            second, _ = results_of([json.loads(line) for line in lines if line.strip()])
            try:
                print(paired_text(paired_difference(results, second), results))
            except ValueError as err:
                print(f"membership_audit: {err}", file=sys.stderr)
                return 2
        return code
    if args.against:
        print("membership_audit: --against needs --from-results FILE", file=sys.stderr)
        return 2
    try:
        seeds = check_arguments(args)
    except (ValueError, WgangpError) as err:
        print(f"membership_audit: {err}", file=sys.stderr)
        return 2
    path = TABLE.path(shared_data_dir(args.data))
    if not path.is_file():
        print(
            f"membership_audit: no table at {path}: give --data DIR or set WGANGP_SHARED_DATA",
            file=sys.stderr,
        )
        return 2
    table = pd.read_csv(path)
    with tempfile.TemporaryDirectory(prefix="membership-audit-") as temporary:
        work = Path(args.work).resolve() if args.work else Path(temporary)
        results = []
        for seed in seeds:
            log.info("seed %d: planting %d canaries and training", seed, args.canaries)
            results.append(run_seed(table, seed, args.canaries, work, args.set, args.copies))
            log.info("seed %d: done in %.0f s", seed, results[-1].wall_s)
    return report(records(results, args.set), args.out)


def report(rows: Sequence[dict[str, object]], out: str | None) -> int:
    """Print the table; write the rows as JSON lines to ``out`` (when given)."""
    print(table_text(rows))
    if out:
        with Path(out).open("w") as handle:
            for row in rows:
                handle.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
