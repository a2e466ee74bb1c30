"""``python -m scripts.dp_figures``: wgangp under differential privacy (``privacy.epsilon``),
measured the way ``scripts.dp_peers`` measures the DP peers, at epsilon 1, 3, 10 and without it.

    python -m scripts.dp_figures [--data DIR] [--tables credit_data,default_islr,simulated_million]
        [--seeds 0,1,2] [--epsilons 1,3,10,none] [--judge-on holdout|val]
        [--set key=value ...] [--out results.jsonl] [--from-results a.jsonl,b.jsonl]

Per table and seed each class is split 70/30 by ``scripts.dp_scores`` (the peers' split): the
rare rows (credit_data's 1,254 ``bad`` rows: 878 and 376; default_islr's 333 ``Yes``: 233 and 100;
``simulated_million``, the 1,000,000 rows of wgangp's own simulator
(``wgangp.data.builtin.simulated``, table seed 0, Kaggle's schema, label ``Class``, rare value 1),
1,730 frauds: 1,211 and 519) and the other class (credit_data's 3,200 ``good``: 2,240 and 960).
The held-out 30% are never trained on. wgangp is conditional and trains on the training rows of
both classes, the same rows the peers are given, fitted in-process by :func:`wgangp.fit`
(a temporary MLflow store and run folder) with the ``private`` experiment preset
(``+experiment=private``, conf/experiment/private.yaml) at ``privacy.epsilon=<epsilon>``
(delta: wgangp's public default, 1e-6, the peers' too); for ``none`` the same settings with
``privacy.epsilon=null select.every=0``, so only DP differs (a private run ships its last step,
and calibrates its marginals from DP releases). Every run has ``evaluate.enabled=false``,
``trainer.progress=false``, the split's seed as ``seed`` and a small split of its own
(``data.val_fraction=0.01``, ``data.test_fraction=0.01``: about 1% of each class goes to each
of the run's validation and test splits, which nothing reads; a private run draws each entity's
part on its own, so a smaller share would leave a part empty, which it refuses or, for an empty
validation part under a released description, fails on), then ``--set`` overrides. The run's
``privacy/epsilon`` and ``privacy/delta`` are read from its MLflow metrics. Its synthesizer
draws as many rare rows as it trained on (``sample(n, seed=<seed>)``), put in the schema's form
by ``dp_scores.in_form``; as many as are held out are scored against the held-out rows by the
tables benchmark's balanced detection
(``scripts.tables_benchmark.scores.detection``, boosting C2ST ROC-AUC, dp_peers' repeats,
rounds and seed; 0.5: can't tell) on :class:`~wgangp.evaluation.encoding.TableEncoding`
matrices fitted on the training rare rows, the schema being :func:`infer_schema` of the whole
file (Kaggle's shipped schema for the simulated table). dp_peers' two references are scored
alike per table and seed: independent marginals of the training rare rows (the floor a
generator should beat) and real training rare rows (the ceiling). Utility, beside detection
(which under DP reads near 1.0 for every method): ``dp_scores.utility_scorer``, a detector of
the rare class trained on the training rows of the other class plus all the drawn rare rows,
its PR-AUC on the held-out rows of both classes (at most 20,000 of the other class each way).

``--judge-on val`` chooses settings without touching the held-out rows: 20% of each class's
training rows (seeded) are carved out as validation rows, the model trains on the other 80%, and
its rows and the references are scored against the validation rows.

Prints two markdown tables, detection and utility (table x epsilon: mean +- sd over the seeds;
detection's with the mean wall seconds of one fit and draw, the epsilon spent and delta, and the
share of drawn rows holding a categorical level no training rare row holds, such as the ``other``
level a released schema always adds); ``--out`` gets one JSON line per table, method, epsilon and
seed (with the plan's summary: noise multiplier, sample rate, the statistics' epsilon). A draw that
collapsed onto one distinct row has no half-split AUC (identical rows stay on one side of every cut)
and is read as 1.0 with a note. A run that fails shows its last error line in its cell. A private
run's step costs about one to two non-private steps (ghost clipping, docs/performance.md); run one
invocation at a time, on a commit that does not move under it.
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from scripts.dp_figures_report import (
    Result,
    _eps,
    read_results,
    summarize,
    utility_table,
)
from scripts.dp_peers import last_error_line, report
from scripts.dp_rows import TABLE_NAMES, Parts, Table, load_table, seed_parts
from scripts.dp_scores import held_out_scorer, utility_scorer

#: A small split of its own: about 1% of each class in validation and in test (enough that a
#: private run's independent draw of each entity's part almost never leaves one empty).
RUN_SPLIT = ("data.val_fraction=0.01", "data.test_fraction=0.01")
PRESET = "+experiment=private"
#: Without privacy: what privacy.epsilon turns off, turned off by hand.
NO_PRIVACY = ("privacy.epsilon=null", "select.every=0")


def run_overrides(table: Table, epsilon: float | None, seed: int, extra: list[str]) -> list[str]:
    """The overrides of one wgangp run (module doc); its checkpoint folder comes on top."""
    privacy = [f"privacy.epsilon={epsilon:g}"] if epsilon is not None else list(NO_PRIVACY)
    return [
        PRESET,
        *privacy,
        f"seed={seed}",
        "evaluate.enabled=false",
        "trainer.progress=false",
        *RUN_SPLIT,
        *table.overrides,
        *extra,
    ]


def wgangp_rows(
    table: Table, parts: Parts, n: int, overrides: list[str], seed: int, result: Result
) -> pd.DataFrame:
    """``n`` rare rows of wgangp fitted on ``parts.frame``; fills ``result``'s run figures."""
    import keras
    from mlflow import MlflowClient

    import wgangp

    with tempfile.TemporaryDirectory(prefix="dp-figures-") as folder:
        work = Path(folder)
        uri = f"sqlite:///{work / 'mlflow.db'}"
        start = time.perf_counter()
        synthesizer = wgangp.fit(
            parts.frame,
            label=table.label,
            positive=table.positive,
            overrides=[*overrides, f"trainer.checkpoint_dir={work / 'checkpoints'}"],
            tracking_uri=uri,
            output_dir=work / "run",
        )
        result.fit_s = time.perf_counter() - start
        result.run_id = synthesizer.run_id
        result.privacy = dict(synthesizer.privacy or {})
        metrics = MlflowClient(uri).get_run(synthesizer.run_id).data.metrics
        result.spent_epsilon = metrics.get("privacy/epsilon", float("nan"))
        result.delta = metrics.get("privacy/delta", float("nan"))
        result.released = {
            column.name: (list(column.levels or ()), column.other)
            for column in synthesizer.schema.features
            if column.kind == "categorical" and column.other is not None
        }
        rows = synthesizer.sample(n, seed=seed)
    keras.backend.clear_session()
    return rows.loc[:, table.features].reset_index(drop=True)


