"""Training on a user's own table, end to end: the run, its bundle, and the rows it ships hold
what the schema promises (valid levels, whole integers, bounds, dates, the label's own values)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import mlflow
import numpy as np
import pandas as pd
import pytest
from mlflow.pyfunc.scoring_server import predictions_to_json
from support.configs import REPO, SHARED_TABLES, TINY, TINY_NETWORKS, compose, shared_table
from support.tables import (
    MERCHANTS,
    RARE_JOB,
    fraud_team_table,
    loans_table,
    write_fraud_team_table,
    write_table,
)
from support.tracked_runs import SMALL_EVALUATION

from wgangp.data.schema.table_schema import TableSchema
from wgangp.errors import WgangpError
from wgangp.serving.bundle import SCHEMA_FILE
from wgangp.serving.pyfunc import SynthesizerModel
from wgangp.serving.synthesizer import Synthesizer

#: TINY's run on a table file instead of the simulated credit-card rows.
TABLE_RUN = [o for o in TINY if not o.startswith("data")] + ["data.val_fraction=0.2"]


def _train(tmp_path: Path, table: Path, *overrides: str):
    from wgangp.train import train

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    cfg = compose([*TABLE_RUN, f"data.path={table}", f"tracking.uri={uri}", *overrides])
    return train(cfg, output_dir=tmp_path / "out", launch_dir=tmp_path), uri


def check_rows(rows: pd.DataFrame, schema: TableSchema, label: str) -> None:
    """What the schema promises of every sampled row."""
    assert list(rows.columns) == list(schema.names)
    assert (rows[schema.label] == label).all()
    for column in schema.features:
        values = rows[column.name].dropna()
        if not column.nullable:
            assert len(values) == len(rows), column.name
        if column.kind == "categorical":
            assert set(values) <= set(column.levels or ()), column.name
        elif column.kind == "datetime":
            dates = pd.to_datetime(values)
            low, high = (pd.Timestamp(b) for b in column.bounds)
            assert ((dates >= low) & (dates <= high)).all(), column.name
        else:
            numbers = values.to_numpy(np.float64)
            low, high = column.bounds
            assert ((numbers >= low) & (numbers <= high)).all(), column.name
            if column.kind == "integer":
                assert (numbers % 1 == 0).all(), column.name


@pytest.fixture(scope="module")
def fraud_team_run(tmp_path_factory: pytest.TempPathFactory):
    """One tiny run on a fraud team's table: (its result, the tracking URI)."""
    root = tmp_path_factory.mktemp("fraud_team")
    return _train(root, write_fraud_team_table(root), "data.label=is_fraud")


def test_a_fraud_teams_table_trains_ships_and_samples_its_own_values(fraud_team_run) -> None:
    result, uri = fraud_team_run
    assert result.status == "FINISHED"
    bundle = result.synthesizer_dir
    schema = TableSchema.load(bundle / SCHEMA_FILE)
    assert (schema.label, schema.positive) == ("is_fraud", "yes")
    synthesizer = Synthesizer.load(bundle)
    rare = synthesizer.sample(400, label="yes", seed=1)
    check_rows(rare, schema, "yes")
    check_rows(synthesizer.sample(50, label="no", seed=1), schema, "no")
    assert set(rare["merchant"].dropna()) <= set(MERCHANTS)
    # the same seed, the same rows: the levels and gaps are drawn from a seeded stream
    pd.testing.assert_frame_equal(rare, synthesizer.sample_class(400, 1, seed=1))
    run = mlflow.MlflowClient(uri).get_run(result.run_id)
    (dataset,) = run.inputs.dataset_inputs
    assert dataset.dataset.name == "transactions" and dataset.dataset.digest
    assert run.data.tags["data.source"] == "file"
    assert "copula.share" not in run.data.tags  # no copula by default (ship.copula_share=0)
    assert (result.synthesizer_dir / "calibration.json").is_file()
    assert SCHEMA_FILE in {a.path for a in mlflow.MlflowClient(uri).list_artifacts(result.run_id)}


