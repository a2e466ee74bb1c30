"""Peer: CTGAN 0.12.1 fitted on one table's coded rows, sampled, for the quality benchmark.

Runs in ``.bench-envs/ctgan`` (``bash scripts/bench/peers/setup_envs.sh ctgan``) from the repo
root; reads numbers only (the benchmark codes categoricals and gaps, scripts/tables_benchmark/
codes.py) so no dtype has to cross the two environments:

    .bench-envs/ctgan/bin/python -m scripts.bench.peers.ctgan_table --rows IN.csv \
        --discrete a,b --epochs 300 --n 100 --seed 0 --out OUT.csv

CTGAN's own defaults otherwise (batch 500, pac 10, 256-256 networks, Gumbel-softmax heads for
the discrete columns). Prints one JSON line: fit and sample seconds.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.bench.peers.ctgan_table")
    parser.add_argument("--rows", required=True, help="CSV of the coded training rows")
    parser.add_argument("--discrete", default="", help="comma-separated discrete columns")
    parser.add_argument("--epochs", type=int, default=300)
    parser.add_argument("--n", type=int, required=True, help="rows to sample")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, help="CSV the sampled rows are written to")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")

    import pandas as pd
    from ctgan import CTGAN

    rows = pd.read_csv(args.rows)
    discrete = [name for name in args.discrete.split(",") if name]
    rows[discrete] = rows[discrete].astype(int)
    model = CTGAN(epochs=args.epochs, enable_gpu=False)
    model.set_random_state(args.seed)
    start = time.perf_counter()
    model.fit(rows, discrete)
    fit_s = time.perf_counter() - start
    start = time.perf_counter()
    sampled = model.sample(args.n)
    sample_s = time.perf_counter() - start
    sampled.to_csv(args.out, index=False)
    print(json.dumps({"fit_s": round(fit_s, 3), "sample_s": round(sample_s, 3), "rows": len(rows)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
