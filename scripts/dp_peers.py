"""``python -m scripts.dp_peers``: differentially private peers scored the way this project
scores its own rows, on the shared credit table, at the same epsilons.

    python -m scripts.dp_peers [--data DIR] [--seeds 0,1,2] [--epsilons 1,3,10]
        [--methods dpctgan,mst,aim,dpgan] [--delta 1e-6] [--epochs dpgan=30,dpctgan=60]
        [--out results.jsonl] [--from-results a.jsonl,b.jsonl]

Each seed splits the table's rows as every DP figure does (``scripts.dp_scores``): its 1,254
``bad`` rows 70/30 (878 training rows, 376 held out; seeded, not stratified, the earlier figures'
split) and its 3,200 ``good`` rows 70/30 (2,240 and 960). Each peer (smartnoise-synth 1.0.8's
DPCTGAN, MST and AIM; synthcity 0.2.12's DP-GAN) is fitted in its own env (``bash
scripts/bench/peers/setup_envs.sh smartnoise synthcity``) on the training rows of both classes,
the label (``Status``) one more categorical column, as wgangp is (``scripts.dp_figures``), at each
epsilon (the whole budget, its preprocessing included: ``scripts/bench/peers/dp_table.py``); it
draws rows of both classes and the ``bad`` ones are kept (878; post-processing). 376 of them are
scored against the 376 held-out rows by the tables benchmark's balanced detection
(``scripts.tables_benchmark.scores.detection``: boosting C2ST ROC-AUC, half-split repeats; 0.5
can't tell) on :class:`~wgangp.evaluation.encoding.TableEncoding` matrices fitted on the training
rare rows, and all of them by utility: the PR-AUC on the held-out rows of both classes of a
detector trained on the training ``good`` rows and them (``dp_scores.utility_scorer``). The
schema is :func:`~wgangp.data.schema.inference.infer_schema` of the whole file (label ``Status``,
class ``bad``), the rows put in its form by
:func:`~wgangp.data.schema.validation.validate_table`. Two references are scored alike, without
privacy: independent marginals of the training rare rows and the training rare rows themselves
(utility's ceiling: real rows only).

Prints two markdown tables, detection and utility (method x epsilon: mean +- sd over the seeds,
mean wall seconds of a fit and draw); a method that fails shows its last error line. ``--out``
gets one JSON line per method, epsilon and seed, with the peer's record (its epsilon
accounting, the rows it drew and the rare ones kept).
``--epochs`` caps a GAN's epochs: synthcity's default of 2,000 takes hours on 2 cores, and
DPCTGAN's (as many as its budget allows, at most 300) over 5 minutes at epsilon 10.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from scripts.bench.peers import envs_dir
from scripts.bench.peers.rows import REPO
from scripts.dp_scores import held_out_scorer, other_split, rare_split, utility_scorer
from scripts.tables_benchmark.tables import TABLES, shared_data_dir

PEER_MODULE = "scripts.bench.peers.dp_table"
#: Which env runs each method (``setup_envs.sh`` target).
ENVS = {"dpctgan": "smartnoise", "mst": "smartnoise", "aim": "smartnoise", "dpgan": "synthcity"}
METHODS = tuple(ENVS)
#: The references, scored alike; no epsilon.
REFERENCES = ("marginals", "real")
REFERENCE_NAMES = {
    "marginals": "independent marginals (no DP)",
    "real": "real training rows (no DP)",
}
#: smartnoise's DP bounds (its preprocessor: ``approx_bounds`` on each of the 9 numeric columns,
#: epsilon split evenly) need about 0.08 a column to be found at all on 878 rows (Seniority's
#: fullest power-of-two bin holds ~190 rows: at 0.056 a column 18 draws in 40 found none and the
#: fit fails): 0.7 of epsilon 1, and 1.0 above (0.11 a column), the rest to the synthesizer.
PREPROCESSOR_SHARE, PREPROCESSOR_MOST = 0.7, 1.0
TABLE = TABLES["credit_data"]
#: Rows a peer draws, over those it must return of the rare class, beyond the training share:
#: its label's share is noisy, and a draw is cheap beside a fit.
DRAW_MARGIN = 1.3


@dataclass
class Result:
    """One method's figure for one epsilon and seed (``note``: why there is none)."""

    method: str
    epsilon: float | None
    seed: int
    detection: float = float("nan")
    wall_s: float = float("nan")
    note: str = ""
    peer: dict[str, object] = field(default_factory=dict)
    #: PR-AUC of a detector trained on the real other-class rows and these rare rows.
    utility: float = float("nan")


