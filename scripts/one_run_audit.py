"""An empirical lower bound on epsilon from one training run (Steinke, Nasr and Jagielski,
NeurIPS 2023): how much privacy the shipped synthesizer provably does NOT have, at 95%.

Per seed: m canaries (``--canaries``, default 200) of ``scripts.canaries`` with ``tail_grid``
(so that a few hundred fit), among those a private run's split would train on (its part is a
hash of the canary's rows: as in the membership audit, both the private and the default model
audit the same canaries), each an entity of ``--copies`` R identical rows (default 10). Each
canary goes into the shared credit table independently with probability 1/2 (a seeded draw, the
only thing the attack never reads), the table is written so that the run's split trains on every
one that went in (``scripts.canary_planting``), and one model is trained as ``python -m
wgangp.train`` would (``--set`` overrides on top: ``--set +experiment=private`` for the private
run). Its shipped synthesizer draws ``--draws`` rare rows (default 100,000) and each canary gets
a score from each attack of ``scripts.canary_scores`` (nearest drawn row; DOMIAS' density ratio
against the table's real rare rows), in a distance space fitted on the table's real rare rows
(no canary), every row read by the shipped schema's levels. The positive control: SMOTE(-NC)
fitted on the run's training split, as many rows, the same attacks (in the table's inferred
schema).

The guesses: for each attack and each count k in :data:`GUESS_SHARES` of m, "in" for the k/2
highest scores and "out" for the k/2 lowest, abstaining on the rest. :mod:`scripts.audit_bound`
turns each (m, k, right guesses, delta) into the largest epsilon rejected at level 0.05 / (the
number of (attack, k) pairs): the best of them is the audit's bound at 95% over all its tries
(Bonferroni), the same rule for every generator. delta: the run's own (``privacy/delta``), else
``--delta``. Pooled: the seeds' canaries as one audit of their runs together (a canary goes into
one run only, so the runs together are as private as each), scores ranked within their seed.
The ceiling: the bound had every guess been right, the most this audit can show at this m.

    python -m scripts.one_run_audit [--data DIR] [--seeds 0,1,2] [--canaries 200] \\
        [--copies 10] [--draws 100000] [--set KEY=VALUE ...] [--out FILE] [--work DIR]
    python -m scripts.one_run_audit --from-results FILE   # the figures again, no training

``--out``: JSON lines, one per seed and generator, with every canary's inclusion and scores.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from scripts.audit_bound import epsilon_lower_bound, guesses, right_guesses
from scripts.canaries import REPO, TABLE, make_canaries
from scripts.canary_planting import (
    audit_overrides,
    canonical,
    check_extra,
    plant,
    released_view,
    trainable,
)
from scripts.canary_scores import ATTACKS, scores
from scripts.membership_statistics import auc
from scripts.tables_benchmark.tables import shared_data_dir

log = logging.getLogger("one_run_audit")

#: The guesses tried, as shares of the m canaries; each (attack, share) is one try.
GUESS_SHARES = (0.1, 0.25, 0.5, 1.0)
ALPHA = 0.05
#: Candidates built per canary wanted: about 70% of them fall in a private run's training part.
CANDIDATES_PER_CANARY = 1.6
GENERATORS = ("wgangp", "smote")


@dataclass
class SeedAudit:
    """One seed's run: which canaries went in, every attack's scores, the guarantee claimed."""

    seed: int
    generator: str
    included: list[bool]
    scores: dict[str, list[float]]
    epsilon: float | None = None
    delta: float = 1e-5
    copies: int = 1
    draws: int = 0
    wall_s: float = float("nan")
    run_id: str | None = None
    overrides: list[str] = field(default_factory=list)


def inclusion(m: int, seed: int) -> np.ndarray:
    """Each canary in with probability 1/2, independently (the secret the attack guesses)."""
    return np.random.default_rng([seed, 7]).random(m) < 0.5


def audit_canaries(
    table: pd.DataFrame, m: int, seed: int, path: Path, cfg, copies: int
) -> pd.DataFrame:
    """``m`` canaries a private run's split would train on; ValueError when too few fit."""
    wanted = math.ceil(CANDIDATES_PER_CANARY * m)
    try:
        candidates = make_canaries(table, TABLE.label, TABLE.positive, wanted, seed, tail_grid=True)
    except ValueError as err:
        raise ValueError(f"{err}: ask fewer --canaries") from err
    kept = candidates[trainable(table, candidates, path, cfg, copies)]
    if len(kept) < m:
        raise ValueError(f"only {len(kept)} canaries a private run trains on: ask fewer --canaries")
    return kept.iloc[:m].reset_index(drop=True)


