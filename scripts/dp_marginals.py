"""``python -m scripts.dp_marginals``: independent column marginals released under differential
privacy (no GAN), scored on the shared credit table exactly as ``scripts.dp_peers`` scores the DP
peers.

    python -m scripts.dp_marginals --data DIR [--seeds 0,1,2] [--epsilons 1,3,10]
        [--delta 1e-6] [--out results.jsonl]

**What it measures, and why.** A synthesizer that got every column's marginal right and no
dependence between columns reads about 0.867 on this benchmark (``dp_peers``' "independent
marginals (no DP)" reference, seeds 0 and 1). Under differential privacy even the marginals cost
budget: this script spends the *whole* budget on them and nothing on dependence, so its figure is
what the marginals alone can reach at each epsilon: the floor a DP synthesizer's marginals put
under its detection score: what spending a whole budget on independent marginals, through these
mechanisms, buys (a DP model reading above it does worse than that; one reading below it does
better, by better marginals or by dependence).

**The release** (each seed; ``method`` ``dp_marginals``). The table's 1,254 ``bad`` rows are split
70/30 by :func:`scripts.dp_scores.rare_split` (878 training rows, 376 held out). Every release reads
the 878 training rows only, each row its own entity, through this repo's mechanisms
(:mod:`wgangp.privacy.mechanisms`), each a Gaussian release of sensitivity 1 at one noise
multiplier, :func:`wgangp.privacy.plan.statistics_noise` for ``k`` releases spending
:data:`SHARE` of epsilon together (the whole budget, less a margin for the accountant's grid);
:func:`wgangp.privacy.accountant.epsilon_spent` (PLD) confirms the total is within epsilon.

- A number column: two releases. :func:`~wgangp.privacy.mechanisms.dp_bounds` on the default
  grid (``spread=True``), then :func:`~wgangp.privacy.mechanisms.dp_quantiles` at probabilities
  0, 0.005, ..., 1 (200 steps) on ``np.linspace(low, high, 1025)`` edges (``spread=True``); rows
  are drawn by inverse-CDF interpolation of those quantiles, integers rounded.
- A categorical column (Home, Marital, Records, Job): one
  :func:`~wgangp.privacy.mechanisms.noisy_histogram` over the levels the schema lists, negative
  counts clipped to 0, drawn from the normalised counts (uniform if all clip to 0). The level
  lists are a fixed list, not :func:`~wgangp.privacy.mechanisms.dp_levels`: they are those of
  :func:`~wgangp.data.schema.inference.infer_schema` of the whole file (as ``dp_peers`` uses),
  so they are read from the data, not private, as smartnoise's categorical domains are.
- A column the schema marks nullable (its gaps, too, read from the whole file): one
  :func:`~wgangp.privacy.mechanisms.noisy_share` of its gaps; drawn rows get gaps at that rate.

On this table that is 9 x 2 + 4 + 6 = 28 releases. 376 rows are drawn and scored against the 376
held-out rows by ``dp_peers``' scoring (:func:`~scripts.dp_scores.in_form`, a
:class:`~wgangp.evaluation.encoding.TableEncoding` fitted on the training rows,
``scripts.tables_benchmark.scores.detection`` with ``dp_peers``' repeats, boosting iterations and
seed: balanced boosting C2ST ROC-AUC, 0.5 can't tell). The non-DP ``marginals`` reference
(``dp_peers``' own) is scored alike on the same splits.

Reading it: the draws interpolate within the released bins, so a point mass (Assets' and Debt's
zeros, half and four fifths of the rare rows) comes out spread over the first bin's width, and
the bounds, released at the 0.1% and 99.9% tails of 878 entities, can land far off at epsilon 1
(they are in each ``--out`` record). Neither method models dependence, so the gap to the non-DP
reference is the marginals' shape alone, much of it these point masses: on seed 0 at epsilon 10,
swapping the DP Assets or Debt column alone into the non-DP marginal rows moves detection from
0.86 to about 0.95.

Prints a markdown table (method x epsilon: detection mean +- sd over the seeds) and the epsilon
each setting spent; ``--out`` gets one JSON line per method, epsilon and seed.
"""

from __future__ import annotations

import argparse
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from scripts.dp_peers import TABLE, Result, _marginals, report, run_one
from scripts.dp_scores import held_out_scorer, rare_split
from scripts.tables_benchmark.tables import shared_data_dir