def last_error_line(text: str) -> str:
    """The last non-empty line of a failed run's output (a traceback's exception line)."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def preprocessor_eps(epsilon: float) -> float:
    """The part of a smartnoise peer's ``epsilon`` its preprocessor spends on the bounds."""
    return min(PREPROCESSOR_SHARE * epsilon, PREPROCESSOR_MOST)


def peer_python(method: str) -> Path:
    """The interpreter of ``method``'s env; RuntimeError naming the command that makes it."""
    name = ENVS[method]
    env = envs_dir() / name
    python = env / "bin" / "python"
    if not ((env / ".ready").is_file() and python.exists()):
        raise RuntimeError(f"no {name} env: bash scripts/bench/peers/setup_envs.sh {name}")
    return python


def peer_rows(
    method: str,
    train: pd.DataFrame,
    categorical: list[str],
    n: int,
    *,
    epsilon: float,
    delta: float,
    seed: int,
    epochs: int | None,
    timeout: float,
    python: Path | None = None,
) -> tuple[pd.DataFrame, dict[str, object]]:
    """``n`` rows of ``method`` fitted on ``train`` in its env, and its record line;
    RuntimeError with the peer's last error line when it fails."""
    python = python or peer_python(method)
    with tempfile.TemporaryDirectory(prefix="dp-peer-") as folder:
        rows_csv, out_csv = Path(folder) / "rows.csv", Path(folder) / "out.csv"
        train.to_csv(rows_csv, index=False)
        command = [
            str(python), "-m", PEER_MODULE, "--method", method, "--rows", str(rows_csv),
            "--categorical", ",".join(categorical), "--epsilon", str(epsilon),
            "--delta", str(delta), "--n", str(n), "--seed", str(seed), "--out", str(out_csv),
        ]  # fmt: skip
        if epochs is not None:
            command += ["--epochs", str(epochs)]
        if ENVS[method] == "smartnoise":
            command += ["--preprocessor-eps", str(preprocessor_eps(epsilon))]
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=timeout, cwd=str(REPO)
            )
        except subprocess.TimeoutExpired as err:
            raise RuntimeError(f"timed out after {timeout:.0f} s") from err
        if done.returncode != 0 or not out_csv.is_file():
            raise RuntimeError(last_error_line(done.stderr or done.stdout))
        record = json.loads(done.stdout.strip().splitlines()[-1])
        rows = pd.read_csv(out_csv, dtype={name: str for name in categorical})
        return rows, record


def peer_rare_rows(
    method: str, train: pd.DataFrame, categorical: list[str], n: int, **options
) -> tuple[pd.DataFrame, dict[str, object]]:
    """Up to ``n`` rare rows of ``method`` fitted on ``train``, both classes with the label a
    categorical column (:data:`TABLE`'s): it draws rows of both and keeps the rare ones (a
    filter after the release: post-processing), as many as the training share and
    :data:`DRAW_MARGIN` say it needs. The record notes how many it drew and kept."""
    rare_share = float((train[TABLE.label].astype(str) == TABLE.positive).mean())
    total = math.ceil(DRAW_MARGIN * n / max(rare_share, 1e-3))
    rows, record = peer_rows(method, train, [*categorical, TABLE.label], total, **options)
    rare = rows[rows[TABLE.label].astype(str) == TABLE.positive].drop(columns=TABLE.label)
    record = {**record, "drawn": len(rows), "rare_drawn": len(rare)}
    return rare.iloc[:n].reset_index(drop=True), record


