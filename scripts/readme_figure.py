"""The README's picture: generated frauds against real ones, ``python -m scripts.readme_figure``.

    python -m scripts.readme_figure [--data PATH] [--seed 0] [--out docs/img/frauds.png]

Trains the product model as a user runs it (``python -m wgangp.train +experiment=stable_gp``, in
a subprocess) on the shared sample of Kaggle's real rows (``--data``, else
``$WGANGP_REAL_SAMPLE``, else ``../shared/data/creditcard_real_sample.csv.gz``), then draws as
many frauds from what the run shipped as its test split holds, and plots them against those
held-out real frauds on V14 and V17 (the two features where Kaggle's frauds stand furthest from
the other rows), with the split's other rows behind. It prints what the picture shows (rows,
each feature's mean and spread, the two-sample KS distance) and writes the PNG; the figures
belong to the README's caption, measured here. No real row is written anywhere but the picture.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
#: The picture's two features: where Kaggle's frauds lie furthest from the other rows.
FEATURES = ("V14", "V17")
#: The other rows drawn behind the frauds (a uniform subset: more would only darken the plot).
BACKGROUND_ROWS = 3000


def default_data() -> Path:
    env = os.environ.get("WGANGP_REAL_SAMPLE")
    return Path(env) if env else REPO.parent / "shared" / "data" / "creditcard_real_sample.csv.gz"


def train(data: Path, seed: int, work: Path) -> Path:
    """The product model's run on ``data``; its output folder (the bundle in ``synthesizer/``)."""
    out = work / "run"
    command = [
        sys.executable, "-m", "wgangp.train", "+experiment=stable_gp", f"seed={seed}",
        f"data.path={data}", "data.schema=creditcard", "evaluate.enabled=false",
        "trainer.progress=false", f"tracking.uri=sqlite:///{work / 'mlflow.db'}",
        f"hydra.run.dir={out}", f"trainer.checkpoint_dir={out / 'checkpoints'}",
    ]  # fmt: skip
    subprocess.run(command, check=True, cwd=work, stdout=subprocess.DEVNULL)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m scripts.readme_figure", description=__doc__)
    parser.add_argument("--data", type=Path, default=None, help="Kaggle's rows (CSV, .csv.gz)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "img" / "frauds.png")
    args = parser.parse_args(argv)
    data = (args.data or default_data()).resolve()
    if not data.is_file():
        sys.exit(f"readme_figure: no real rows at {data}; pass --data or set WGANGP_REAL_SAMPLE")

    from wgangp.cli import quiet_tensorflow

    quiet_tensorflow()  # before TensorFlow is imported (Synthesizer.load)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from scipy.stats import ks_2samp

    from wgangp.config import DataConfig
    from wgangp.data.prepare import prepare_data
    from wgangp.data.schema.table_schema import RARE
    from wgangp.serving.synthesizer import Synthesizer

    with tempfile.TemporaryDirectory(prefix="wgangp-figure-") as tmp:
        started = time.perf_counter()
        run = train(data, args.seed, Path(tmp))
        trained_s = time.perf_counter() - started
        synthesizer = Synthesizer.load(run / "synthesizer")
    # The split the run trained on (same file, settings and seed): its test rows are held out.
    split = prepare_data(
        DataConfig(path=str(data), schema="creditcard"), seed=args.seed, launch_dir=Path.cwd()
    )
    test = split.score_rows.test
    real = split.rare(test)
    others = test[split.classes(test) != RARE]
    rng = np.random.default_rng(args.seed)
    behind = others.iloc[rng.choice(len(others), min(BACKGROUND_ROWS, len(others)), False)]
    generated = synthesizer.sample(len(real), seed=args.seed)

    x, y = FEATURES
    print(f"{data.name}: the product model, seed {args.seed}, trained in {trained_s:.0f} s")
    print(f"{len(real)} held-out real frauds, {len(generated)} generated, {len(behind)} others")
    for name in FEATURES:
        ks = ks_2samp(real[name], generated[name]).statistic
        print(
            f"  {name}: real frauds {real[name].mean():.2f} +- {real[name].std():.2f}, "
            f"generated {generated[name].mean():.2f} +- {generated[name].std():.2f}, "
            f"others {others[name].mean():.2f} +- {others[name].std():.2f}; KS {ks:.3f}"
        )

    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=100)
    ax.scatter(behind[x], behind[y], s=3, c="#c8c8c8", lw=0, label="other rows (real)")
    ax.scatter(real[x], real[y], s=14, c="#d62728", alpha=0.75, lw=0, label="frauds (real)")
    ax.scatter(
        generated[x], generated[y], s=14, marker="x", c="#1f4e9c", lw=0.9,
        label="frauds (generated)",
    )  # fmt: skip
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.set_title(
        f"{len(generated)} generated frauds against the {len(real)} real ones the run never saw",
        fontsize=10,
    )
    ax.legend(loc="lower left", fontsize=8, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=100)
    print(f"wrote {args.out} ({args.out.stat().st_size // 1024} KB)")


if __name__ == "__main__":
    main()
