"""``wgangp.fit`` and ``wgangp.load``: the training command's pipeline in Python. For one seed a
DataFrame's run logs what the command's run on the same table's file logs (metrics, digest,
schema); a mistake is a WgangpError of one line and leaves no MLflow run RUNNING."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from mlflow import MlflowClient
from support.cli import run_train_cli
from support.configs import TINY_NETWORKS
from support.docs import documented
from support.tables import write_fraud_team_table

import wgangp
from wgangp.errors import ConfigError, DataError, WgangpError
from wgangp.tracking.names import SELECTION_SCORE

pytestmark = pytest.mark.slow

#: A tiny run with the quality loop on, so the selection's metrics are compared too.
OVERRIDES = [
    *TINY_NETWORKS,
    "trainer.steps=20",
    "trainer.steps_per_call=5",
    "trainer.batch_size=32",
    "trainer.progress=false",
    "trainer.sample_rows=50",
    "select.every=10",
    "select.repeats=1",
    "evaluate.enabled=false",
]


@pytest.fixture(scope="module")
def both_runs(tmp_path_factory) -> tuple[str, str, str, wgangp.Synthesizer, Path]:
    """(tracking URI, the command's run id, fit's run id, fit's synthesizer, the table's CSV)."""
    root = tmp_path_factory.mktemp("api")
    table = write_fraud_team_table(root, rows=800, frauds=160)
    uri = f"sqlite:///{root / 'mlflow.db'}"
    done = run_train_cli(
        [f"data.path={table}", "data.label=is_fraud", f"tracking.uri={uri}", *OVERRIDES], root
    )
    assert done.returncode == 0, done.stderr[-3000:]
    client = MlflowClient(uri)
    (cli_run,) = client.search_runs(client.get_experiment_by_name("wgangp").experiment_id)
    frame = pd.read_csv(table)
    synthesizer = wgangp.fit(
        frame, label="is_fraud", overrides=OVERRIDES, tracking_uri=uri, output_dir=root / "fit"
    )
    return uri, cli_run.info.run_id, synthesizer.run_id, synthesizer, table


def test_fit_logs_what_the_command_logs_for_one_seed(both_runs) -> None:
    uri, cli_id, fit_id, _, _ = both_runs
    client = MlflowClient(uri)
    cli_run, fit_run = client.get_run(cli_id), client.get_run(fit_id)
    assert cli_run.info.status == fit_run.info.status == "FINISHED"
    cli_metrics, fit_metrics = cli_run.data.metrics, fit_run.data.metrics
    compared = {k for k in cli_metrics if not _timing(k)}
    assert "val/score" in compared and len(compared) > 10
    for key in sorted(compared):
        assert fit_metrics[key] == pytest.approx(cli_metrics[key], rel=1e-3, abs=1e-4), key
    # the same table, so the same digest and schema; the frame is recorded as a frame
    assert fit_run.data.tags["data.digest"] == cli_run.data.tags["data.digest"]
    assert fit_run.data.tags["data.source"] == "dataframe"
    assert fit_run.data.tags["data.origin"] == "DataFrame(800 rows)"
    (cli_set,), (fit_set,) = cli_run.inputs.dataset_inputs, fit_run.inputs.dataset_inputs
    assert fit_set.dataset.digest == cli_set.dataset.digest
    assert fit_set.dataset.schema == cli_set.dataset.schema
    artifacts = {a.path for a in client.list_artifacts(fit_id)}
    assert {"schema.yaml", "synthesizer"} <= artifacts


def _timing(metric: str) -> bool:
    """Times, rates and memory: the machine's, not the run's."""
    return metric.startswith("phase/") or metric.endswith(("_s", "per_sec", "_mb"))


def test_the_synthesizer_samples_under_conditions_and_loads_back(both_runs) -> None:
    uri, _, fit_id, synthesizer, _ = both_runs
    assert synthesizer.model_uri == f"runs:/{fit_id}"
    rows = synthesizer.sample(40, where={"merchant": ["online", "travel"]}, seed=3)
    assert len(rows) == 40 and set(rows["merchant"]) <= {"online", "travel"}
    assert (rows["is_fraud"] == "yes").all()
    assert (synthesizer.sample(5, label="no", seed=3)["is_fraud"] == "no").all()
    loaded = wgangp.load(synthesizer.model_uri, tracking_uri=uri)
    assert loaded.run_id == fit_id
    pd.testing.assert_frame_equal(loaded.sample(30, seed=8), synthesizer.sample(30, seed=8))


def test_fit_of_a_path_trains_the_file(both_runs, tmp_path) -> None:
    uri, cli_id, _, _, table = both_runs
    synthesizer = wgangp.fit(
        table, label="is_fraud", overrides=[*OVERRIDES, "trainer.steps=5", "select.every=0"],
        tracking_uri=uri, output_dir=tmp_path / "out",
    )  # fmt: skip
    run = MlflowClient(uri).get_run(synthesizer.run_id)
    assert run.data.tags["data.source"] == "file"
    assert (
        run.data.tags["data.digest"] == MlflowClient(uri).get_run(cli_id).data.tags["data.digest"]
    )
    assert (tmp_path / "out" / "train.log").is_file()


@pytest.mark.parametrize(
    ("call", "kind", "line"),
    [
        (
            lambda frame, uri: wgangp.fit(frame, label="is_fraud", overrides=["trainer.stepz=5"]),
            ConfigError,
            "unknown config key 'trainer.stepz' in override 'trainer.stepz=5'; did you mean "
            "'trainer.steps'?",
        ),
        (
            lambda frame, uri: wgangp.fit(frame, label="fraud", tracking_uri=uri),
            DataError,
            "DataFrame(800 rows): label column 'fraud' is not in the table; did you mean "
            "'is_fraud'? Set label=<column>",
        ),
        (
            lambda frame, uri: wgangp.fit([1, 2], label="is_fraud", tracking_uri=uri),
            DataError,
            "data must be a pandas DataFrame or a path, got list",
        ),
        (
            lambda frame, uri: wgangp.fit(
                frame, label="is_fraud", overrides=["data.label=x"], tracking_uri=uri
            ),
            ConfigError,
            "override data.label=... is fit()'s own argument: pass it to fit()",
        ),
        (
            lambda frame, uri: wgangp.fit(
                frame, label="is_fraud", positive="maybe", tracking_uri=uri
            ),
            DataError,
            "maybe",
        ),
    ],
    ids=["unknown key", "no such label", "not a frame", "label as override", "no such class"],
)
def test_a_mistake_is_one_line_and_leaves_no_run_running(
    both_runs, tmp_path, monkeypatch, call, kind, line
) -> None:
    uri = both_runs[0]
    monkeypatch.chdir(tmp_path)
    frame = pd.read_csv(both_runs[4])
    with pytest.raises(WgangpError) as err:
        call(frame, uri)
    assert isinstance(err.value, kind)
    assert line in str(err.value) and "\n" not in str(err.value)
    if kind is ConfigError and "fit()" in line:
        documented(line)
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("wgangp").experiment_id
    assert not client.search_runs(experiment, "attributes.status = 'RUNNING'")


def test_one_override_as_a_str_is_that_override(monkeypatch, tmp_path) -> None:
    """``overrides="trainer.steps=30"`` is what users type: one override, not the characters of
    one (it read as an unknown key '')."""
    import wgangp.train

    seen = []

    def train(cfg, **kwargs):
        seen.append(cfg)
        raise WgangpError("stop here")

    monkeypatch.setattr(wgangp.train, "train", train)
    with pytest.raises(WgangpError, match="stop here"):
        wgangp.fit(
            pd.DataFrame({"a": [1], "y": [0]}), label="y", overrides="trainer.steps=30",
            output_dir=tmp_path / "out",
        )  # fmt: skip
    assert seen[0].trainer.steps == 30


def test_a_frame_with_mixed_objects_and_nullable_booleans_trains(tmp_path) -> None:
    """An object column of 1, 'a', 2.5, None and True (refused against the schema inferred from
    the same frame) trains as its text; a nullable ``boolean`` column comes back ``boolean``."""
    from support.tables import fraud_team_table

    frame = fraud_team_table(800, frauds=160)
    cells = [1, "a", 2.5, None, True]
    frame["mixed"] = pd.Series([cells[i % 5] for i in range(800)], dtype=object)
    frame["flag"] = pd.array([True, False, None, True] * 200, dtype="boolean")
    synthesizer = wgangp.fit(
        frame, label="is_fraud", overrides=OVERRIDES, output_dir=tmp_path / "out",
        tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}",
    )  # fmt: skip
    rows = synthesizer.sample(300, seed=0)
    assert set(rows["mixed"].dropna()) <= {"1", "a", "2.5", "True"}
    assert rows["flag"].dtype == "boolean" and set(rows["flag"].dropna()) <= {True, False}


def test_evaluating_a_dataframe_run_again_asks_for_its_rows_as_a_file(both_runs, capsys) -> None:
    from wgangp.evaluate import main as evaluate_main

    uri, _, fit_id, _, table = both_runs
    assert evaluate_main(["--run", fit_id, "--tracking-uri", uri]) == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line == (
        f"wgangp: error: run {fit_id} trained on a DataFrame given in Python: write its rows "
        "to a file and pass it with data=FILE"
    )
    documented(line.removeprefix("wgangp: error: "), run=fit_id)


def test_the_core_fit_trains_the_same_model_and_leaves_nothing_behind(
    both_runs, tmp_path, monkeypatch
) -> None:
    """``track=False``: no Hydra composition, no MLflow run, no file in the working folder or
    the temporary one; the same seed trains the same model as the tracked fit."""
    import hydra

    uri, _, fit_id, tracked, table = both_runs
    work, scratch = tmp_path / "work", tmp_path / "scratch"
    work.mkdir(), scratch.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'never.db'}")
    monkeypatch.setattr("tempfile.tempdir", str(scratch))

    def no_composition(*args, **kwargs):
        raise AssertionError("the core fit composed a Hydra config")

    monkeypatch.setattr(hydra, "compose", no_composition)
    synthesizer = wgangp.fit(pd.read_csv(table), label="is_fraud", overrides=OVERRIDES, track=False)
    assert synthesizer.run_id is None and synthesizer.model_uri is None
    assert list(work.iterdir()) == [] and list(scratch.iterdir()) == []
    assert not (tmp_path / "never.db").exists()
    logged = MlflowClient(uri).get_run(fit_id).data.metrics
    assert synthesizer.metrics[SELECTION_SCORE] == pytest.approx(logged[SELECTION_SCORE], rel=1e-3)
    assert tracked.metrics[SELECTION_SCORE] == pytest.approx(logged[SELECTION_SCORE], rel=1e-3)
    pd.testing.assert_frame_equal(synthesizer.sample(30, seed=8), tracked.sample(30, seed=8))
    saved = synthesizer.save(tmp_path / "kept")
    pd.testing.assert_frame_equal(
        wgangp.load(str(saved)).sample(30, seed=8), synthesizer.sample(30, seed=8)
    )


@pytest.mark.parametrize(
    ("kwargs", "line"),
    [
        (
            {"tracking_uri": "sqlite:///x.db"},
            "fit(track=False) keeps no MLflow run and no folder: drop tracking_uri= and "
            "output_dir=, or fit with track=True",
        ),
        (
            {"overrides": ["+experiment=stable_gp"]},
            "fit(track=False) takes key=value overrides of the schema's keys, not "
            "'+experiment=stable_gp' (a config group or +/~): fit with track=True",
        ),
        (
            {"overrides": ["trainer.stepz=5"]},
            "unknown config key 'trainer.stepz' in override 'trainer.stepz=5'; did you mean "
            "'trainer.steps'?",
        ),
    ],
    ids=["a tracking store", "a config group", "unknown key"],
)
def test_a_core_fit_mistake_is_one_line(tmp_path, monkeypatch, kwargs, line) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as err:
        wgangp.fit(pd.DataFrame({"a": [1, 2], "y": [0, 1]}), label="y", track=False, **kwargs)
    assert str(err.value) == line
    if "track=" in line:
        documented(line)
    assert list(tmp_path.iterdir()) == []
