"""The README's commands on tables over the reading cap, in a subprocess: a folder of Parquet
files (Kaggle's columns) and one CSV of a user's table, each sampled (data.max_rows), the counts
in the log and on the MLflow run."""

from __future__ import annotations

from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient
from support.cli import run_train_cli
from support.configs import TINY_NETWORKS
from support.tables import fraud_team_table

from wgangp.data.builtin.simulated import simulate_creditcard

QUICK = [
    *TINY_NETWORKS,
    "trainer.batch_size=32",
    "trainer.steps=4",
    "trainer.steps_per_call=2",
    "trainer.progress=false",
    "select.every=2",
    "evaluate.enabled=false",
    "tracking.log_model=false",
    "data.fallback=error",
]


def _tags(uri: str) -> dict[str, str]:
    client = MlflowClient(uri)
    (run,) = client.search_runs([client.get_experiment_by_name("wgangp").experiment_id])
    assert run.info.status == "FINISHED"
    return run.data.tags


@pytest.mark.slow
def test_a_folder_of_parquet_files_over_the_cap_trains(tmp_path: Path) -> None:
    folder = tmp_path / "transactions"
    folder.mkdir()
    frauds = 0
    for part in range(3):
        frame = simulate_creditcard(n_rows=3000, fraud_rate=0.01, seed=part)
        frauds += int(frame["Class"].sum())
        frame.to_parquet(folder / f"part-{part}.parquet", index=False)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    args = [
        "data.path=transactions",
        "data.schema=creditcard",
        "data.max_rows=2000",
        "data.rest_subset=1000",
        *QUICK,
    ]
    proc = run_train_cli([*args, f"tracking.uri={uri}"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    log = proc.stdout + proc.stderr
    assert f"9000 rows ({frauds} with Class=1) in 3 files; kept every row with Class=1" in log
    assert f"a uniform subset of 2000 of the {9000 - frauds} others" in log
    assert "fits and scores use a uniform subset of 1000 of the 2000 rows with Class!=1" in log
    tags = _tags(uri)
    assert (tags["data.read.rows"], tags["data.read.kept"]) == ("9000", str(2000 + frauds))
    assert tags["data.read.files"] == "3" and tags["data.subset.rest_subset"] == "1000"


@pytest.mark.slow
def test_a_csv_over_the_cap_trains_with_its_own_label(tmp_path: Path) -> None:
    fraud_team_table(rows=4000, frauds=300).to_csv(tmp_path / "loans.csv", index=False)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    args = ["data.path=loans.csv", "data.label=is_fraud", "data.max_rows=1000", *QUICK]
    proc = run_train_cli([*args, f"tracking.uri={uri}"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    log = proc.stdout + proc.stderr
    assert "4000 rows (300 with is_fraud=yes); kept every row with is_fraud=yes and a " in log
    assert "uniform subset of 1000 of the 3700 others" in log
    tags = _tags(uri)
    assert (tags["data.read.kept"], tags["data.read.kept_rare"]) == ("1300", "300")
