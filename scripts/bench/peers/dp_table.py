"""Peer: a differentially private synthesizer fitted on one table's rows, sampled, for the DP
comparison (``scripts/dp_peers.py``).

Runs in its library's env (``bash scripts/bench/peers/setup_envs.sh smartnoise|synthcity``) from
the repo root; reads the rows as the table has them (categoricals as text, gaps empty):

    .bench-envs/smartnoise/bin/python -m scripts.bench.peers.dp_table --method mst \
        --rows IN.csv --categorical Home,Marital --epsilon 3 --delta 1e-5 --n 376 --seed 0 \
        --out OUT.csv

Methods: ``dpctgan``, ``mst``, ``aim`` (smartnoise-synth 1.0.8: ``Synthesizer.create``) and
``dpgan`` (synthcity 0.2.12: ``Plugins().get("dpgan")``), each with its library's defaults but
for epsilon, delta, and (``--epochs``) the GAN's epochs. The whole ``--epsilon`` is spent:

- smartnoise: ``--preprocessor-eps`` of it goes to the DP bounds of the numeric columns (its
  preprocessor's ``approx_bounds``, split evenly over them; no bounds are given, they would
  leak), the rest to the synthesizer: ``fit`` subtracts what the preprocessor spent. Every
  numeric column is continuous (MST and AIM bin it into 10 bins between the DP bounds), every
  column nullable (a gap is its own value); the categoricals' levels are read from the rows, as
  smartnoise does (it takes a categorical's domain as public). DPCTGAN gets the most epochs
  (at most its 300) that its own accountant keeps within the rest (:func:`dpctgan_epochs`).
- dpgan: all of it to the DP-SGD of the discriminator (opacus' ``make_private_with_epsilon``
  over the planned epochs). Gaps do not go to synthcity: a numeric gap is filled with 0 beside
  a 0/1 ``<name>__gap`` column, a categorical gap is the level ``__gap__``, both undone here.

``--seed`` seeds numpy, torch and synthcity; MST's and AIM's noise comes from OpenDP, which takes
no seed, so their rows differ from run to run.

Prints one JSON line: fit and sample seconds and the epsilon accounting (``spent_eps``: what the
library's accountant reports at the end of training, when it has one).
"""

from __future__ import annotations

import argparse
import json
import random
import time
import warnings

SMARTNOISE = ("dpctgan", "mst", "aim")
METHODS = (*SMARTNOISE, "dpgan")
GAP_LEVEL = "__gap__"
GAP_SUFFIX = "__gap"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.bench.peers.dp_table")
    parser.add_argument("--method", required=True, choices=METHODS)
    parser.add_argument("--rows", required=True, help="CSV of the training rows (features)")
    parser.add_argument("--categorical", default="", help="comma-separated categorical columns")
    parser.add_argument("--epsilon", type=float, required=True, help="the whole budget")
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument(
        "--preprocessor-eps",
        type=float,
        default=None,
        help="smartnoise: the part of epsilon spent on the numeric columns' bounds (required)",
    )
    parser.add_argument("--epochs", type=int, default=None, help="GAN epochs (library default)")
    parser.add_argument("--n", type=int, required=True, help="rows to sample")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, help="CSV the sampled rows are written to")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")

    import numpy as np
    import pandas as pd

    categorical = [name for name in args.categorical.split(",") if name]
    rows = pd.read_csv(args.rows, dtype={name: str for name in categorical})
    random.seed(args.seed)
    np.random.seed(args.seed)
    fit = _smartnoise if args.method in SMARTNOISE else _dpgan
    sampled, record = fit(args, rows, categorical)
    sampled.to_csv(args.out, index=False)
    print(json.dumps({"method": args.method, "rows": len(rows), **record}))
    return 0


def _smartnoise(args: argparse.Namespace, rows, categorical: list[str]):
    import opacus
    import pandas as pd
    import torch
    from snsynth import Synthesizer

    torch.manual_seed(args.seed)
    continuous = [name for name in rows.columns if name not in categorical]
    if args.preprocessor_eps is None:
        raise SystemExit("dp_table: smartnoise needs --preprocessor-eps (the bounds' part)")
    preprocessor_eps = args.preprocessor_eps
    options = {"delta": args.delta}
    if args.method == "dpctgan":
        options["epochs"] = dpctgan_epochs(
            len(rows), args.epsilon - preprocessor_eps, args.delta, args.epochs or EPOCHS
        )
    model = Synthesizer.create(args.method, epsilon=args.epsilon, **options)
    # DPCTGAN makes its opacus PrivacyEngine inside fit: keep it to read what was spent.
    engines = []

    class Recorded(opacus.PrivacyEngine):
        def __init__(self, *a, **k) -> None:
            super().__init__(*a, **k)
            engines.append(self)

    opacus.PrivacyEngine = Recorded
    # Gaps as None, the form smartnoise's transformers test for.
    data = rows.astype(object).where(rows.notna(), None)
    start = time.perf_counter()
    model.fit(
        data,
        categorical_columns=categorical,
        continuous_columns=continuous,
        preprocessor_eps=preprocessor_eps,
        nullable=True,
    )
    fit_s = time.perf_counter() - start
    start = time.perf_counter()
    sampled = model.sample(args.n)
    sample_s = time.perf_counter() - start
    spent_pre = float(model._transformer.odometer.spent[0])
    record = {
        "epsilon": args.epsilon,
        "delta": args.delta,
        "preprocessor_eps": spent_pre,
        "training_eps": float(model.epsilon),  # what fit left the synthesizer
        "fit_s": round(fit_s, 3),
        "sample_s": round(sample_s, 3),
    }
    if args.method == "dpctgan" and engines:
        engine = engines[-1]
        spent, _ = engine.get_privacy_spent(args.delta)
        record |= {
            "spent_eps": float(spent),
            "total_eps": spent_pre + float(spent),
            "sigma": engine.noise_multiplier,
            "dp_steps": int(engine.steps),
            "epochs": int(options["epochs"]),
        }
    else:  # MST and AIM convert the rest to zCDP's rho and spend all of it
        record["total_eps"] = spent_pre + float(model.epsilon)
    frame = sampled if isinstance(sampled, pd.DataFrame) else pd.DataFrame(sampled)
    return frame.loc[:, list(rows.columns)], record