def summarize(
    results: Iterable[Result], epsilons: list[float], methods: list[str], figure: str = "detection"
) -> str:
    """The markdown table of ``figure`` (``detection`` or ``utility``): a row per method and
    reference, a column per epsilon."""
    results = list(results)
    _cell = partial(_figure_cell, figure=figure)
    head = ["method", *(f"epsilon {_eps(e)}" for e in epsilons)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for method in methods:
        cells = [
            _cell([r for r in results if (r.method, r.epsilon) == (method, e)]) for e in epsilons
        ]
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    for name in REFERENCES:
        chosen = [r for r in results if r.method == name]
        if chosen:
            cells = [_cell(chosen)] * len(epsilons)
            lines.append(f"| {REFERENCE_NAMES[name]} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(CAPTIONS[figure])
    return "\n".join(lines)


CAPTIONS = {
    "detection": "Cells: balanced detection (boosting C2ST ROC-AUC against the held-out rare rows;"
    " 0.5: can't tell) mean +- sd over seeds, and the mean wall seconds of one fit and draw.",
    "utility": "Cells: utility, the PR-AUC on the held-out rows of both classes of a detector"
    " trained on the real training rows of the other class and the method's rare rows (real"
    " training rows: the ceiling), mean +- sd over seeds (the peers: and the wall seconds).",
}


def _eps(value: float) -> str:
    return f"{value:g}"


def _figure_cell(results: list[Result], figure: str = "detection") -> str:
    if not results:
        return "not run"
    scored = [r for r in results if math.isfinite(getattr(r, figure))]
    failed = [r for r in results if not math.isfinite(getattr(r, figure))]
    if not scored:
        return "failed: " + _escape(failed[-1].note or f"no {figure}")
    values = np.array([getattr(r, figure) for r in scored])
    sd = float(values.std(ddof=1)) if len(values) > 1 else float("nan")
    wall = float(np.mean([r.wall_s for r in scored]))
    text = f"{values.mean():.3f} ± {sd:.3f}" if math.isfinite(sd) else f"{values.mean():.3f}"
    text += f" ({wall:.0f} s)" if wall >= 1 else f" ({wall:.1f} s)"
    if failed:
        text += f"; {len(failed)} of {len(results)} failed: " + _escape(failed[-1].note)
    return text


def _escape(note: str) -> str:
    return " ".join(note.split()).replace("|", "\\|")[:160]


def run_one(
    result: Result,
    draw: Callable[[], tuple[pd.DataFrame, dict[str, object]]],
    score,
    utility: Callable[[pd.DataFrame], float] | None = None,
) -> Result:
    """``result`` with the figures of ``draw``'s rows, or the one line of why it has none."""
    start = time.perf_counter()
    try:
        rows, record = draw()
        result.wall_s = time.perf_counter() - start
        result.peer = record
        result.detection = score(rows)
        if utility is not None:
            result.utility = utility(rows)
    except Exception as err:  # noqa: BLE001 - a method's failure is its cell's note
        result.note = last_error_line(str(err)) if str(err) else type(err).__name__
        result.wall_s = time.perf_counter() - start
    return result


def json_line(result: object) -> str:
    """A result (any of the DP figures' dataclasses) as one JSON line, a missing figure as null."""

    def plain(value: object) -> object:
        if isinstance(value, float) and not math.isfinite(value):
            return None
        if isinstance(value, dict):
            return {key: plain(item) for key, item in value.items()}
        return value

    return json.dumps(plain(asdict(result)))


def report(result, head: str, details: str, out: Path | None) -> None:
    """One result as it lands (the DP figures' scripts): ``head: <detection, or why it failed>
    (details)`` on stderr, and a JSON line appended to ``out``, so a long run keeps what it has
    measured."""
    shown = f"{result.detection:.3f}" if not result.note else f"failed: {result.note}"
    if math.isfinite(getattr(result, "utility", float("nan"))):
        shown += f", utility {result.utility:.3f}"
    print(f"{head}: {shown} ({details})", file=sys.stderr, flush=True)
    if out is not None:
        with out.open("a") as handle:
            handle.write(json_line(result) + "\n")


def _marginals(train: pd.DataFrame, n: int, seed: int) -> tuple[pd.DataFrame, dict]:
    from scripts.tables_benchmark.baselines import marginal_rows

    return marginal_rows(train, n, seed), {}


def _real(train: pd.DataFrame, n: int, seed: int) -> tuple[pd.DataFrame, dict]:
    return train.sample(n, random_state=seed).reset_index(drop=True), {}


def arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m scripts.dp_peers", description=__doc__)
    parser.add_argument("--data", default=None, help="shared data folder ($WGANGP_SHARED_DATA)")
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated split seeds")
    parser.add_argument("--epsilons", default="1,3,10", help="comma-separated total epsilons")
    parser.add_argument("--methods", default=",".join(METHODS), help="a subset of the peers")
    parser.add_argument("--delta", type=float, default=1e-6, help="wgangp's public default")
    parser.add_argument("--epochs", default="", help="GAN epochs, e.g. dpgan=300,dpctgan=300")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per peer fit")
    parser.add_argument("--out", default=None, help="JSON lines file of the results")
    parser.add_argument(
        "--from-results",
        default=None,
        metavar="JSONL[,JSONL]",
        help="print the table of earlier runs' --out files (e.g. one per seed) instead of running",
    )
    return parser.parse_args(argv)


def read_results(paths: list[str]) -> list[Result]:
    """The results of earlier runs' ``--out`` files (null figures back to NaN)."""
    results = []
    for path in paths:
        for line in Path(path).read_text().splitlines():
            if line.strip():
                raw = json.loads(line)
                for key in ("detection", "wall_s", "utility"):
                    raw[key] = float("nan") if raw.get(key) is None else raw[key]
                results.append(Result(**raw))
    return results


def main(argv: list[str] | None = None) -> int:
    from wgangp.data.read.table_reader import read_table
    from wgangp.data.schema.inference import infer_schema
    from wgangp.data.schema.table_schema import RARE
    from wgangp.data.schema.validation import validate_table

    args = arguments(argv)
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    epsilons = [float(e) for e in args.epsilons.split(",") if e.strip()]
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = sorted(set(methods) - set(METHODS))
    if unknown:
        print(f"dp_peers: unknown method(s) {', '.join(unknown)}: choose from {', '.join(METHODS)}")
        return 2
    if args.from_results:
        found = read_results(args.from_results.split(","))
        print("\n\n".join(summarize(found, epsilons, methods, f) for f in CAPTIONS))
        return 0
    epochs = dict(part.split("=") for part in args.epochs.split(",") if part.strip())
    path = TABLE.path(shared_data_dir(args.data))
    if not path.is_file():
        print(f"dp_peers: no table at {path}: give --data the shared data folder")
        return 2
    frame = read_table(path)
    schema = infer_schema(frame, TABLE.label, TABLE.positive, source=path.name)
    frame = validate_table(frame, schema, source=path.name, min_rows_per_class=1)
    features = [column.name for column in schema.features]
    categorical = [c.name for c in schema.features if c.kind == "categorical"]
    is_rare = np.asarray(schema.classes(frame[schema.label])) == RARE
    rare, other = frame.loc[is_rare, features], frame.loc[~is_rare, [*features, TABLE.label]]
    out = Path(args.out) if args.out else None
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("")
    results: list[Result] = []
    for seed in seeds:
        train, held = rare_split(rare, seed)
        train_other, held_other = other_split(other, seed)
        both = pd.concat([train.assign(**{TABLE.label: TABLE.positive}), train_other])
        n = len(train)  # detection reads the first len(held); utility all of them
        score = held_out_scorer(schema, train, held)
        utility = utility_scorer(schema, train, train_other, held, held_other)
        draws = [
            (Result("marginals", None, seed), partial(_marginals, train, n, seed)),
            (Result("real", None, seed), partial(_real, train, n, seed)),
        ]
        for method in methods:
            for epsilon in epsilons:
                draw = partial(
                    peer_rare_rows, method, both, categorical, n, epsilon=epsilon, delta=args.delta,
                    seed=seed, epochs=int(epochs[method]) if method in epochs else None,
                    timeout=args.timeout,
                )  # fmt: skip
                draws.append((Result(method, epsilon, seed), draw))
        for result, draw in draws:
            run_one(result, draw, score, utility)
            results.append(result)
            head = f"seed {seed} {result.method} eps={result.epsilon}"
            report(result, head, f"{result.wall_s:.0f} s", out)
    print("\n\n".join(summarize(results, epsilons, methods, f) for f in CAPTIONS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