def run_seed(
    table: pd.DataFrame,
    seed: int,
    m: int,
    work: Path,
    extra: Sequence[str],
    copies: int,
    draws: int,
    delta: float,
) -> list[SeedAudit]:
    """Plant, train, draw and score one seed's canaries: the model's and SMOTE's audits."""
    from scripts.tables_benchmark.baselines import smote_rows
    from scripts.tables_benchmark.codes import TableCodes
    from scripts.tables_benchmark.default_model import compose, train_default
    from wgangp.data.schema.inference import infer_schema
    from wgangp.data.schema.table_schema import RARE
    from wgangp.evaluation.encoding import TableEncoding
    from wgangp.serving.synthesizer import Synthesizer

    start = time.perf_counter()
    folder = work / f"seed{seed}"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "credit_data.csv"
    cfg = compose(audit_overrides(path, seed, work, extra))
    canaries = audit_canaries(table, m, seed, path, cfg, copies)
    included = inclusion(m, seed)
    _, data = plant(table, canaries[included], path, cfg, seed, copies)
    model = train_default(cfg, folder / "run", REPO)
    synthesizer = Synthesizer.load(model.synthesizer_dir)
    drawn = synthesizer.sample_class(draws, RARE, seed=seed)
    wall = time.perf_counter() - start
    # The attacker's view: the public table (no canary) and what ships, never ``included``.
    public = infer_schema(table, TABLE.label, TABLE.positive)
    features = [column.name for column in public.features]
    real = canonical(table, public)
    real = real.loc[np.asarray(public.classes(real[TABLE.label])) == RARE, features]
    points = canonical(canaries, public).loc[:, features]
    released = synthesizer.schema
    view = {name: released_view(frame, released, features) for name, frame in
            (("real", real), ("points", points), ("drawn", drawn))}  # fmt: skip
    encoding = TableEncoding(released, view["real"])
    guarantee = synthesizer.privacy or {}
    claimed = guarantee.get("epsilon")
    shared = {
        "seed": seed, "included": included.tolist(), "copies": copies, "draws": draws,
        "overrides": list(extra), "delta": float(guarantee.get("delta", delta)),
    }  # fmt: skip
    audits = [
        SeedAudit(
            generator="wgangp",
            scores=_listed(scores(encoding, view["points"], view["drawn"], view["real"])),
            epsilon=None if claimed is None else float(claimed),
            wall_s=wall,
            run_id=model.run_id,
            **shared,
        )
    ]
    # The positive control: SMOTE(-NC) on the run's training split, as many rows.
    train_rare = data.rare(data.train).loc[:, data.features]
    rest = data.train.loc[data.classes(data.train) != RARE, data.features]
    smote = smote_rows(TableCodes.fit(data.schema, data.train), train_rare, rest, draws, seed)
    plain = TableEncoding(public, real)
    audits.append(
        SeedAudit(generator="smote", scores=_listed(scores(plain, points, smote, real)), **shared)
    )
    return audits


def _listed(values: dict[str, np.ndarray]) -> dict[str, list[float]]:
    return {name: [float(v) for v in array] for name, array in values.items()}


# ---------------------------------------------------------------- the bound