METHOD = "dp_marginals"
REFERENCE = "marginals"
REFERENCE_NAME = "independent marginals (no DP)"
#: The share of epsilon the releases spend together: all of it but a margin for the PLD
#: accountant's pessimistic grid (``epsilon_spent`` then reads 0.999 x epsilon, within it).
SHARE = 0.999
#: The quantiles a number column releases: 0 to 1 in 200 steps.
PROBABILITIES = np.linspace(0.0, 1.0, 201)
#: The equal bins of a number's quantile release between its released bounds.
QUANTILE_EDGES = 1025


def release_count(schema) -> int:
    """How many Gaussian releases the schema's features take (a public count: the schema's
    kinds and nullable flags)."""
    features = schema.features
    numbers = sum(1 for c in features if c.kind != "categorical")
    categorical = sum(1 for c in features if c.kind == "categorical")
    return 2 * numbers + categorical + sum(1 for c in features if c.nullable)


def _floats(values: pd.Series) -> np.ndarray:
    """A number column as floats, gaps (NA) as NaN."""
    return pd.to_numeric(values, errors="coerce").astype("float64").to_numpy(na_value=np.nan)


def _gap_mask(values: pd.Series) -> np.ndarray:
    return values.isna().to_numpy(dtype=bool)


def dp_marginal_rows(
    train: pd.DataFrame, schema, n: int, *, sigma: float, rng: np.random.Generator
) -> tuple[pd.DataFrame, list, dict[str, tuple[float, float]]]:
    """``n`` rows whose columns are drawn independently from marginals of ``train`` released at
    noise multiplier ``sigma`` (each row its own entity), the releases' events, and each number
    column's released bounds (released values: safe to report)."""
    from wgangp.privacy.mechanisms import (
        DEFAULT_GRID,
        dp_bounds,
        dp_quantiles,
        noisy_histogram,
        noisy_share,
    )

    entities = np.arange(len(train), dtype=np.int64)
    events: list = []
    bounds: dict[str, tuple[float, float]] = {}
    out: dict[str, np.ndarray] = {}
    for column in schema.features:
        values = train[column.name]
        if column.kind == "categorical":
            levels = list(column.levels or ())
            index = {level: i for i, level in enumerate(levels)}
            codes = np.array(
                [np.nan if pd.isna(v) else float(index.get(v, np.nan)) for v in values]
            )
            edges = np.arange(len(levels) + 1, dtype=np.float64) - 0.5
            counts, event = noisy_histogram(codes, entities, edges, sigma, rng)
            events.append(event)
            counts = np.maximum(counts, 0.0)
            shares = (
                counts / counts.sum() if counts.sum() > 0 else np.full(len(levels), 1 / len(levels))
            )
            drawn = np.array(levels, dtype=object)[rng.choice(len(levels), size=n, p=shares)]
        else:
            numbers = _floats(values)
            (low, high), event = dp_bounds(numbers, entities, sigma, rng, spread=True)
            events.append(event)
            bounds[column.name] = (low, high)
            # As wgangp's private transform: equal bins between the bounds, the grid if they meet.
            edges = np.linspace(low, high, QUANTILE_EDGES) if high > low else DEFAULT_GRID
            quantiles, event = dp_quantiles(
                numbers, entities, PROBABILITIES, sigma, rng, edges=edges, spread=True
            )
            events.append(event)
            drawn = np.interp(rng.uniform(0.0, 1.0, n), PROBABILITIES, quantiles)
            if column.kind == "integer":
                drawn = np.rint(drawn)
            drawn = drawn.astype(object)
        if column.nullable:
            share, event = noisy_share(_gap_mask(values), entities, sigma, rng)
            events.append(event)
            drawn = np.where(rng.uniform(0.0, 1.0, n) < share, np.nan, drawn).astype(object)
        out[column.name] = drawn
    return pd.DataFrame(out), events, bounds