def _marginals(train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    from scripts.tables_benchmark.baselines import marginal_rows

    return marginal_rows(train, n, seed)


def _real(train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    return train.sample(n, random_state=seed).reset_index(drop=True)


def scorer(table: Table, parts: Parts) -> Callable[[pd.DataFrame], float]:
    """Detection of rows against ``parts.judged``, as dp_peers scores a peer."""
    return held_out_scorer(table.schema, parts.train, parts.judged)


def utility_of(table: Table, parts: Parts) -> Callable[[pd.DataFrame], float]:
    """Utility of rare rows on the judged rows of both classes, as dp_peers scores a peer."""
    return utility_scorer(
        table.schema, parts.train, parts.train_other, parts.judged, parts.judged_other
    )


def in_released_levels(frame: pd.DataFrame, released: dict[str, object]) -> pd.DataFrame:
    """``frame`` with each categorical value its released schema does not list read as its
    ``other`` level (the rule the run read its training rows by)."""
    frame = frame.copy()
    for name, (levels, other) in released.items():
        values = frame[name]
        listed = values.isna() | values.astype(str).isin({str(v) for v in levels})
        frame[name] = values.where(listed, other)
    return frame


def released_score(table: Table, parts: Parts, released: dict[str, object], rows: pd.DataFrame):
    """Detection of ``rows`` against the judged rows in the released levels (:class:`Result`)."""
    train, judged = (in_released_levels(f, released) for f in (parts.train, parts.judged))
    return held_out_scorer(table.schema, train, judged)(rows)


def unseen_share(rows: pd.DataFrame, table: Table, train: pd.DataFrame) -> float:
    """The share of ``rows`` with a categorical level no row of ``train`` holds (a released
    schema's ``other``, say), gaps aside."""
    unseen = np.zeros(len(rows), bool)
    for column in table.schema.features:
        if column.kind == "categorical":
            values = rows[column.name]
            seen = set(train[column.name].dropna().astype(str))
            unseen |= (values.notna() & ~values.astype(str).isin(seen)).to_numpy()
    return float(unseen.mean()) if len(rows) else float("nan")


def measure(
    result: Result,
    draw: Callable[[], pd.DataFrame],
    score: Callable[[pd.DataFrame], float],
    unseen: Callable[[pd.DataFrame], float],
    released: Callable[[dict, pd.DataFrame], float] | None = None,
    utility: Callable[[pd.DataFrame], float] | None = None,
) -> Result:
    """``result`` with the detection of ``draw``'s rows, or the one line of why it has none."""
    start = time.perf_counter()
    try:
        rows = draw()
        result.wall_s = time.perf_counter() - start
        result.unseen_levels = unseen(rows)
        result.distinct_rows = int(len(rows.astype(str).drop_duplicates()))
        result.detection = score(rows)
        if utility is not None:
            result.utility = utility(rows)
        if released is not None and result.released:
            result.detection_released = released(result.released, rows)
        if not math.isfinite(result.detection) and result.distinct_rows == 1:
            # The half-split keeps identical rows on one side, so one distinct row leaves every
            # cut with a class missing and no AUC: a detector tells it apart perfectly.
            result.detection = 1.0
            result.note = f"collapsed: all {len(rows)} drawn rows identical, read as 1.0"
    except Exception as err:  # noqa: BLE001 - a run's failure is its cell's note
        result.note = last_error_line(str(err)) if str(err) else type(err).__name__
        result.wall_s = time.perf_counter() - start
    return result


def parse_epsilon(text: str) -> float | None:
    return None if text.strip().lower() in ("none", "null", "off") else float(text)


def arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m scripts.dp_figures", description=__doc__)
    parser.add_argument("--data", default=None, help="shared data folder ($WGANGP_SHARED_DATA)")
    parser.add_argument("--tables", default=",".join(TABLE_NAMES), help="comma-separated tables")
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated split seeds")
    parser.add_argument(
        "--epsilons", default="1,3,10,none", help="comma-separated epsilons; none: no privacy"
    )
    parser.add_argument(
        "--judge-on",
        choices=("holdout", "val"),
        default="holdout",
        help="score against the held-out 30%% (holdout) or 20%% of the training rare rows (val)",
    )
    parser.add_argument(
        "--set",
        dest="extra",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a training override after the preset's, repeatable",
    )
    parser.add_argument("--no-references", action="store_true", help="skip the two references")
    parser.add_argument("--out", default=None, help="JSON lines file of the results")
    parser.add_argument(
        "--from-results",
        default=None,
        metavar="JSONL[,JSONL]",
        help="print the table of earlier runs' --out files instead of running",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    epsilons = [parse_epsilon(e) for e in args.epsilons.split(",") if e.strip()]
    if args.from_results:
        found = read_results(args.from_results.split(","))
        print(summarize(found, epsilons) + "\n\n" + utility_table(found, epsilons))
        return 0
    names = [t.strip() for t in args.tables.split(",") if t.strip()]
    unknown = sorted(set(names) - set(TABLE_NAMES))
    if unknown:
        print(f"dp_figures: unknown table(s) {', '.join(unknown)}: choose from {TABLE_NAMES}")
        return 2
    out = Path(args.out) if args.out else None
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("")
    results: list[Result] = []
    for name in names:
        try:
            table = load_table(name, args.data)
        except FileNotFoundError as err:
            print(f"dp_figures: {err}")
            return 2
        for seed in seeds:
            parts = seed_parts(table, seed, args.judge_on)
            n, score = len(parts.train), scorer(table, parts)  # detection reads len(judged)
            utility = utility_of(table, parts)
            runs: list[tuple[Result, Callable[[], pd.DataFrame]]] = []
            if not args.no_references:
                for method, rows_of in (("marginals", _marginals), ("real", _real)):
                    runs.append(
                        (Result(name, method, None, seed), partial(rows_of, parts.train, n, seed))
                    )
            for epsilon in epsilons:
                result = Result(name, "wgangp", epsilon, seed)
                result.overrides = run_overrides(table, epsilon, seed, args.extra)
                draw = partial(wgangp_rows, table, parts, n, result.overrides, seed, result)
                runs.append((result, draw))
            for result, draw in runs:
                result.judge_on, result.train_rare = args.judge_on, len(parts.train)
                result.scored_rows = n
                measure(
                    result, draw, score, partial(unseen_share, table=table, train=parts.train),
                    partial(released_score, table, parts), utility,
                )  # fmt: skip
                results.append(result)
                report(
                    result,
                    f"{name} seed {seed} {result.method} eps={_eps(result.epsilon)}",
                    f"{result.wall_s:.0f} s; spent {result.spent_epsilon:.3g}; unseen levels "
                    f"{result.unseen_levels:.3f}",
                    out,
                )
    print(summarize(results, epsilons) + "\n\n" + utility_table(results, epsilons))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
