"""How fast conditional sampling is on a trained model: the time per generated row, the time to
draw 100 and 10,000 rows under a condition met by a given share of rows, and the time a condition
no row meets takes to fail (mean and spread over seeds).

    python -m scripts.where_speed --model-uri runs:/<id> [--tracking-uri URI] [--column amount]

The condition is a window of one number column (default: the first) whose share of generated
rows is measured on a pilot draw, so the figures hold for any table. docs/api.md keeps them.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

#: Shares of generated rows the timed windows hold (measured on the pilot draw).
SHARES = (1e-2, 1e-3, 1e-4)
PILOT_ROWS = 1_000_000
#: Rows asked for under each window.
ASKED = (100, 10_000)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-uri", required=True)
    parser.add_argument("--tracking-uri")
    parser.add_argument("--column", help="a number column (default: the first)")
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args(argv)

    import wgangp
    from wgangp.errors import WgangpError

    synthesizer = wgangp.load(args.model_uri, args.tracking_uri)
    kinds = {c.name: c.kind for c in synthesizer.schema.features}
    numbers = [name for name, kind in kinds.items() if kind == "continuous"]
    numbers += [name for name, kind in kinds.items() if kind == "integer"]
    column = args.column or numbers[0]
    seeds = range(args.seeds)

    per_row = []
    for seed in seeds:
        started = time.perf_counter()
        synthesizer.sample_class(200_000, 1, seed=seed)
        per_row.append((time.perf_counter() - started) / 200_000 * 1e6)
    print(f"| unconditional draw | {_spread(per_row)} µs per row |")

    pilot = synthesizer.sample_class(PILOT_ROWS, 1, seed=10_000)[column].dropna().to_numpy()
    pilot = np.sort(pilot.astype(float))
    for share in SHARES:
        low = float(np.quantile(pilot, 0.5))
        high = float(np.quantile(pilot, min(1.0, 0.5 + share)))
        met = float(np.mean((pilot >= low) & (pilot <= high)))
        for asked in ASKED:
            timed = []
            for seed in seeds:
                started = time.perf_counter()
                try:
                    synthesizer.sample(asked, where={column: [low, high]}, seed=seed)
                    timed.append(time.perf_counter() - started)
                except WgangpError as err:
                    print(f"| {asked:,} rows, share {met:.2g} | failed: {err} |")
                    break
            else:
                shown = f"{asked:,} rows, {column} window met by {met:.2g} of rows"
                print(f"| {shown} | {_spread(timed)} s |")

    values = np.unique(pilot)
    at = int(np.argmax(np.diff(values)))
    empty = [float(values[at] + (values[at + 1] - values[at]) / 3)] * 2  # between two rows
    for asked in (ASKED[0], 1):
        failed, line = [], ""
        for seed in seeds:
            started = time.perf_counter()
            try:
                synthesizer.sample(asked, where={column: empty}, seed=seed)
            except WgangpError as err:
                failed.append(time.perf_counter() - started)
                line = str(err)
        shown = f"{asked} row(s), a {column} window no pilot row meets"
        print(
            f"| {shown} | failed for {len(failed)} of {len(seeds)} seeds, in {_spread(failed)} s |"
        )
    print(f"\nthe last line: {line}")


def _spread(values: list[float]) -> str:
    if not values:
        return "n/a"
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.mean(values):.3g} ± {sd:.2g}"


if __name__ == "__main__":
    main()