def test_the_served_model_takes_the_labels_values(fraud_team_run) -> None:
    result, _ = fraud_team_run
    model = SynthesizerModel()
    model.synthesizer = Synthesizer.load(result.synthesizer_dir)
    rows = model.predict(None, pd.DataFrame({"n": [3, 2], "label": ["yes", "no"]}))
    assert rows["is_fraud"].tolist() == ["yes"] * 3 + ["no"] * 2
    assert model.predict(None, pd.DataFrame({"n": [2]}))["is_fraud"].tolist() == ["yes"] * 2
    with pytest.raises(Exception, match="label=1 is not a value of is_fraud"):
        model.predict(None, pd.DataFrame({"n": [2], "label": [1]}))
    empty = model.predict(None, pd.DataFrame({"n": [0]}))
    assert list(empty.columns) == ["merchant", "count", "amount", "day", "is_fraud"]


def test_a_label_a_table_does_not_have_is_one_line(tmp_path: Path) -> None:
    table = write_fraud_team_table(tmp_path)
    with pytest.raises(
        WgangpError, match="label column 'fraud' is not in the table; did you mean 'is_fraud'"
    ) as info:
        _train(tmp_path, table, "data.label=fraud")
    assert "\n" not in str(info.value)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SHARED_TABLES))
def test_each_shared_table_trains_and_ships_valid_rows(tmp_path: Path, name: str) -> None:
    path = shared_table(name)
    _, label, positive = SHARED_TABLES[name]
    # The evaluation on mixed types runs whole, at a test's size (its figures: tests/evaluation/).
    overrides = [*TINY_NETWORKS, "trainer.steps=60", "select.every=20", "select.repeats=2"]
    overrides += ["trainer.batch_size=64", *SMALL_EVALUATION]
    result, _ = _train(tmp_path, path, f"data.label={label}", *overrides)
    assert result.status == "FINISHED"
    synthesizer = Synthesizer.load(result.synthesizer_dir)
    schema = TableSchema.load(result.synthesizer_dir / SCHEMA_FILE)
    check_rows(synthesizer.sample(1000, seed=0), schema, positive)


def _numbers(node) -> list[float]:
    if isinstance(node, dict):
        return [x for k, v in node.items() if k not in AUDIT_STRUCTURE for x in _numbers(v)]
    if isinstance(node, list):
        return [x for v in node for x in _numbers(v)]
    is_number = isinstance(node, int | float) and not isinstance(node, bool)
    return [float(node)] if is_number else []


#: Keys whose numbers are no fitted values: positions, widths, counts, the bundle's meta.
AUDIT_STRUCTURE = {"start", "width", "label_at", "references", "latent_dim", "copula_share"}


def test_the_bundle_of_a_table_stores_no_value_fewer_than_5_rows_hold(fraud_team_run) -> None:
    """Every number of preprocessing.json and of the shipped schema's bounds: no training value
    that fewer than ``ship.min_atom_rows`` (5) training rows hold (docs/privacy.md)."""
    import yaml

    from wgangp.config import DataConfig
    from wgangp.data.prepare import prepare_data

    result, _ = fraud_team_run
    table = result.output_dir.parent / "transactions.csv"
    data = prepare_data(
        DataConfig(path=str(table), label="is_fraud", val_fraction=0.2),
        seed=0,
        launch_dir=table.parent,
    )
    bundle = result.synthesizer_dir
    stored = _numbers(json.loads((bundle / "preprocessing.json").read_text()))
    schema = yaml.safe_load((bundle / SCHEMA_FILE).read_text())
    stored += [
        b for c in schema["columns"] for b in c.get("bounds") or [] if not isinstance(b, str)
    ]
    for name in ("count", "amount"):
        counts = data.train[name].dropna().astype(float).value_counts()
        rare = set(counts[counts < 5].index)
        assert not set(stored) & rare, f"{name}: {sorted(set(stored) & rare)[:5]}"


def loan_table(folder: Path) -> Path:
    """The fraud team's table as a lender's: label ``status`` (bad/good), 2 bad and 3 good rows
    twice (with one repeat of its own, 6 duplicates to log), no word of the credit-card
    showcase in any name."""
    frame = fraud_team_table().rename(columns={"is_fraud": "status"})
    frame["status"] = frame["status"].map({"yes": "bad", "no": "good"})
    twice = [
        *frame.index[frame["status"] == "bad"][:2],
        *frame.index[frame["status"] == "good"][:3],
    ]
    frame = pd.concat([frame, frame.loc[twice]], ignore_index=True)
    path = folder / "loans.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.mark.slow