def bound_rows(included: np.ndarray, by_attack: dict[str, np.ndarray], delta: float) -> list[dict]:
    """Every try's guesses, right guesses, bound and ceiling (module doc), and the AUC of the
    included canaries' scores against the others'."""
    m = len(included)
    tries = [(attack, share) for attack in ATTACKS for share in GUESS_SHARES]
    alpha = ALPHA / len(tries)
    rows = []
    for attack, share in tries:
        values = np.asarray(by_attack[attack], float)
        count = max(1, int(round(share * m)))
        r, v = right_guesses(guesses(values, count), included)
        rows.append(
            {
                "attack": attack, "guesses": r, "right": v,
                "bound": epsilon_lower_bound(m, r, v, delta, alpha),
                "ceiling": epsilon_lower_bound(m, r, r, delta, alpha),
                "auc": auc(values[included], values[~included]),
            }
        )  # fmt: skip
    return rows


def pooled_scores(audits: Sequence[SeedAudit]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The seeds' canaries as one audit: inclusion concatenated, each attack's scores as their
    rank within their own seed (0 lowest, 1 highest), so that no seed's scale dominates."""
    included = np.concatenate([np.asarray(a.included, bool) for a in audits])
    ranked = {}
    for attack in ATTACKS:
        parts = []
        for audit in audits:
            values = np.asarray(audit.scores[attack], float)
            parts.append(np.argsort(np.argsort(values, kind="stable")) / max(1, len(values) - 1))
        ranked[attack] = np.concatenate(parts)
    return included, ranked


def summary(audits: Sequence[SeedAudit]) -> list[dict[str, object]]:
    """One row per generator and seed, and pooled over seeds: the audit's bound (its best try)
    beside the claimed epsilon, the try that gave it, its ceiling, and each attack's AUC."""
    out = []
    for generator in dict.fromkeys(a.generator for a in audits):
        mine = [a for a in audits if a.generator == generator]
        sets = [(str(a.seed), [a]) for a in mine] + ([("pooled", mine)] if len(mine) > 1 else [])
        for label, chosen in sets:
            if len(chosen) == 1:
                included = np.asarray(chosen[0].included, bool)
                by_attack = {k: np.asarray(v, float) for k, v in chosen[0].scores.items()}
            else:
                included, by_attack = pooled_scores(chosen)
            tries = bound_rows(included, by_attack, chosen[0].delta)
            best = max(tries, key=lambda row: (row["bound"], -row["guesses"]))
            claimed = [a.epsilon for a in chosen if a.epsilon is not None]
            out.append(
                {
                    "generator": generator, "seed": label, "canaries": len(included),
                    "in": int(included.sum()), "delta": chosen[0].delta,
                    "claimed": float(np.mean(claimed)) if claimed else None,
                    "bound": best["bound"], "best": best,
                    "ceiling": max(row["ceiling"] for row in tries),
                    "auc": {row["attack"]: row["auc"] for row in tries},
                    "tries": tries,
                }
            )  # fmt: skip
    return out


def table_text(rows: Sequence[dict[str, object]]) -> str:
    """The printed markdown table, and per generator the seeds' bounds as mean and sd."""
    lines = [
        "| generator | seed | canaries (in) | claimed epsilon | bound (95%) | from | ceiling | "
        "AUC nearest / density ratio |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        best = row["best"]
        claimed = "none" if row["claimed"] is None else f"{row['claimed']:.2f}"
        lines.append(
            f"| {row['generator']} | {row['seed']} | {row['canaries']} ({row['in']}) | "
            f"{claimed} | {row['bound']:.3f} | {best['attack']}, {best['right']} of "
            f"{best['guesses']} right | {row['ceiling']:.2f} | "
            f"{row['auc']['nearest']:.3f} / {row['auc']['density_ratio']:.3f} |"
        )
    lines.append("")
    for generator in dict.fromkeys(row["generator"] for row in rows):
        bounds = [row["bound"] for row in rows if row["generator"] == generator
                  and row["seed"] != "pooled"]  # fmt: skip
        spread = f" ± {np.std(bounds, ddof=1):.3f}" if len(bounds) > 1 else ""
        lines.append(f"{generator}: bound per seed {np.mean(bounds):.3f}{spread} (n={len(bounds)})")
    lines.append(
        f"bound: the largest epsilon rejected at {ALPHA} over {len(ATTACKS) * len(GUESS_SHARES)} "
        "tries (attacks x guesses, Bonferroni); ceiling: the bound had every guess been right."
    )
    return "\n".join(lines)


# ---------------------------------------------------------------- command


def arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m scripts.one_run_audit", description=__doc__)
    parser.add_argument("--data", default=None, help="shared data folder ($WGANGP_SHARED_DATA)")
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated seeds")
    parser.add_argument("--canaries", type=int, default=200, help="m: canaries per run")
    parser.add_argument("--copies", type=int, default=10, help="identical rows per canary")
    parser.add_argument("--draws", type=int, default=100_000, help="rows drawn per model")
    parser.add_argument("--delta", type=float, default=1e-5, help="delta without privacy")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="an extra training override (repeatable)")  # fmt: skip
    parser.add_argument("--out", default=None, help="JSON lines file of every canary's scores")
    parser.add_argument("--work", default=None, help="keep the runs here (default: a temp dir)")
    parser.add_argument("--from-results", default=None, metavar="FILE",
                        help="the figures of an earlier --out file, without training")  # fmt: skip
    return parser.parse_args(argv)


def check_arguments(args: argparse.Namespace) -> list[int]:
    """The seeds; ValueError (or ConfigError) names a bad argument."""
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"--seeds needs distinct integers, got {args.seeds!r}")
    if args.canaries < 10:
        raise ValueError(f"--canaries must be >= 10, got {args.canaries}")
    if args.copies < 1:
        raise ValueError(f"--copies must be >= 1, got {args.copies}")
    if args.draws < 10:
        raise ValueError(f"--draws must be >= 10, got {args.draws}")
    if not 0 <= args.delta < 1:
        raise ValueError(f"--delta must be in [0, 1), got {args.delta}")
    check_extra(args.set)
    return seeds


