"""Peer: gretel-synthetics' DGAN (DoppelGANger in PyTorch, 0.22.20) on the histories benchmark's
tables, on the CPU.

Runs in ``.bench-envs/dgan`` (``bash scripts/histories_benchmark/setup_envs.sh dgan``):

    .bench-envs/dgan/bin/python -m scripts.bench.peers.dgan_histories --job JOB.json

DGAN takes numbers: each history becomes a sequence of (log gap since the previous row, signed
log amount, the label and every other column of levels as discrete codes) with its attributes
(the first row's time in seconds, each attribute column) beside it, in DGAN's "long" DataFrame
form (one row per time step, the example id), where DGAN adds its generation flag for variable
lengths; histories are cut to ``max_length`` rows (the first ones: DGAN's sequences have one
fixed maximum). Shared ids are not given to it: one discrete feature of thousands of levels per time
step is beyond its encoders (``binary_encoder_cutoff``), so its histories carry none (P3 reads
inf). DGAN's defaults otherwise, but ``epochs`` (the budget) and the batch (at most the
histories).
"""

from __future__ import annotations

import time

from scripts.bench.peers.history_io import HistoryJob, job_main, new_ids


def run(job: HistoryJob, rows):
    import numpy as np
    import pandas as pd
    import torch
    from gretel_synthetics.timeseries_dgan.config import DGANConfig
    from gretel_synthetics.timeseries_dgan.dgan import DGAN

    torch.manual_seed(job.seed)
    np.random.seed(job.seed)
    max_length = int(job.options.get("max_length", 64))
    epochs = int(job.options.get("epochs", 400))
    rows = rows.sort_values([job.entity, job.time], kind="stable")
    rows = rows[rows.groupby(job.entity).cumcount() < max_length].reset_index(drop=True)
    seconds = rows[job.time].astype("datetime64[ns]").astype("int64").to_numpy() / 1e9
    origin = float(seconds.min())
    seconds = seconds - origin
    entity = rows[job.entity].to_numpy()
    first = np.r_[True, entity[1:] != entity[:-1]]
    gaps = np.where(first, 0.0, np.r_[0.0, np.diff(seconds)])
    discrete = [c for c in job.categorical if c not in (*job.attributes, *job.shared)]
    long = pd.DataFrame(
        {
            "example": rows[job.entity].to_numpy(),
            "step": rows.groupby(job.entity).cumcount().to_numpy(),
            "start_s": pd.Series(np.where(first, seconds, np.nan)).ffill().to_numpy(),
            "gap_log": np.log1p(np.maximum(gaps, 0.0)),
        }
    )
    if job.amount:
        amount = rows[job.amount].to_numpy(np.float64)
        long["amount_log"] = np.sign(amount) * np.log1p(np.abs(amount))
    for name in [*discrete, *job.attributes]:
        long[name] = rows[name].astype(str).to_numpy()
    features = ["gap_log", *(["amount_log"] if job.amount else []), *discrete]
    attributes = ["start_s", *job.attributes]
    config = DGANConfig(
        max_sequence_len=max_length,
        sample_len=int(job.options.get("sample_len", 4)),
        batch_size=min(1024, rows[job.entity].nunique()),
        epochs=epochs,
        cuda=False,
    )
    model = DGAN(config)
    start = time.perf_counter()
    model.train_dataframe(
        long,
        attribute_columns=attributes,
        feature_columns=features,
        example_id_column="example",
        time_column="step",
        discrete_columns=[*discrete, *job.attributes],
        df_style="long",
    )
    fit_s = time.perf_counter() - start
    start = time.perf_counter()
    drawn = model.generate_dataframe(job.n)
    sample_s = time.perf_counter() - start
    drawn = drawn.sort_values(["example", "step"], kind="stable")
    ids = dict(zip(drawn["example"].unique(), new_ids(job.n), strict=False))
    at = drawn["start_s"].astype(float) + drawn.groupby("example")["gap_log"].transform(
        lambda g: (
            np.cumsum(np.expm1(np.maximum(g.astype(float).to_numpy(), 0.0)))
            - np.expm1(max(float(g.iloc[0]), 0.0))
        )
    )
    sampled = pd.DataFrame(
        {
            job.entity: drawn["example"].map(ids).to_numpy(),
            job.time: pd.to_datetime(((at + origin) * 1e9).to_numpy(), unit="ns"),
        }
    )
    if job.amount:
        logs = drawn["amount_log"].astype(float).to_numpy()
        sampled[job.amount] = np.sign(logs) * np.expm1(np.abs(logs))
    for name in [*discrete, *job.attributes]:
        sampled[name] = drawn[name].to_numpy()
    for name in job.shared:
        sampled[name] = None
    return sampled, {
        "fit_s": round(fit_s, 1),
        "sample_s": round(sample_s, 1),
        "epochs": epochs,
        "max_length": max_length,
    }


if __name__ == "__main__":
    raise SystemExit(job_main("python -m scripts.bench.peers.dgan_histories", run))
