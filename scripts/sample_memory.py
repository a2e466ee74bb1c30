"""``python -m scripts.sample_memory``: the peak memory of a draw per row, measured against
:func:`wgangp.serving.memory.draw_bytes_per_row`, and ``python -m wgangp.sample``'s peak as n
grows (its rows stream in chunks).

    python -m scripts.sample_memory [--out DIR] [--draw-mb 1200] [--skip-draws]
        [--stream 300000,3000000] [--big 1000000,10000000]

**Models.** Four tiny real runs (``python -m wgangp.train``, 2 steps, the product's default
networks: hidden [256, 256], calibrated) on generated tables of four shapes: few or many number
columns, categoricals of 3 to 300 levels (one-hot blocks), latent 128 or 16. Training length
does not change a draw's memory, only the shape does.

**Draws.** Each ``Synthesizer.sample(n)`` runs in a fresh process, which prints its peak RSS
(``ru_maxrss``), at two sizes: the larger one about ``--draw-mb`` of rows by the estimate (at
most 1,000,000 rows), the smaller a fifth of it. The bytes a row takes are the peak's growth
between them divided by the rows between (what the model, TensorFlow and Python hold is the
same in both). The estimate the product refuses draws by is printed beside it: it must not be
below.

**Streams.** ``python -m wgangp.sample model_uri=<bundle> n=N output=<file>`` in a fresh process,
its peak RSS printed: the widest model at each ``--stream`` N (CSV and Parquet), and the model of
Kaggle's shape (30 numbers, latent 128) at each ``--big`` N to Parquet; flat in N when chunks
stream. With ``--skip-draws`` only those two models are trained; each N takes minutes here.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from wgangp.serving.memory import draw_bytes_per_row

#: (name, number columns, categorical columns, levels each, latent size)
SHAPES = (
    ("4 numbers, 1 x 3 levels, latent 128", 4, 1, 3, 128),
    ("30 numbers, latent 128", 30, 0, 0, 128),
    ("4 numbers, 3 x 300 levels, latent 128", 4, 3, 300, 128),
    ("30 numbers, 2 x 100 levels, latent 16", 30, 2, 100, 16),
)
TABLE_ROWS = 20_000

_DRAW = """
import json, resource, sys
from wgangp.serving.synthesizer import Synthesizer
model = Synthesizer.load(sys.argv[1])
model.sample(int(sys.argv[2]), seed=0)
print(json.dumps({"peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "latent": model.latent_dim, "width": model.width,
                  "columns": len(model.columns)}))
"""
_STREAM = """
import resource, sys
import wgangp.sample as command
chunks = []
plain = command.chunk_rows
command.chunk_rows = lambda per_row: chunks.append(plain(per_row)) or chunks[-1]
assert command.main(sys.argv[1:]) == 0
print(chunks[0], resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def table(numbers: int, categoricals: int, levels: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    columns = {f"x{i}": rng.normal(i, 1 + i % 3, TABLE_ROWS).round(3) for i in range(numbers)}
    for c in range(categoricals):
        columns[f"c{c}"] = [f"L{v}" for v in rng.integers(0, levels, TABLE_ROWS)]
    columns["y"] = np.where(rng.random(TABLE_ROWS) < 0.2, "yes", "no")
    return pd.DataFrame(columns)


def train(folder: Path, frame: pd.DataFrame, latent: int) -> Path:
    """A 2-step run of the product's defaults on ``frame``; its bundle's folder."""
    path = folder / "table.csv"
    frame.to_csv(path, index=False)
    command = [
        sys.executable, "-m", "wgangp.train", f"data.path={path}", "data.label=y",
        "data.positive=yes", f"model.latent_dim={latent}", "trainer.steps=2",
        "trainer.progress=false", "evaluate.enabled=false", "tracking.enabled=false",
        f"hydra.run.dir={folder / 'out'}",
    ]  # fmt: skip
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    subprocess.run(command, check=True, capture_output=True, env=env, cwd=folder)
    return next((folder / "out").rglob("synthesizer.json")).parent


def peak(script: str, *args: str) -> str:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, env=env
    )
    if done.returncode:
        raise SystemExit(f"{' '.join(args)} failed: {done.stderr.strip().splitlines()[-1]}")
    return done.stdout.strip().splitlines()[-1]


def stream(bundle: Path, n: int, output: Path) -> str:
    chunk, kib = (
        int(v) for v in peak(_STREAM, f"model_uri={bundle}", f"n={n}", f"output={output}").split()
    )
    size = output.stat().st_size / 2**20
    output.unlink()
    return f"chunks of {chunk:7,} rows, peak RSS {kib / 1024:7,.0f} MiB, file {size:8,.0f} MiB"


def bundle_of(root: Path, index: int) -> Path:
    """The bundle of ``SHAPES[index]`` under ``root``, trained on first use (kept with --out)."""
    _, numbers, categoricals, levels, latent = SHAPES[index]
    folder = root / f"shape{index}"
    folder.mkdir(parents=True, exist_ok=True)
    found = list((folder / "out").rglob("synthesizer.json"))
    if found:
        return found[0].parent
    return train(folder, table(numbers, categoricals, levels), latent)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="keep the bundles here")
    parser.add_argument("--draw-mb", type=float, default=1200, help="the larger draw's size")
    parser.add_argument("--stream", default="300000,3000000", help="wgangp.sample n ('': none)")
    parser.add_argument("--big", default="1000000,10000000", help="Kaggle-shape n ('': none)")
    parser.add_argument("--skip-draws", action="store_true", help="only the streams")
    args = parser.parse_args()
    root = args.out or Path(tempfile.mkdtemp(prefix="sample-memory-"))
    for index, (name, *_) in enumerate(SHAPES):
        if args.skip_draws:
            break
        bundle = bundle_of(root, index)
        shape = json.loads(peak(_DRAW, str(bundle), "1"))
        estimate = draw_bytes_per_row(shape["latent"], shape["width"], shape["columns"])
        large = int(min(1_000_000, args.draw_mb * 2**20 / estimate)) // 1000 * 1000
        small = large // 5
        first, second = (json.loads(peak(_DRAW, str(bundle), str(n))) for n in (small, large))
        per_row = (second["peak_kib"] - first["peak_kib"]) * 1024 / (large - small)
        print(
            f"{name:40s} width {shape['width']:4d}, {shape['columns']:3d} columns: measured "
            f"{per_row:7,.0f} B/row ({small:,} to {large:,} rows, peak "
            f"{second['peak_kib'] / 1024:,.0f} MiB), estimate {estimate:7,} B/row "
            f"({estimate / per_row:.2f}x)",
            flush=True,
        )
    for n in (int(v) for v in args.stream.split(",") if v):
        for suffix in ("csv", "parquet"):
            result = stream(bundle_of(root, 2), n, root / f"stream-{n}.{suffix}")
            print(
                f"wgangp.sample n={n:>10,} output=.{suffix:7s} (widest model): {result}", flush=True
            )
    for n in (int(v) for v in args.big.split(",") if v):
        result = stream(bundle_of(root, 1), n, root / f"stream-{n}.parquet")
        print(f"wgangp.sample n={n:>10,} output=.parquet (Kaggle's shape): {result}", flush=True)


if __name__ == "__main__":
    main()