def read_results(path: str) -> list[SeedAudit]:
    lines = Path(path).read_text().splitlines()
    return [SeedAudit(**json.loads(line)) for line in lines if line.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    from wgangp.errors import WgangpError

    args = arguments(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    if args.from_results:
        print(table_text(summary(read_results(args.from_results))))
        return 0
    try:
        seeds = check_arguments(args)
    except (ValueError, WgangpError) as err:
        print(f"one_run_audit: {err}", file=sys.stderr)
        return 2
    path = TABLE.path(shared_data_dir(args.data))
    if not path.is_file():
        print(f"one_run_audit: no table at {path}: give --data DIR or set WGANGP_SHARED_DATA",
              file=sys.stderr)  # fmt: skip
        return 2
    table = pd.read_csv(path)
    out = Path(args.out) if args.out else None
    if out is not None:
        out.write_text("")
    audits: list[SeedAudit] = []
    with tempfile.TemporaryDirectory(prefix="one-run-audit-") as temporary:
        work = Path(args.work).resolve() if args.work else Path(temporary)
        for seed in seeds:
            log.info("seed %d: %d canaries of %d rows, training", seed, args.canaries, args.copies)
            try:
                found = run_seed(
                    table, seed, args.canaries, work, args.set, args.copies, args.draws, args.delta
                )
            except ValueError as err:
                print(f"one_run_audit: {err}", file=sys.stderr)
                return 2
            audits += found
            log.info("seed %d: trained and drawn in %.0f s", seed, found[0].wall_s)
            if out is not None:
                with out.open("a") as handle:
                    for audit in found:
                        handle.write(json.dumps(asdict(audit)) + "\n")
    print(table_text(summary(audits)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
