"""A history model end to end, as a user runs it: ``python -m wgangp.train ... data.time=ts`` on a
Parquet file, ``python -m wgangp.sample ... histories=n``, the served pyfunc model, and
``wgangp.fit(frame, entity=..., time=...)`` (tiny networks, a few steps: what the commands do
around training, not what training learns)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from support.cli import run_train_cli
from support.configs import REPO
from support.docs import documented
from support.histories import TINY_HISTORIES, customer_transactions, write_customer_transactions

pytestmark = pytest.mark.slow

STEPS = ["trainer.steps=4", "trainer.steps_per_call=2", "select.every=2", "select.repeats=2",
         "trainer.progress=false", "evaluate.c2st_repeats=2", "trainer.sample_rows=40"]  # fmt: skip


def _sample_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(REPO)}
    env.pop("MLFLOW_TRACKING_URI", None)
    return subprocess.run(
        [sys.executable, "-m", "wgangp.sample", *args], cwd=cwd, env=env, capture_output=True,
        text=True, timeout=600,
    )  # fmt: skip


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """(folder, tracking URI, run id) of one CLI run on a history table."""
    folder = tmp_path_factory.mktemp("histories")
    table = write_customer_transactions(folder, customers=120, days=14, zone="Europe/Paris")
    uri = f"sqlite:///{folder / 'mlflow.db'}"
    done = run_train_cli(
        [f"data.path={table}", "data.label=is_fraud", "data.entity=card_id", "data.time=ts",
         "data.val_fraction=0.2", *TINY_HISTORIES, *STEPS, f"tracking.uri={uri}",
         f"hydra.run.dir={folder / 'run'}"],
        cwd=folder,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    from mlflow import MlflowClient

    runs = MlflowClient(uri).search_runs(MlflowClient(uri).search_experiments()[0].experiment_id)
    return folder, uri, runs[0].info.run_id


def test_the_command_trains_logs_and_exports_a_history_model(trained) -> None:
    from mlflow import MlflowClient

    folder, uri, run_id = trained
    run = MlflowClient(uri).get_run(run_id)
    assert run.info.status == "FINISHED"
    assert run.data.tags["model.kind"] == "histories"
    for name in ("eval/history_c2st_auc_gbm", "eval/behavior_geometric_mean", "val/score"):
        assert name in run.data.metrics, name
    assert (folder / "run" / "synthesizer" / "histories.json").is_file()
    samples = pd.read_csv(folder / "run" / "samples.csv")
    assert (samples.groupby("card_id")["is_fraud"].max() == 1).all()


def test_the_sample_command_draws_customers(trained) -> None:
    folder, uri, run_id = trained
    out = folder / "customers.parquet"
    done = _sample_cli(
        f"model_uri=runs:/{run_id}", "histories=7", "label=1", f"output={out}",
        f"tracking_uri={uri}", cwd=folder,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-1500:]
    rows = pd.read_parquet(out)
    assert rows["card_id"].nunique() == 7
    assert list(rows.columns) == list(customer_transactions(5, 2).columns)
    assert (rows.groupby("card_id")["is_fraud"].max() == 1).all()
    assert rows.groupby("card_id")["ts"].apply(lambda t: t.is_monotonic_increasing).all()


def test_rows_asked_of_a_history_model_are_one_line(trained) -> None:
    folder, uri, run_id = trained
    done = _sample_cli(f"model_uri=runs:/{run_id}", "n=5", f"tracking_uri={uri}", cwd=folder)
    assert done.returncode == 2
    line = done.stderr.strip().splitlines()[-1]
    assert line == "wgangp: error: " + documented(
        "this model draws customers over time (trained with data.time): give histories=<n> "
        "instead of n="
    )


def test_the_served_model_answers_histories(trained, monkeypatch: pytest.MonkeyPatch) -> None:
    import mlflow.pyfunc
    from mlflow import MlflowClient

    folder, uri, run_id = trained
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    model = mlflow.pyfunc.load_model(MlflowClient(uri).get_run(run_id).data.tags["model.uri"])
    rows = model.predict(pd.DataFrame({"n": [3, 2], "label": [1, 0], "seed": [0, 1]}))
    per_customer = rows.groupby("card_id")["is_fraud"].max()
    assert len(per_customer) == 5 and per_customer.sum() == 3


def test_fit_in_python_returns_a_history_model(tmp_path: Path) -> None:
    import wgangp

    model = wgangp.fit(
        customer_transactions(60, 10), label="is_fraud", entity="card_id", time="ts",
        overrides=[*TINY_HISTORIES, *STEPS, "evaluate.enabled=false"],
        tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}", output_dir=tmp_path / "run",
    )  # fmt: skip
    assert model.model_uri.startswith("runs:/")
    rows = model.sample_histories(4, seed=0)
    assert rows["card_id"].nunique() == 4
    again = wgangp.load(model.model_uri, tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    pd.testing.assert_frame_equal(again.sample_histories(4, seed=0), rows)


def test_histories_asked_of_a_row_model_are_one_line(tmp_path: Path) -> None:
    from support.synthesizers import creditcard_synthesizer

    bundle = creditcard_synthesizer().save(tmp_path / "synthesizer")
    done = _sample_cli(f"model_uri={bundle}", "histories=3", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == "wgangp: error: " + documented(
        "histories= draws customers of a history model (trained with data.time); this model "
        "draws rows: give n= instead"
    )


def test_the_evaluate_line_is_documented(trained, capsys: pytest.CaptureFixture) -> None:
    from wgangp.evaluate import main

    folder, uri, run_id = trained
    assert main(["--run", run_id, "--tracking-uri", uri]) == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    expected = documented(
        f"run {run_id} trained a history model (data.time): its evaluation on the test customers "
        "is the run's own (eval/history_*, eval/behavior_*); python -m wgangp.evaluate scores "
        "row models",
        run=run_id,
    )
    assert line == "wgangp: error: " + expected.replace("<run>", run_id)
