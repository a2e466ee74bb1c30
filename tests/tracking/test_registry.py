"""``tracking.register_as``: the selected generator in the Model Registry, ``champion`` following
the lowest validation score, and ``wgangp.sample model_uri=models:/NAME@champion``."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pandas as pd
import pytest
from mlflow import MlflowClient
from support.configs import TINY, compose

from wgangp.config import to_config
from wgangp.errors import ConfigError
from wgangp.sample import main as sample_main
from wgangp.tracking.outbox import MODEL_URI_TAG, Outbox, replay
from wgangp.tracking.registry import CHAMPION, SCORE_TAG, register_run_model
from wgangp.tracking.store import use_tracking_uri

NAME = "fraud-generator"


@pytest.fixture(scope="module")
def registered(tmp_path_factory):
    """A tiny real run with ``tracking.register_as``: (tracking URI, run id, a local copy of its
    pyfunc model, which other runs log as theirs)."""
    import mlflow

    from wgangp.train import train

    root = tmp_path_factory.mktemp("registry")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    overrides = [*TINY, f"tracking.uri={uri}", f"tracking.register_as={NAME}"]
    result = train(compose(overrides), output_dir=root / "out", launch_dir=root)
    assert result.status == "FINISHED"
    model_uri = MlflowClient(uri).get_run(result.run_id).data.tags[MODEL_URI_TAG]
    with use_tracking_uri(uri):  # a models:/ download reads the default store
        local = mlflow.artifacts.download_artifacts(model_uri, dst_path=str(root / "model"))
    return uri, result.run_id, Path(local)


def _scored_run(client: MlflowClient, uri: str, model: Path, name: str, score, metric="x"):
    """A run holding a copy of the pyfunc model as its own; registered with ``score``."""
    experiment = client.get_experiment_by_name("wgangp").experiment_id
    run_id = client.create_run(experiment).info.run_id
    client.log_artifacts(run_id, str(model), "model")
    model_uri = f"runs:/{run_id}/model"
    client.set_tag(run_id, MODEL_URI_TAG, model_uri)
    registration = register_run_model(client, uri, run_id, model_uri, name, score, 10, metric)
    return run_id, registration


def test_the_run_registers_its_model_as_champion(registered) -> None:
    uri, run_id, _ = registered
    client = MlflowClient(uri, registry_uri=uri)
    tags = client.get_run(run_id).data.tags
    assert (tags["registry.model"], tags["registry.version"]) == (NAME, "1")
    assert tags["registry.champion"] == "true"
    champion = client.get_model_version_by_alias(NAME, CHAMPION)
    assert str(champion.version) == "1" and champion.run_id == run_id
    scored = tags["selection.score"] != "none"  # no quality loop on so few validation frauds
    assert champion.tags["selection.step"] == (tags["selection.step"] if scored else "none")


def test_champion_moves_only_to_a_strictly_lower_score(registered) -> None:
    uri, _, model = registered
    client = MlflowClient(uri, registry_uri=uri)
    name = "ladder"
    _, first = _scored_run(client, uri, model, name, 0.70)
    assert first.champion and str(client.get_model_version_by_alias(name, CHAMPION).version) == "1"
    _, worse = _scored_run(client, uri, model, name, 0.80)
    _, equal = _scored_run(client, uri, model, name, 0.70)
    _, unscored = _scored_run(client, uri, model, name, None)
    assert not (worse.champion or equal.champion or unscored.champion)
    assert str(client.get_model_version_by_alias(name, CHAMPION).version) == "1"
    best_run, best = _scored_run(client, uri, model, name, 0.60)
    assert best.champion and str(client.get_model_version_by_alias(name, CHAMPION).version) == "5"
    assert client.get_model_version(name, "5").tags[SCORE_TAG] == "0.6"
    # a replay of the same run's registration finds its version instead of adding one
    again = register_run_model(
        client, uri, best_run, f"runs:/{best_run}/model", name, 0.60, 10, "x"
    )
    assert again == best
    assert len(client.search_model_versions(f"name='{name}'")) == 5


_REGISTRAR = """
import sys, time
from mlflow.tracking import MlflowClient
from wgangp.tracking.registry import register_run_model
uri, run_id, score, start_at = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
client = MlflowClient(uri, registry_uri=uri)
time.sleep(max(0.0, start_at - time.time()))  # every registrar starts at the same instant
result = register_run_model(client, uri, run_id, f"runs:/{run_id}/model", "race", score, 10, "x")
print(result.version, result.champion)
"""


@pytest.mark.slow
def test_runs_registering_at_the_same_instant_leave_the_best_as_champion(registered) -> None:
    """No compare-and-set in the registry: each registrar (a process of its own, as two training
    runs are) re-reads until the alias is stable; the best score ends as champion. What a
    registrar is told is the alias when it finished: a worse run that finished before the better
    ones registered was champion then, as it is when runs register one after another."""
    import subprocess
    import sys
    import time

    uri, _, model = registered
    scores = [0.50, 0.40, 0.45, 0.60]
    client = MlflowClient(uri, registry_uri=uri)
    experiment = client.get_experiment_by_name("wgangp").experiment_id
    runs = []
    for _ in scores:  # the runs and their models exist first; the registrations race
        run_id = client.create_run(experiment).info.run_id
        client.log_artifacts(run_id, str(model), "model")
        runs.append(run_id)
    start_at = str(time.time() + 15)
    registrars = [
        subprocess.Popen(
            [sys.executable, "-c", _REGISTRAR, uri, run_id, str(score), start_at],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for run_id, score in zip(runs, scores, strict=True)
    ]
    versions = []
    for registrar in registrars:
        out, err = registrar.communicate(timeout=300)
        assert registrar.returncode == 0, err[-2000:]
        versions.append(out.split()[0])
    assert sorted(versions) == ["1", "2", "3", "4"]  # one version each, none lost to the race
    champion = client.get_model_version_by_alias("race", CHAMPION)
    assert champion.run_id == runs[1]  # the 0.40


def test_a_champion_selected_by_another_metric_stays(registered, caplog) -> None:
    uri, _, model = registered
    client = MlflowClient(uri, registry_uri=uri)
    _scored_run(client, uri, model, "metrics", 0.7, metric="c2st_auc_gbm")
    with caplog.at_level(logging.WARNING, logger="wgangp.tracking"):
        _, other = _scored_run(client, uri, model, "metrics", 0.1, metric="ks_mean")
    assert not other.champion
    assert "not comparable" in caplog.text


def test_a_journaled_registration_is_replayed(registered, tmp_path) -> None:
    """An outage keeps the call in the outbox; ``wgangp.sync``'s replay registers it once."""
    uri, _, model = registered
    client = MlflowClient(uri, registry_uri=uri)
    experiment = client.get_experiment_by_name("wgangp").experiment_id
    run_id = client.create_run(experiment).info.run_id
    client.log_artifacts(run_id, str(model), "model")
    client.set_tag(run_id, MODEL_URI_TAG, f"runs:/{run_id}/model")
    outbox = Outbox(tmp_path / "tracking_outbox.jsonl")
    spec = {"name": "replayed", "score": 0.5, "step": 4, "metric": "c2st_auc_gbm"}
    outbox.append({"op": "register", "register": spec, "run_id": run_id})
    assert replay(outbox, client, uri) == (1, [])
    outbox.append({"op": "register", "register": spec, "run_id": run_id})
    assert replay(outbox, client, uri) == (1, [])
    versions = client.search_model_versions("name='replayed'")
    assert [str(v.version) for v in versions] == ["1"]
    assert client.get_model_version_by_alias("replayed", CHAMPION).tags["selection.step"] == "4"


