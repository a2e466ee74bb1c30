"""Peer: MOSTLY AI's engine (mostlyai-engine 2.7.3, TabularARGN) in sequential mode on the
histories benchmark's tables, on the CPU.

Runs in ``.bench-envs/mostly`` (``bash scripts/histories_benchmark/setup_envs.sh mostly``):

    .bench-envs/mostly/bin/python -m scripts.bench.peers.mostly_histories --job JOB.json

Two tables as the engine takes them: a context table (one row per entity: its id and attributes)
and a sequence table (the rows, linked by the entity as context key), the time encoded relative
to the previous row (``TABULAR_DATETIME_RELATIVE``). The engine alone generates sequences for a
context it is given, so a flat TabularARGN draws the new entities' attributes first (what MOSTLY
AI's SDK does for a subject table), then the sequential model their rows. The budget is the
engine's ``max_epochs`` (options, 20 by default; the engine's own default is 100, with early
stopping), its ``max_training_time`` only a cap (20 minutes, split 1:4 between the two models);
its defaults otherwise.
"""

from __future__ import annotations

import tempfile
import time

from scripts.bench.peers.history_io import HistoryJob, job_main, new_ids


def run(job: HistoryJob, rows):
    import pandas as pd
    from mostlyai.engine import TabularARGN

    rows = rows.loc[:, job.columns]
    context = rows.groupby(job.entity, sort=True)[list(job.attributes)].first().reset_index()
    # Epochs, not minutes: on a shared machine a wall-clock budget measures the neighbours' load
    # (a 2-minute budget at a tenth of a core trained almost nothing); minutes only cap it.
    epochs = float(job.options.get("max_epochs", 20))
    budget = float(job.options.get("max_training_minutes", 20.0))
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="mostly-") as workspace:
        fresh = pd.DataFrame({job.entity: new_ids(job.n)})
        if job.attributes:
            flat = TabularARGN(
                max_training_time=budget / 5,
                max_epochs=epochs,
                random_state=job.seed,
                device="cpu",
                workspace_dir=f"{workspace}/context",
            )
            flat.fit(context[list(job.attributes)])
            drawn = flat.sample(n_samples=job.n)
            fresh = pd.concat([fresh, drawn.reset_index(drop=True)], axis=1)
        sequences = TabularARGN(
            max_training_time=budget * (4 / 5 if job.attributes else 1.0),
            max_epochs=epochs,
            tgt_context_key=job.entity,
            ctx_data=context,
            ctx_primary_key=job.entity,
            tgt_encoding_types={job.time: "TABULAR_DATETIME_RELATIVE"},
            random_state=job.seed,
            device="cpu",
            workspace_dir=f"{workspace}/sequences",
        )
        sequence_columns = [c for c in job.columns if c not in job.attributes]
        sequences.fit(rows[sequence_columns])
        fit_s = time.perf_counter() - start
        start = time.perf_counter()
        sampled = sequences.sample(ctx_data=fresh)
        sample_s = time.perf_counter() - start
    if job.attributes:  # the new entities' attributes, from the context they were drawn for
        sampled = sampled.drop(columns=[c for c in job.attributes if c in sampled])
        sampled = sampled.merge(fresh, on=job.entity, how="left")
    return sampled, {
        "fit_s": round(fit_s, 1),
        "sample_s": round(sample_s, 1),
        "max_epochs": epochs,
        "max_training_time_min": budget,
    }


if __name__ == "__main__":
    raise SystemExit(job_main("python -m scripts.bench.peers.mostly_histories", run))
