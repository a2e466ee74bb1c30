"""A label named ``Class`` with text values (``good``/``bad``, as R and tidymodels tables write
it) trains, samples and evaluates from the README's commands: the class code lives apart from the
table's columns, so the name the Kaggle file uses is just a column name here. A third value
(`review`) is part of the rest: `data.positive=bad` learns bad against good and review."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import mlflow
import pandas as pd
import pytest
from support.cli import run_train_cli
from support.configs import REPO, TINY_NETWORKS
from support.tables import fraud_team_table
from support.tracked_runs import SMALL_EVALUATION


@pytest.mark.slow
def test_a_label_named_class_with_text_values_trains_samples_and_evaluates(
    tmp_path: Path,
) -> None:
    table = fraud_team_table().rename(columns={"is_fraud": "Class"})
    table["Class"] = table["Class"].map({"yes": "bad", "no": "good"})
    table.loc[(table.index % 25 == 0) & (table["Class"] == "good"), "Class"] = "review"
    table.to_csv(tmp_path / "loans.csv", index=False)
    db = tmp_path / "mlflow.db"
    trained = run_train_cli(
        [
            "data.path=loans.csv",
            "data.label=Class",
            "data.positive=bad",
            f"tracking.uri=sqlite:///{db}",
            "trainer.steps=20",
            "trainer.batch_size=32",
            "trainer.progress=false",
            "select.every=10",
            *TINY_NETWORKS,
            *SMALL_EVALUATION,
        ],
        cwd=tmp_path,
    )
    assert trained.returncode == 0, trained.stderr[-3000:]
    client = mlflow.MlflowClient(f"sqlite:///{db}")
    (run,) = client.search_runs([client.get_experiment_by_name("wgangp").experiment_id])
    assert run.info.status == "FINISHED" and run.info.run_name.startswith("default-loans-seed0-")
    assert "eval/c2st_auc_gbm" in run.data.metrics  # the evaluation ran on the text labels
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(REPO)}
    env["MLFLOW_TRACKING_URI"] = f"sqlite:///{db}"
    sampled = subprocess.run(
        [
            sys.executable,
            "-m",
            "wgangp.sample",
            f"model_uri=runs:/{run.info.run_id}",
            "n=40",
            "label=bad",
            "output=bad.csv",
        ],  # fmt: skip
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert sampled.returncode == 0, sampled.stderr[-2000:]
    rows = pd.read_csv(tmp_path / "bad.csv")
    assert list(rows.columns) == list(table.columns) and len(rows) == 40
    assert set(rows["Class"]) == {"bad"}
