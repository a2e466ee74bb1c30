"""Does a history model learn fraud's behaviour? Trains on the small simulator of the tests
(``tests/support/histories.py``: Poisson customers, fraud bursts of 3+ rows within an hour at
compromised terminals) and prints, per seed and as mean and spread:

- the share of generated fraud rows in a burst (3 or more of the customer's rows within an hour)
  against the real one and a row-independent baseline's (the real rows dealt to customers at
  random: what a model of rows can do at best);
- the share of timestamps that decrease within a history (must be 0);
- the total variation of the hour of day and of the day of week, real against generated;
- the detection AUC of generated histories against held-out real customers' windows
  (``eval/history_c2st_auc_gbm``) beside real against real, and the behavioral patterns' P1-P4
  degradation ratios and their geometric mean (``eval/behavior_*``, wgangp/histories/behavior.py);
- the training time.

    .venv/bin/python -m scripts.histories_burst --seeds 0 1 2 --steps 1500

``--test-setting`` runs the burst test's own setting instead (its table, steps and sample) for
each training seed, and prints its two figures: where the test's bars sit in their spread.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]


def hour_week_tv(real: pd.Series, generated: pd.Series) -> tuple[float, float]:
    """Total variation of the hour of day and of the day of week."""

    def shares(values: pd.Series, part: str, size: int) -> np.ndarray:
        counts = np.bincount(getattr(pd.to_datetime(values).dt, part).to_numpy(), minlength=size)
        return counts / max(counts.sum(), 1)

    return tuple(  # type: ignore[return-value]
        float(0.5 * np.abs(shares(real, p, n) - shares(generated, p, n)).sum())
        for p, n in (("hour", 24), ("day_of_week", 7))
    )


def decreasing_share(frame: pd.DataFrame) -> float:
    """The share of rows whose time is before the previous row's of the same history."""
    times = pd.to_datetime(frame["ts"])
    same = frame["card_id"].to_numpy()[1:] == frame["card_id"].to_numpy()[:-1]
    back = (times.to_numpy()[1:] < times.to_numpy()[:-1]) & same
    return float(back.mean()) if len(back) else 0.0


def one_seed(seed: int, args: argparse.Namespace, folder: Path) -> dict[str, float]:
    sys.path.insert(0, str(REPO / "tests"))
    from support.histories import burst_share, customer_transactions

    import wgangp

    table = customer_transactions(args.customers, args.days, seed=seed)
    overrides = [
        f"seed={seed}", f"trainer.steps={args.steps}", "trainer.progress=false",
        f"history.max_length={args.max_length}", f"history.records_per_cell={args.per_cell}",
        *args.override,
    ]  # fmt: skip
    started = time.perf_counter()
    model = wgangp.fit(
        table, label="is_fraud", entity="card_id", time="ts", overrides=overrides,
        tracking_uri=f"sqlite:///{folder}/mlflow.db", output_dir=folder / f"seed{seed}",
    )  # fmt: skip
    seconds = time.perf_counter() - started
    frauds = model.sample_histories(args.histories, label=1, seed=seed + 100)
    mixed = model.sample_histories(args.histories, seed=seed + 200)
    dealt = table.assign(card_id=np.random.default_rng(seed).permutation(table["card_id"]))
    hour_tv, day_tv = hour_week_tv(table["ts"], mixed["ts"])
    metrics = json.loads((folder / f"seed{seed}" / "evaluation" / "histories.json").read_text())
    return {
        "seed": seed,
        "burst_real": burst_share(table),
        "burst_generated": burst_share(frauds),
        "burst_row_independent": burst_share(dealt),
        "decreasing_share": decreasing_share(mixed),
        "hour_tv": hour_tv,
        "weekday_tv": day_tv,
        "detection_auc": metrics["eval/history_c2st_auc_gbm"],
        "detection_auc_real": metrics["eval/history_c2st_auc_gbm_real"],
        **{
            name.removeprefix("eval/"): float(value)
            for name, value in metrics.items()
            if name.startswith("eval/behavior_P")
            and "." not in name
            or name == "eval/behavior_geometric_mean"
        },
        "fraud_rows_per_fraud_history": float(
            (frauds["is_fraud"] == 1).sum() / max(frauds["card_id"].nunique(), 1)
        ),
        "train_seconds": seconds,
    }


def test_setting(seed: int, folder: Path) -> dict[str, float]:
    """The burst test's own run with training seed ``seed``: where its bars sit in the spread."""
    sys.path.insert(0, str(REPO / "tests"))
    from support.histories import burst_test_run

    share, per_history = burst_test_run(seed, folder / f"test-seed{seed}")
    return {"seed": seed, "burst_generated": share, "fraud_rows_per_fraud_history": per_history}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--customers", type=int, default=300)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--max-length", type=int, default=64)
    parser.add_argument("--per-cell", type=int, default=1)
    parser.add_argument("--histories", type=int, default=200)
    parser.add_argument("--override", nargs="*", default=[], help="more key=value overrides")
    parser.add_argument(
        "--test-setting",
        action="store_true",
        help="the burst test's run, each seed (the others ignored)",
    )
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in args.seeds:
            if args.test_setting:
                rows.append(test_setting(seed, Path(tmp)))
            else:
                rows.append(one_seed(seed, args, Path(tmp)))
            print(json.dumps(rows[-1]), flush=True)
    frame = pd.DataFrame(rows).drop(columns="seed")
    print("mean and sd over seeds", args.seeds)
    print(pd.DataFrame({"mean": frame.mean(), "sd": frame.std(ddof=1)}).to_string())


if __name__ == "__main__":
    main()
