"""Peer: SDV's PARSynthesizer (sdv 2.0.0, deepecho's PAR) on the histories benchmark's tables.

Runs in ``.bench-envs/par`` (``bash scripts/histories_benchmark/setup_envs.sh par``):

    .bench-envs/par/bin/python -m scripts.bench.peers.par_histories --job JOB.json

The table's metadata as a user writes it: the entity is the sequence key, the time the sequence
index, the attributes its context columns, every column of levels categorical (the shared ids
too), the amount numerical. PAR's own defaults otherwise, but ``epochs`` (the budget: options).
"""

from __future__ import annotations

import time

from scripts.bench.peers.history_io import HistoryJob, job_main, new_ids


def run(job: HistoryJob, rows):
    from sdv.metadata import Metadata
    from sdv.sequential import PARSynthesizer

    rows = rows.loc[:, job.columns]
    needed = _tensor_gb(job, rows)
    limit = float(job.options.get("max_gb", 4.0))
    if needed > limit:
        raise MemoryError(
            f"PAR's padded one-hot tensor would take ~{needed:.1f} GB ({rows[job.entity].nunique()}"
            f" sequences of up to {rows.groupby(job.entity).size().max()} rows); over the {limit} "
            "GB this shared machine allows it (on aml it was killed out of memory at 9.7 GB)"
        )
    columns = {job.entity: {"sdtype": "id"}, job.time: {"sdtype": "datetime"}}
    if job.amount:
        columns[job.amount] = {"sdtype": "numerical"}
    for name in job.categorical:
        columns[name] = {"sdtype": "categorical"}
    metadata = Metadata.load_from_dict(
        {
            "tables": {
                "histories": {
                    "columns": columns,
                    "sequence_key": job.entity,
                    "sequence_index": job.time,
                }
            }
        }
    )
    epochs = int(job.options.get("epochs", 128))
    synthesizer = PARSynthesizer(
        metadata, context_columns=list(job.attributes), epochs=epochs, cuda=False, verbose=False
    )
    import torch

    torch.manual_seed(job.seed)
    start = time.perf_counter()
    synthesizer.fit({"histories": rows})
    fit_s = time.perf_counter() - start
    start = time.perf_counter()
    sampled = synthesizer.sample_sequences(job.n)
    if isinstance(sampled, dict):
        sampled = next(iter(sampled.values()))
    sample_s = time.perf_counter() - start
    fresh = dict(zip(sampled[job.entity].unique(), new_ids(job.n), strict=False))
    sampled[job.entity] = sampled[job.entity].map(fresh)
    return sampled, {"fit_s": round(fit_s, 1), "sample_s": round(sample_s, 1), "epochs": epochs}


def _tensor_gb(job: HistoryJob, rows) -> float:
    """deepecho's PAR pads every sequence to the longest and one-hot codes each categorical: the
    float32 tensor it trains on, times three (its copies while fitting)."""
    width = sum(rows[c].nunique() + 1 for c in job.categorical if c not in job.attributes) + 4
    longest = int(rows.groupby(job.entity).size().max())
    return 3 * 4 * width * longest * rows[job.entity].nunique() / 1e9


if __name__ == "__main__":
    raise SystemExit(job_main("python -m scripts.bench.peers.par_histories", run))