def summarize(
    results: list[Result], epsilons: list[float], spent: dict[float, tuple[float, float]]
) -> str:
    """The markdown table (a row per method, a column per epsilon) and the spent epsilons."""
    head = ["method", *(f"epsilon {e:g}" for e in epsilons)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    cells = [_cell([r for r in results if (r.method, r.epsilon) == (METHOD, e)]) for e in epsilons]
    lines.append(f"| {METHOD} | " + " | ".join(cells) + " |")
    reference = _cell([r for r in results if r.method == REFERENCE])
    lines.append(f"| {REFERENCE_NAME} | " + " | ".join([reference] * len(epsilons)) + " |")
    lines.append("")
    lines.append(
        "Cells: balanced detection (boosting C2ST ROC-AUC against the held-out rows; 0.5: can't "
        "tell) mean +- sd over seeds."
    )
    for epsilon in epsilons:
        if epsilon in spent:
            sigma, used = spent[epsilon]
            lines.append(
                f"epsilon {epsilon:g}: noise multiplier {sigma:.4g} on each release, "
                f"epsilon spent {used:.4f} (PLD)"
            )
    return "\n".join(lines)


def _cell(results: list[Result]) -> str:
    scored = np.array([r.detection for r in results if np.isfinite(r.detection)])
    failed = [r for r in results if not np.isfinite(r.detection)]
    if not len(scored):
        return "failed: " + failed[-1].note if failed else "not run"
    text = f"{scored.mean():.3f}"
    if len(scored) > 1:
        text += f" ± {scored.std(ddof=1):.3f}"
    if failed:
        text += f" ({len(failed)} failed: {failed[-1].note})"
    return text


def arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m scripts.dp_marginals", description=__doc__)
    parser.add_argument("--data", default=None, help="shared data folder ($WGANGP_SHARED_DATA)")
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated split seeds")
    parser.add_argument("--epsilons", default="1,3,10", help="comma-separated total epsilons")
    parser.add_argument("--delta", type=float, default=1e-6, help="wgangp's public default")
    parser.add_argument("--out", default=None, help="JSON lines file of the results")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    from wgangp.data.read.table_reader import read_table
    from wgangp.data.schema.inference import infer_schema
    from wgangp.data.schema.table_schema import RARE
    from wgangp.data.schema.validation import validate_table
    from wgangp.privacy.accountant import Budget, epsilon_spent
    from wgangp.privacy.plan import statistics_noise

    started = time.perf_counter()
    args = arguments(argv)
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    epsilons = [float(e) for e in args.epsilons.split(",") if e.strip()]
    path = TABLE.path(shared_data_dir(args.data))
    if not path.is_file():
        print(f"dp_marginals: no table at {path}: give --data the shared data folder")
        return 2
    frame = read_table(path)
    schema = infer_schema(frame, TABLE.label, TABLE.positive, source=path.name)
    frame = validate_table(frame, schema, source=path.name, min_rows_per_class=1)
    features = [column.name for column in schema.features]
    rare = frame.loc[schema.classes(frame[schema.label]) == RARE, features]
    releases = release_count(schema)
    noise = {e: statistics_noise(Budget(e, args.delta), SHARE, releases) for e in epsilons}
    spent: dict[float, tuple[float, float]] = {}
    out = Path(args.out) if args.out else None
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("")
    results: list[Result] = []
    for seed in seeds:
        train, held = rare_split(rare, seed)
        n = len(held)
        score = held_out_scorer(schema, train, held)

        def draw(epsilon: float, train=train, n=n, seed=seed) -> tuple[pd.DataFrame, dict]:
            sigma = noise[epsilon]
            rng = np.random.default_rng([seed, int(round(epsilon * 1000))])
            rows, events, bounds = dp_marginal_rows(train, schema, n, sigma=sigma, rng=rng)
            if len(events) != releases:
                raise RuntimeError(f"{len(events)} releases, planned {releases}")
            if epsilon not in spent:
                spent[epsilon] = (sigma, epsilon_spent(events, args.delta))
            used = spent[epsilon][1]
            if used > epsilon:
                raise RuntimeError(f"spent epsilon {used:.4f} > {epsilon:g}")
            record = {
                "releases": releases,
                "noise_multiplier": sigma,
                "epsilon_spent": used,
                "delta": args.delta,
                "accountant": "dp_accounting PLD",
                "levels": "schema of the whole file (not private)",
                "bounds": {name: list(pair) for name, pair in bounds.items()},
            }
            return rows, record

        draws = [(Result(REFERENCE, None, seed), partial(_marginals, train, n, seed))]
        draws += [(Result(METHOD, e, seed), partial(draw, e)) for e in epsilons]
        for result, run in draws:
            run_one(result, run, score)
            results.append(result)
            head = f"seed {seed} {result.method} eps={result.epsilon}"
            report(result, head, f"{result.wall_s:.1f} s", out)
    print(summarize(results, epsilons, spent))
    print(f"dp_marginals: {time.perf_counter() - started:.0f} s in all", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
