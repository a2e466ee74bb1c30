"""Real training runs tracked on a real ``mlflow server``, shared by the tests that read them.

Two tiny runs of the real CLI (``python -m wgangp.train``, a subprocess with
``MLFLOW_TRACKING_URI=http://127.0.0.1:PORT``), started together to use both cores:

- ``stable``: the product's default (``+experiment=stable_gp``) at test size; ends FINISHED with a
  logged synthesizer and pyfunc model, registered as ``REGISTERED`` (alias ``champion``), and a
  test evaluation at reduced sizes (``eval/*`` metrics, the description's headline figures).
- ``nan``: the original failure (``+experiment=tf_norm_nan``: tanh critic, ``tf.norm`` penalty);
  ``trainer.on_nan=stop`` ends it FAILED with exit code 0 and the tags ``nan.step``/``nan.source``.

Both keep their default run names (``<name>-<data>-seed<seed>-<config key>``), as a user's
would; the runs are told apart by their ``experiment`` tag.

Usage: a test asks for the session fixture ``server_runs`` (registered by tests/conftest.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from support.configs import SMALL_MODEL
from support.mlflow_server import MlflowServer

EXPERIMENT = "wgangp-server-e2e"
REGISTERED = "fraud-generator"
#: Test size (the ablation test's reduced size): small data and networks, 60 steps, no evaluation
#: (the stable run adds a small one).
#: At this size tf_norm_nan's first non-finite step is 52 (tests/test_ablation.py), so both runs
#: have a few logged points before it: curves to compare in the UI and the notebook.
SMALL_CLI = [
    *SMALL_MODEL,
    "trainer.steps=60",
    "trainer.steps_per_call=20",
    "trainer.progress=false",
    "trainer.sample_rows=50",
    "tracking.log_every=10",
    "evaluate.enabled=false",
    f"tracking.experiment={EXPERIMENT}",
]
#: The test evaluation at a few seconds' size: enough for every eval/* metric to be logged.
SMALL_EVALUATION = [
    "evaluate.enabled=true",
    "evaluate.n_synthetic=200",
    "evaluate.seeds=1",
    "evaluate.c2st_repeats=2",
    "evaluate.gbm_max_iter=20",
    "evaluate.max_normal_rows=2000",
    "evaluate.sdmetrics=false",
]
RUNS = {
    "stable": [
        "+experiment=stable_gp",
        *SMALL_CLI,
        *SMALL_EVALUATION,
        f"tracking.register_as={REGISTERED}",
    ],
    "nan": ["+experiment=tf_norm_nan", *SMALL_CLI, "trainer.on_nan=stop"],
}
#: The ``experiment`` tag (the config's ``name``) of each run.
EXPERIMENTS = {"stable": "stable_gp", "nan": "tf_norm_nan"}
TRAIN_TIMEOUT_S = 900  # two TensorFlow processes on a busy 2-core machine


@dataclass
class ServerRuns:
    server: MlflowServer
    experiment_id: str
    run_ids: dict[str, str]  # "stable" / "nan" -> run id
    seconds: float  # wall time of the two trainings

    @property
    def url(self) -> str:
        return self.server.url


def train_on_server(server: MlflowServer, work_dir: Path) -> dict[str, str]:
    """Run both trainings against ``server``; returns their run ids (fails with the logs)."""
    from mlflow import MlflowClient

    env = {**os.environ, "MLFLOW_TRACKING_URI": server.url, "TF_CPP_MIN_LOG_LEVEL": "2"}
    processes = {}
    for name, overrides in RUNS.items():
        run_dir = work_dir / name
        run_dir.mkdir(parents=True, exist_ok=True)
        log = (run_dir / "train.log").open("wb")
        command = [sys.executable, "-m", "wgangp.train", *overrides, f"hydra.run.dir={run_dir}"]
        processes[name] = (
            subprocess.Popen(command, cwd=run_dir, env=env, stdout=log, stderr=subprocess.STDOUT),
            log,
        )
    for name, (process, log) in processes.items():
        try:
            code = process.wait(timeout=TRAIN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            code = process.wait()
        log.close()
        if code != 0:
            tail = (work_dir / name / "train.log").read_text(errors="replace")[-4000:]
            pytest.fail(f"training run {name!r} exited {code}:\n{tail}")
    client = MlflowClient(server.url)
    experiment = client.get_experiment_by_name(EXPERIMENT)
    assert experiment is not None, f"no experiment {EXPERIMENT} on {server.url}"
    runs = client.search_runs([experiment.experiment_id])
    by_name = {run.data.tags["experiment"]: run.info.run_id for run in runs}
    return {key: by_name[name] for key, name in EXPERIMENTS.items()}


@pytest.fixture(scope="session")
def server_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerRuns]:
    """A real server holding one stable and one NaN training run; stopped after the session."""
    server = MlflowServer(tmp_path_factory.mktemp("server-runs"))
    server.start()
    try:
        started = time.perf_counter()
        run_ids = train_on_server(server, tmp_path_factory.mktemp("server-runs-work"))
        seconds = time.perf_counter() - started
        from mlflow import MlflowClient

        experiment_id = MlflowClient(server.url).get_experiment_by_name(EXPERIMENT).experiment_id
    except BaseException:
        server.stop()
        raise
    try:
        yield ServerRuns(server, experiment_id, run_ids, seconds)
    finally:
        server.stop()
