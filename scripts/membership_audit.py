"""Membership inference on planted canaries: how much the shipped synthesizer gives away about
whether one rare-class row was in its training table.

What it measures. For each seed, 3K candidate canaries (``--canaries`` K, default 20) are built
by ``scripts.canaries`` (rare ``bad`` rows of the shared credit table no real row resembles,
every value an observed one). Its rule against lifting a tail value to an atom bounds K: on the
credit table seeds 0 to 3 yield 138 to 145 candidates, so K = 46 at most (more fails in one
line). The candidates are split at random into K IN, K OUT and K FRESH, IN among those a
private run's split would train on (there an entity's part is a hash of its rows and the seed,
unrelated to where the canary lies), so an audit with ``privacy.epsilon`` and one without plant
the same canaries. Each IN canary is written ``--copies`` R times (default 1): R identical rows
are one entity (the split, the k-entity rules and differential privacy count identical rows
once), a customer with R records, as a transactions table holds; the networks without privacy
train on every row. The table plus the IN canaries is written to a work folder and the default
model is trained on it in-process (the config ``python -m wgangp.train`` would compose, with the
table, its label and ``data.positive=bad`` given, the seed, a temporary MLflow store, no
end-of-run evaluation, and any ``--set`` overrides). The IN canaries are placed in the file so
that the run's own split puts every one of them in its training split
(``scripts.canary_planting``: appended at the end, 3 to 6 of 20 would land in validation or test
on seeds 0 to 2, and be no members; a private run's split needs no placing); the placement is
checked on the run's split before training.

The attack. The shipped synthesizer draws M rare-class rows (M = the training split's rare
rows); a candidate's score is minus its distance to the nearest drawn row in the mixed-type
space of the near-copy figures (``wgangp.evaluation.disclosure``: the table's encoding fitted on
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
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from scripts.canaries import REPO, TABLE, make_canaries, row_keys
from scripts.canary_planting import (
    audit_overrides,
    canonical,
    check_extra,
    plant,
    released_view,
    trainable,
)
from scripts.membership_report import (
    GROUPS,
    SeedResult,
    paired_difference,
    paired_text,
    records,
    report,
    results_of,
)
from scripts.tables_benchmark.tables import shared_data_dir

log = logging.getLogger("membership_audit")


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


# ---------------------------------------------------------------- one seed


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
    from wgangp.evaluation.disclosure import closest_records
    from wgangp.evaluation.encoding import TableEncoding
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
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"--seeds needs distinct integers, got {args.seeds!r}")
    if args.canaries < 2:
        raise ValueError(f"--canaries must be >= 2, got {args.canaries}")
    if args.copies < 1:
        raise ValueError(f"--copies must be >= 1, got {args.copies}")
    check_extra(args.set)
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


if __name__ == "__main__":
    raise SystemExit(main())
