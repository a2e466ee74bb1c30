"""Load, at CI scale: a large CSV trains with flat memory; parallel sweep jobs share one store.

``python -m scripts.load_test`` runs the same measurements at full scale (1,000,000 rows; 20
jobs).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.load_test import measure_multirun, measure_rows


@pytest.mark.slow
def test_large_csv_trains_with_flat_memory(tmp_path: Path) -> None:
    result = measure_rows(
        rows=50_000, steps=80, workdir=tmp_path, batch_size=256, checkpoint_every=20
    )
    assert len(result["rss_mib_at_checkpoint"]) >= 4, result
    assert result["flat"], result  # within 200 MiB from the first to the last checkpoint
    assert result["peak_rss_mib"] < 4096, result


@pytest.mark.slow
def test_parallel_sweep_jobs_share_one_fresh_sqlite_store(tmp_path: Path) -> None:
    result = measure_multirun(jobs=4, n_jobs=2, workdir=tmp_path)
    assert result["ok"], result
    assert result["seeds_logged"] == list(range(4))
