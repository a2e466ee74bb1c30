"""How far the quality targets can go on a table, with no generator: ``python -m scripts.ceilings``.

Two measurements per split seed, each judged the way the end-of-run evaluation judges a
generator, so that a target out of reach shows before a model is tuned towards it.

**Detection, a resampler at the near-copy limit.** Training frauds drawn with replacement plus
Gaussian noise of ``--jitter-sd`` standard deviations of each training-fraud column (Amount on
its log1p scale), once with every column jittered and once with Amount kept exact (its repeated
values, 1.00 above all, intact). They face the held-out frauds in the evaluation's detection
test, beside its real-vs-real control, with their near-copy share: a generator that stays as
close to the training frauds as the near-copy rule allows reads about this much.

**Utility, the most any added frauds can give.** The evaluation's fraud detector (gradient
boosting on the training rows, at most ``max_normal_rows`` normals), scored by PR-AUC on the
held-out split, trained with half or three quarters of the real training frauds, with all of
them (the reference), with all of them plus the other held-out split's frauds (new real frauds,
which no synthetic ones can beat), and with all of them twice (copies). Paired differences
against the reference, per repeat. When new real frauds lift PR-AUC no more than the repeats'
spread, no lift target can be told from noise on that table.

``--split val`` (the default) measures on the validation split and adds the test frauds as the
new real ones; ``--split test`` the other way round. Neither chooses a model.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from wgangp.config import DataConfig, EvaluateConfig
from wgangp.data.builtin.creditcard import feature_names
from wgangp.data.prepare import PreparedData, prepare_data
from wgangp.errors import WgangpError
from wgangp.evaluation.detection import boosting_model, detection_metrics
from wgangp.evaluation.disclosure import near_copy_share
from wgangp.evaluation.utility import normal_subsample, score_detector

#: Columns on a log1p scale for jittering: heavy right tail, never negative.
LOG_COLUMNS = ("Amount",)


def jittered(
    frauds: np.ndarray,
    n: int,
    sd: float,
    rng: np.random.Generator,
    *,
    exact: tuple[int, ...] = (),
    log: tuple[int, ...] = (),
) -> np.ndarray:
    """``n`` rows resampled from ``frauds`` plus noise of ``sd`` column standard deviations.

    Columns in ``log`` are jittered on their log1p scale (and stay >= 0); columns in ``exact``
    keep the resampled row's value.
    """
    space = frauds.astype(np.float64, copy=True)
    space[:, list(log)] = np.log1p(np.maximum(space[:, list(log)], 0.0))
    scale = space.std(axis=0)
    noise = rng.standard_normal((n, space.shape[1])) * sd * scale
    picked = rng.integers(0, len(space), n)
    rows = space[picked] + noise
    rows[:, list(log)] = np.expm1(np.maximum(rows[:, list(log)], 0.0))
    rows[:, list(exact)] = frauds[picked][:, list(exact)]  # not through log1p and back
    return rows


def augmented_frauds(
    frauds: np.ndarray, new_frauds: np.ndarray, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """The fraud rows of each utility training set, by name; ``all`` is the reference."""
    order = rng.permutation(len(frauds))
    return {
        "half the training frauds": frauds[order[: len(frauds) // 2]],
        "three quarters": frauds[order[: (3 * len(frauds)) // 4]],
        "all": frauds,
        f"all + {len(new_frauds)} new real frauds": np.vstack([frauds, new_frauds]),
        "all + copies of all": np.vstack([frauds, frauds]),
    }


def utility_ceiling(
    frauds: np.ndarray,
    all_normals: np.ndarray,
    new_frauds: np.ndarray,
    held_out: np.ndarray,
    held_out_labels: np.ndarray,
    settings: EvaluateConfig,
    seed: int,
) -> dict[str, list[float]]:
    """Paired PR-AUC differences against ``all`` training frauds, one per repeat, by set."""
    lifts: dict[str, list[float]] = {}
    for repeat in range(settings.seeds):
        rng = np.random.default_rng([seed, repeat])
        normals = normal_subsample(all_normals, settings.max_normal_rows, rng)
        scores = {}
        for name, rows in augmented_frauds(frauds, new_frauds, rng).items():
            x = np.vstack([normals, rows])
            y = np.concatenate([np.zeros(len(normals), int), np.ones(len(rows), int)])
            model = boosting_model(seed + repeat, settings.gbm_max_iter)
            scores[name] = score_detector(
                model, x, y, held_out, held_out_labels, settings.target_precision
            )["pr_auc"]
        for name, score in scores.items():
            lifts.setdefault(name, []).append(float(score - scores["all"]))
    return lifts


def measure(
    split: PreparedData, on: str, settings: EvaluateConfig, sd: float, seed: int
) -> dict[str, float]:
    """Both measurements on one split; figures by row name."""
    columns = list(feature_names())
    held_out, other = (split.val, split.test) if on == "val" else (split.test, split.val)

    def rows_of(frame: pd.DataFrame, fraud: bool = True) -> np.ndarray:
        return frame.loc[(split.classes(frame) == 1) == fraud, columns].to_numpy(np.float64)

    train_frauds, real = rows_of(split.train), rows_of(held_out)
    log = tuple(columns.index(c) for c in LOG_COLUMNS)
    rng = np.random.default_rng(seed)
    resampled = {
        "every column jittered": jittered(train_frauds, settings.n_synthetic, sd, rng, log=log),
        "Amount exact, the rest jittered": jittered(
            train_frauds, settings.n_synthetic, sd, rng, exact=log, log=log
        ),
    }
    judged = {**resampled, "training frauds (the control)": train_frauds}
    detection, _ = detection_metrics(
        real, judged, repeats=settings.c2st_repeats, gbm_max_iter=settings.gbm_max_iter, seed=seed
    )
    figures = {f"detection: {name}": detection[f"c2st_auc_gbm_{name}"] for name in judged}
    for name, rows in resampled.items():
        figures[f"near copies: {name}"] = near_copy_share(rows, train_frauds, real)
    lifts = utility_ceiling(
        train_frauds,
        rows_of(split.train, fraud=False),
        rows_of(other),
        held_out.loc[:, columns].to_numpy(np.float64),
        split.classes(held_out).astype(int),
        settings,
        seed,
    )
    for name, values in lifts.items():
        figures[f"PR-AUC lift: {name}"] = float(np.mean(values))
        figures[f"PR-AUC lift, sd over repeats: {name}"] = float(np.std(values))
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="the real table (csv or csv.gz)")
    parser.add_argument("--split", choices=("val", "test"), default="val")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="split seeds")
    parser.add_argument("--jitter-sd", type=float, default=0.2)
    parser.add_argument("--n-synthetic", type=int, default=EvaluateConfig.n_synthetic)
    parser.add_argument("--repeats", type=int, default=EvaluateConfig.c2st_repeats)
    parser.add_argument("--utility-repeats", type=int, default=EvaluateConfig.seeds)
    parser.add_argument("--gbm-max-iter", type=int, default=EvaluateConfig.gbm_max_iter)
    parser.add_argument("--max-normal-rows", type=int, default=EvaluateConfig.max_normal_rows)
    args = parser.parse_args(argv)
    try:
        settings = dataclasses.replace(
            EvaluateConfig(), n_synthetic=args.n_synthetic, c2st_repeats=args.repeats,
            seeds=args.utility_repeats, gbm_max_iter=args.gbm_max_iter,
            max_normal_rows=args.max_normal_rows,
        )  # fmt: skip
        per_seed = []
        for seed in args.seeds:
            split = prepare_data(
                DataConfig(path=str(args.data.resolve()), fallback="error"),
                seed=seed,
                launch_dir=Path.cwd(),
            )
            per_seed.append(measure(split, args.split, settings, args.jitter_sd, seed))
    except WgangpError as error:
        sys.exit(f"error: {error}")
    print(f"| on the {args.split} split, split seeds {args.seeds} | mean ± sd | per seed |")
    print("|---|---|---|")
    for name in per_seed[0]:
        values = np.array([figures[name] for figures in per_seed])
        digits = 4 if "PR-AUC" in name else 3
        sign = "+" if name.startswith("PR-AUC lift:") else ""
        shown = ", ".join(f"{v:{sign}.{digits}f}" for v in values)
        print(f"| {name} | {values.mean():.{digits}f} ± {values.std():.{digits}f} | {shown} |")


if __name__ == "__main__":
    main()