def test_a_run_on_a_users_table_speaks_of_its_rare_class_not_the_showcases(
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What a user of any table reads, the run's log and its evaluation report, names the rare
    class as such: the showcase's word (Kaggle's credit-card file) is not in it."""
    from wgangp.train import main

    root = tmp_path_factory.mktemp("loans")
    out = root / "run"
    args = [*TABLE_RUN, f"data.path={loan_table(root)}", "data.label=status"]
    args += [f"tracking.uri=sqlite:///{root / 'mlflow.db'}", f"hydra.run.dir={out}"]
    args += ["trainer.steps=8", "trainer.steps_per_call=4", "select.every=4"]
    args += [*SMALL_EVALUATION, "tracking.log_model=false"]
    monkeypatch.setattr(sys, "argv", ["wgangp-train", *args])
    main()
    assert "wgangp: error" not in capsys.readouterr().err
    log = (out / "train.log").read_text()
    # the duplicates line, word for word as docs/errors.md gives it
    assert (
        "data: 6 row(s) repeat an earlier row exactly (2 of them with status=bad); each copy is "
        "in the same split as its original"
    ) in log
    assert "selected step" in log  # the step selection ran and spoke
    reports = [*(out / "evaluation").glob("*.md"), *(out / "evaluation").glob("*.html")]
    assert {report.suffix for report in reports} == {".md", ".html"}
    for text in [log, *(report.read_text() for report in reports)]:
        said = [line for line in text.splitlines() if "fraud" in line.lower()]
        assert not said, said[:3]


@pytest.mark.slow
def test_a_loans_run_ships_no_rare_level_no_extreme_date_and_samples_right(tmp_path: Path) -> None:
    """Trains a tiny model on the loans table (day-first dates, text numbers, a rare job, gaps)
    in a subprocess, then reads everything that ships and samples it without ``label=``."""
    frame = loans_table().drop(columns=["Name", "Email", "Notes"])
    frame.loc[0, "opened"] = "01/01/2019"
    frame.loc[1, "opened"] = "31/12/2025"
    path = write_table(frame, tmp_path)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    env = {**os.environ, "PYTHONPATH": str(REPO), "TF_CPP_MIN_LOG_LEVEL": "3"}
    env.pop("MLFLOW_TRACKING_URI", None)
    args = [o for o in TINY if not o.startswith("data")] + [
        f"data.path={path}", "data.label=Status", "data.val_fraction=0.2",
        f"tracking.uri={uri}", f"hydra.run.dir={tmp_path / 'out'}",
    ]  # fmt: skip
    result = subprocess.run(
        [sys.executable, "-m", "wgangp.train", *args], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    bundle = tmp_path / "out" / "synthesizer"

    client = mlflow.MlflowClient(uri)
    (run,) = client.search_runs(client.get_experiment_by_name("wgangp").experiment_id)
    assert run.info.status == "FINISHED"
    downloaded = Path(
        mlflow.artifacts.download_artifacts(
            run_id=run.info.run_id, tracking_uri=uri, dst_path=str(tmp_path / "artifacts")
        )
    )
    texts = [p.read_text(errors="ignore") for p in downloaded.rglob("*") if p.is_file()]
    texts += [p.read_text(errors="ignore") for p in bundle.rglob("*") if p.is_file()]
    for text in texts:
        assert RARE_JOB not in text
        assert "2019-01-01" not in text and "2025-12-31" not in text
    # sampling without label=: the positive class, dates within the real ones
    out = tmp_path / "rows.csv"
    sampled = subprocess.run(
        [sys.executable, "-m", "wgangp.sample", f"model_uri={bundle}", "n=300", f"output={out}"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert sampled.returncode == 0, sampled.stderr[-2000:]
    rows = pd.read_csv(out)
    assert set(rows["Status"]) == {"bad"}
    assert RARE_JOB not in set(rows["Job"].dropna())
    dates = pd.to_datetime(rows["opened"].dropna())
    real = pd.to_datetime(frame["opened"], format="%d/%m/%Y")
    assert dates.max() <= real.max() and dates.min() >= real.min()
    # the served answer is JSON with null gaps
    model = SynthesizerModel()
    model.synthesizer = Synthesizer.load(bundle)
    buffer = io.StringIO()
    predictions_to_json(model.predict(None, pd.DataFrame({"n": [200]})), buffer)
    assert "NaN" not in buffer.getvalue()
    json.loads(buffer.getvalue())