def test_sample_reads_the_champion_to_stdout(registered, capsys) -> None:
    uri = registered[0]
    argv = [f"model_uri=models:/{NAME}@{CHAMPION}", "n=40", "label=1", f"tracking_uri={uri}"]
    assert sample_main(argv) == 0
    rows = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert len(rows) == 40 and (rows["Class"] == 1).all()


@pytest.mark.parametrize(
    ("model_uri", "says"),
    [
        (f"models:/{NAME}@nobody", "Registered model alias nobody not found"),
        ("models:/absent@champion", "absent"),
    ],
)
def test_a_missing_alias_or_model_is_one_line(registered, capsys, model_uri, says) -> None:
    uri = registered[0]
    assert sample_main([f"model_uri={model_uri}", f"tracking_uri={uri}"]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("wgangp")]
    assert len(errors) == 1
    assert errors[0].startswith(f"wgangp: error: {model_uri}: the registry at {uri} has no version")
    assert says in errors[0] and "tracking.register_as=" in errors[0]


@pytest.mark.parametrize(
    ("overrides", "says"),
    [
        (["tracking.register_as=a/b"], "without '/', ':' or '@'"),
        (['tracking.register_as="o\'brien"'], "of letters, digits, '.', '_' and '-' only"),
        (["tracking.register_as=x?y"], "(models:/NAME@champion must carry it)"),
        (["tracking.register_as=x", "tracking.log_model=false"], "needs tracking.enabled=true"),
        (["tracking.register_as=x", "tracking.enabled=false"], "needs tracking.enabled=true"),
    ],
)
def test_register_as_is_checked(overrides: list[str], says: str) -> None:
    with pytest.raises(ConfigError, match="tracking.register_as") as raised:
        to_config(compose([*TINY, *overrides]))
    assert says in str(raised.value)