#: DPCTGAN's defaults (smartnoise-synth 1.0.8, snsynth/pytorch/nn/dpctgan.py): its opacus 0.14
#: PrivacyEngine's orders, batch, noise and epochs; each training iteration steps the
#: discriminator's DP optimizer twice (fake rows, then real ones), each step accounted.
ALPHAS = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))
BATCH, SIGMA, EPOCHS, STEPS_PER_ITERATION = 500, 5.0, 300, 2


def dpctgan_epochs(rows: int, budget: float, delta: float, most: int) -> int:
    """The most epochs (at most ``most``) whose spend, by DPCTGAN's own accountant, stays within
    ``budget``. DPCTGAN checks its budget before each epoch, so left to itself it trains the
    epoch that crosses it and ends above its epsilon; given this many epochs it never does."""
    import opacus
    import torch

    probe = opacus.PrivacyEngine(
        torch.nn.Linear(1, 1), batch_size=BATCH, sample_size=rows, alphas=ALPHAS,
        noise_multiplier=SIGMA, max_grad_norm=1.0,
    )  # fmt: skip
    per_epoch = STEPS_PER_ITERATION * max(rows // BATCH, 1)
    epochs = 0
    while epochs < most:
        probe.steps = per_epoch * (epochs + 1)
        if probe.get_privacy_spent(delta)[0] > budget:
            break
        epochs += 1
    if epochs == 0:
        probe.steps = per_epoch
        one = probe.get_privacy_spent(delta)[0]
        raise SystemExit(
            f"dp_table: one DPCTGAN epoch (sigma {SIGMA:g}, batch {BATCH}) spends epsilon "
            f"{one:.2f} > {budget:.2f} left after the bounds"
        )
    return epochs


def _dpgan(args: argparse.Namespace, rows, categorical: list[str]):
    import numpy as np
    import pandas as pd
    import synthcity.plugins.core.models.gan as gan
    import torch
    from synthcity.plugins import Plugins
    from synthcity.plugins.core.dataloader import GenericDataLoader

    engines = []
    original = gan.PrivacyEngine

    class Recorded(original):
        def __init__(self, *a, **k) -> None:
            super().__init__(*a, **k)
            engines.append(self)

    gan.PrivacyEngine = Recorded
    data = rows.copy()
    gaps = []
    for name in rows.columns:
        if name in categorical:
            data[name] = rows[name].fillna(GAP_LEVEL)
        elif rows[name].isna().any():
            gaps.append(name)
            data[name] = rows[name].fillna(0.0)
            data[name + GAP_SUFFIX] = rows[name].isna().astype(int)
    # On the CPU like every peer here (synthcity takes a GPU when it sees one).
    options = {
        "epsilon": args.epsilon, "delta": args.delta, "random_state": args.seed,
        "device": torch.device("cpu"),
    }  # fmt: skip
    if args.epochs is not None:
        options["n_iter"] = args.epochs
    model = Plugins().get("dpgan", **options)
    start = time.perf_counter()
    model.fit(GenericDataLoader(data))
    fit_s = time.perf_counter() - start
    start = time.perf_counter()
    sampled = model.generate(count=args.n).dataframe()
    sample_s = time.perf_counter() - start
    out = pd.DataFrame(index=sampled.index)
    for name in rows.columns:
        values = sampled[name]
        if name in categorical:
            values = values.astype(object).where(values.astype(str) != GAP_LEVEL, np.nan)
        elif name in gaps:
            values = values.where(sampled[name + GAP_SUFFIX] < 0.5, np.nan)
        out[name] = values
    record = {
        "epsilon": args.epsilon,
        "delta": args.delta,
        "preprocessor_eps": 0.0,
        "training_eps": args.epsilon,
        "fit_s": round(fit_s, 3),
        "sample_s": round(sample_s, 3),
        "epochs_planned": int(model.n_iter),
    }
    if engines:
        engine = engines[-1]
        spent = float(engine.get_epsilon(args.delta))
        record |= {"spent_eps": spent, "total_eps": spent, "dp_steps": _steps(engine)}
    return out.reset_index(drop=True), record


def _steps(engine) -> int:
    """Noised steps an opacus >= 1 accountant has recorded."""
    history = getattr(engine.accountant, "history", [])
    return int(sum(steps for *_, steps in history))


if __name__ == "__main__":
    raise SystemExit(main())
