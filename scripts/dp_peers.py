"""``python -m scripts.dp_peers``: differentially private peers scored the way this project
scores its own rows, on the shared credit table, at the same epsilons.

    python -m scripts.dp_peers [--data DIR] [--seeds 0,1,2] [--epsilons 1,3,10]
        [--methods dpctgan,mst,aim,dpgan] [--delta 1e-5] [--epochs dpgan=30,dpctgan=60]
        [--out results.jsonl] [--from-results a.jsonl,b.jsonl]

Each seed splits the table's 1,254 ``bad`` rows 70/30 (878 training rows, 376 held out; seeded,
not stratified). Each peer (smartnoise-synth 1.0.8's DPCTGAN, MST and AIM; synthcity 0.2.12's
DP-GAN) is fitted in its own env (``bash scripts/bench/peers/setup_envs.sh smartnoise
synthcity``) on the 878 training rows' features only, at each epsilon (the whole budget, its
preprocessing included: ``scripts/bench/peers/dp_table.py``), draws 376 rows, and is scored
against the 376 held-out rows by the tables benchmark's balanced detection
(``scripts.tables_benchmark.scores.detection``: boosting C2ST ROC-AUC, half-split repeats; 0.5
can't tell) on :class:`~wgangp.evaluation.encoding.TableEncoding` matrices fitted on the training
rows. The schema is :func:`~wgangp.data.schema.inference.infer_schema` of the whole file (label
``Status``, class ``bad``), the rows put in its form by
:func:`~wgangp.data.schema.validation.validate_table`. Two references are scored alike, without
privacy: independent marginals of the training rows and a random 376 of the training rows.

Prints a markdown table (method x epsilon: detection mean +- sd over the seeds, mean wall
seconds of a fit and draw); a method that fails shows its last error line. ``--out`` gets one
JSON line per method, epsilon and seed, with the peer's record (its epsilon accounting).
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
TRAIN_SHARE = 0.7
REPEATS, GBM_MAX_ITER, DETECTION_SEED = 10, 200, 0


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


def rare_split(rare: pd.DataFrame, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rare rows split 70/30 by ``seed`` (rounded: 1,254 rows give 878 and 376)."""
    order = np.random.default_rng(seed).permutation(len(rare))
    n_train = int(round(TRAIN_SHARE * len(rare)))
    train = rare.iloc[order[:n_train]].reset_index(drop=True)
    held = rare.iloc[order[n_train:]].reset_index(drop=True)
    return train, held


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


def in_form(rows: pd.DataFrame, schema) -> pd.DataFrame:
    """Generated rows as the schema's features: numbers numeric, integers rounded (no clipping:
    post-processing that reads no training row)."""
    out = {}
    for column in schema.features:
        values = rows[column.name]
        if column.kind == "categorical":
            out[column.name] = values.astype(object).where(values.notna(), np.nan)
            continue
        numbers = pd.to_numeric(values, errors="coerce")
        out[column.name] = np.rint(numbers) if column.kind == "integer" else numbers
    return pd.DataFrame(out)


def summarize(results: Iterable[Result], epsilons: list[float], methods: list[str]) -> str:
    """The markdown table: a row per method and reference, a column per epsilon."""
    results = list(results)
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
    lines.append(
        "Cells: balanced detection (boosting C2ST ROC-AUC against the held-out rows; 0.5: can't "
        "tell) mean +- sd over seeds, and the mean wall seconds of one fit and draw."
    )
    return "\n".join(lines)


def _eps(value: float) -> str:
    return f"{value:g}"


def _cell(results: list[Result]) -> str:
    if not results:
        return "not run"
    scored = [r for r in results if math.isfinite(r.detection)]
    failed = [r for r in results if not math.isfinite(r.detection)]
    if not scored:
        return "failed: " + _escape(failed[-1].note)
    values = np.array([r.detection for r in scored])
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
    result: Result, draw: Callable[[], tuple[pd.DataFrame, dict[str, object]]], score
) -> Result:
    """``result`` with the figures of ``draw``'s rows, or the one line of why it has none."""
    start = time.perf_counter()
    try:
        rows, record = draw()
        result.wall_s = time.perf_counter() - start
        result.peer = record
        result.detection = score(rows)
    except Exception as err:  # noqa: BLE001 - a method's failure is its cell's note
        result.note = last_error_line(str(err)) if str(err) else type(err).__name__
        result.wall_s = time.perf_counter() - start
    return result


def held_out_scorer(
    schema, train: pd.DataFrame, held: pd.DataFrame
) -> Callable[[pd.DataFrame], float]:
    """Detection of generated rows against the ``held`` real rows, on an encoding fitted on the
    ``train`` rows: the one way every method of the DP figures is scored."""
    from threadpoolctl import threadpool_limits

    from scripts.tables_benchmark.scores import detection
    from wgangp.evaluation.encoding import TableEncoding

    encoding = TableEncoding(schema, train)
    real = encoding.model_matrix(held)

    def score(rows: pd.DataFrame) -> float:
        generated = encoding.model_matrix(in_form(rows, schema).iloc[: len(real)])
        with threadpool_limits(limits=1):
            return detection(
                real, generated, repeats=REPEATS, gbm_max_iter=GBM_MAX_ITER, seed=DETECTION_SEED
            )

    return score


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
    parser.add_argument("--delta", type=float, default=1e-5)
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
                for key in ("detection", "wall_s"):
                    raw[key] = float("nan") if raw[key] is None else raw[key]
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
        print(summarize(read_results(args.from_results.split(",")), epsilons, methods))
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
    rare = frame.loc[schema.classes(frame[schema.label]) == RARE, features]
    out = Path(args.out) if args.out else None
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("")
    results: list[Result] = []
    for seed in seeds:
        train, held = rare_split(rare, seed)
        n = len(held)
        score = held_out_scorer(schema, train, held)

        draws = [
            (Result("marginals", None, seed), partial(_marginals, train, n, seed)),
            (Result("real", None, seed), partial(_real, train, n, seed)),
        ]
        for method in methods:
            for epsilon in epsilons:
                draw = partial(
                    peer_rows, method, train, categorical, n, epsilon=epsilon, delta=args.delta,
                    seed=seed, epochs=int(epochs[method]) if method in epochs else None,
                    timeout=args.timeout,
                )  # fmt: skip
                draws.append((Result(method, epsilon, seed), draw))
        for result, draw in draws:
            run_one(result, draw, score)
            results.append(result)
            head = f"seed {seed} {result.method} eps={result.epsilon}"
            report(result, head, f"{result.wall_s:.0f} s", out)
    print(summarize(results, epsilons, methods))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
