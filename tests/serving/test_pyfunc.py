"""The sampler pyfunc model: request parsing (fast), then a real tiny training run's logged model
served by ``mlflow models serve --env-manager local`` and called over REST."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from mlflow.exceptions import MlflowException
from mlflow.pyfunc.scoring_server import predictions_to_json
from support.configs import TINY, compose
from support.creditcard import COLUMNS, LABEL, SCHEMA
from support.docs import documented
from support.tables import loans_features, loans_table

from wgangp.data.schema.inference import infer_schema
from wgangp.data.schema.table_schema import TableSchema
from wgangp.errors import WgangpError
from wgangp.serving.bundle import META_FILE, SCHEMA_FILE, find_bundle
from wgangp.serving.pyfunc import (
    SynthesizerModel,
    model_signature,
    model_spec,
    parse_requests,
)

# --- request parsing and bundle lookup (no TensorFlow) ----------------------------------------


def test_requests_default_label_and_seed():
    frame = pd.DataFrame({"n": [5, 3]})
    assert parse_requests(frame, SCHEMA) == [(5, 1, 0), (3, 1, 1)]


def test_requests_with_all_columns_and_missing_values():
    frame = pd.DataFrame({"n": [2, 4], "label": [0, None], "seed": [None, 9]})
    assert parse_requests(frame, SCHEMA) == [(2, 0, 0), (4, 1, 9)]


@pytest.mark.parametrize(
    ("frame", "expected"),
    [
        (pd.DataFrame({"rows": [3]}), "needs a column n"),
        (pd.DataFrame({"n": [-1]}), "n must be >= 0"),
        (pd.DataFrame({"n": [2.5]}), "n must be an integer"),
        (pd.DataFrame({"n": ["many"]}), "n must be an integer"),
        (
            pd.DataFrame({"n": [3], "label": [2]}),
            "label=2 is not a value of Class; use one of: 0, 1",
        ),
        (pd.DataFrame({"n": [3], "seed": [-4]}), "seed must be in [0, 4294967295], got -4"),
        (
            pd.DataFrame({"n": [200_000, 200_000]}),
            "400000 rows requested in one call; at most 250000",
        ),
        (pd.DataFrame({"n": [2**63]}, dtype=object), "9223372036854775808 rows requested in one"),
        (pd.DataFrame({"n": [True]}), "n must be an integer, got True"),
    ],
)
def test_bad_requests_are_400_errors(frame, expected):
    with pytest.raises(MlflowException) as info:
        parse_requests(frame, SCHEMA)
    assert expected in info.value.message
    assert info.value.get_http_status_code() == 400


def test_a_large_answer_trims_the_heap_afterwards(monkeypatch):
    """The server encodes the rows after predict returns: trimming goes on in the background."""
    from wgangp.serving import memory, pyfunc
    from wgangp.serving.pyfunc import SynthesizerModel

    trims: list[float] = []
    monkeypatch.setattr(memory, "_trim", lambda: trims.append(time.monotonic()))
    monkeypatch.setattr(memory, "TRIM_EVERY_S", 0.01)
    monkeypatch.setattr(memory, "TRIM_FOR_S", 0.2)
    monkeypatch.setattr(pyfunc, "LARGE_ANSWER_ROWS", 10)

    class Rows:
        schema = SCHEMA

        def sample_class(self, n, klass, seed, conditions=()):
            return pd.DataFrame({c: [0.0] * n for c in COLUMNS})

    model = SynthesizerModel()
    model.synthesizer = Rows()
    model.predict(None, pd.DataFrame({"n": [5]}))
    time.sleep(0.1)
    assert trims == []
    model.predict(None, pd.DataFrame({"n": [10]}))
    time.sleep(0.5)
    assert len(trims) >= 5 and memory._thread is None  # it ran, then stopped


def test_model_spec_is_plain_json_and_restores_the_signature(tmp_path):
    """The tracker journals the spec during an outage: it must survive a JSON round trip."""
    from mlflow.models import ModelSignature

    (tmp_path / SCHEMA_FILE).write_text(SCHEMA.to_yaml())  # every bundle holds its schema
    (tmp_path / META_FILE).write_text("{}")  # and its description
    spec = json.loads(json.dumps(model_spec(tmp_path)))
    assert spec["metadata"] is None  # no guarantee to show
    assert spec["name"] == "synthesizer"
    assert spec["artifacts"] == {"synthesizer": str(tmp_path.resolve())}
    assert Path(spec["python_model"]).is_file()
    assert ModelSignature.from_dict(spec["signature"]) == model_signature(SCHEMA)
    assert spec["input_example"] == {"n": [3], "label": [1], "seed": [0]}


def test_bundle_found_in_each_layout(tmp_path):
    for layout in ("", "synthesizer", "artifacts/synthesizer"):
        root = tmp_path / layout.replace("/", "_") / "x"
        bundle = root / layout
        bundle.mkdir(parents=True)
        (bundle / META_FILE).write_text("{}")
        assert find_bundle(root) == bundle
    with pytest.raises(WgangpError, match="holds no wgangp synthesizer"):
        find_bundle(tmp_path / "empty")


def test_signature_makes_label_and_seed_optional():
    signature = model_signature(SCHEMA)
    required = {spec.name: spec.required for spec in signature.inputs.inputs}
    assert required == {"n": True, "label": False, "seed": False}
    assert signature.outputs.input_names() == list(COLUMNS)
    types = {spec.name: spec.type.name for spec in signature.outputs.inputs}
    assert types[LABEL] == "long" and types["Amount"] == "double"


class _GappySynthesizer:
    """A table model's rows with a gap in every column kind."""

    def __init__(self, table: TableSchema) -> None:
        self.schema = table

    def sample_class(self, n: int, klass: int = 1, seed: int = 0, conditions=()) -> pd.DataFrame:
        rows = pd.DataFrame(
            {
                "Status": ["bad"] * n,
                "Age": pd.array([30 + i if i % 2 else None for i in range(n)], dtype="Int64"),
                "Job": pd.Series(["fixed" if i % 2 else np.nan for i in range(n)], dtype=object),
                "Fee": [1.5 if i % 2 else np.nan for i in range(n)],
                "opened": pd.to_datetime(["2023-01-01" if i % 2 else None for i in range(n)]),
            }
        )
        return rows


def test_the_served_answer_writes_every_gap_as_null() -> None:
    frame = loans_features(loans_table(), "Age", "Job", "Fee", "opened")
    model = SynthesizerModel()
    model.synthesizer = _GappySynthesizer(infer_schema(frame, "Status"))
    answer = model.predict(None, pd.DataFrame({"n": [4, 6]}))
    buffer = io.StringIO()
    predictions_to_json(answer, buffer)  # what `mlflow models serve` writes

    def refuse(constant: str) -> None:
        raise AssertionError(f"not JSON: {constant}")

    rows = json.loads(buffer.getvalue(), parse_constant=refuse)["predictions"]
    assert len(rows) == 10
    for row in rows[::2]:
        assert {row[c] for c in ("Age", "Job", "Fee", "opened")} == {None}
    assert rows[1]["Job"] == "fixed" and rows[1]["Age"] == 31 and rows[1]["Fee"] == 1.5


# --- a real run's model, loaded in-process and served over REST -------------------------------


@pytest.fixture(scope="module")
def logged_model(tmp_path_factory):
    """(tracking URI, models:/ URI) of one tiny tracked training run."""
    from mlflow import MlflowClient

    from wgangp.train import train

    root = tmp_path_factory.mktemp("serving")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    result = train(
        compose([*TINY, f"tracking.uri={uri}"]), output_dir=root / "out", launch_dir=root
    )
    assert result.status == "FINISHED"
    return uri, MlflowClient(uri).get_run(result.run_id).data.tags["model.uri"]


def test_logged_model_predicts_in_process(logged_model, monkeypatch):
    import mlflow.pyfunc

    uri, model_uri = logged_model
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    model = mlflow.pyfunc.load_model(model_uri)
    rows = model.predict(pd.DataFrame({"n": [4, 2], "label": [1, 0], "seed": [0, 0]}))
    assert list(rows.columns) == list(COLUMNS)
    assert rows[LABEL].tolist() == [1, 1, 1, 1, 0, 0]
    again = model.predict(pd.DataFrame({"n": [4], "label": [1], "seed": [0]}))
    pd.testing.assert_frame_equal(again, rows.iloc[:4])  # same seed, same rows
    assert len(model.predict(pd.DataFrame({"n": [0]}))) == 0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _post(url: str, payload: dict) -> tuple[int, dict]:
    request = urllib.request.Request(
        url, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


@pytest.fixture(scope="module")
def served(logged_model, tmp_path_factory):
    """``mlflow models serve`` on a free loopback port; the whole process group is stopped."""
    uri, model_uri = logged_model
    port = _free_port()
    log_path = tmp_path_factory.mktemp("serve") / "serve.log"
    mlflow_cli = Path(sys.executable).with_name("mlflow")
    command = [str(mlflow_cli), "models", "serve", "-m", model_uri, "--env-manager", "local"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--workers", "1"]
    # The scoring server execs `uvicorn` by name: the venv's bin must be on PATH, as when activated.
    path = f"{mlflow_cli.parent}{os.pathsep}{os.environ.get('PATH', '')}"
    env = {**os.environ, "PATH": path, "MLFLOW_TRACKING_URI": uri, "TF_CPP_MIN_LOG_LEVEL": "2"}
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300  # imports TensorFlow and loads the model: slow when busy
        while True:
            if process.poll() is not None:
                pytest.fail(
                    f"mlflow models serve exited {process.returncode}: {log_path.read_text()}"
                )
            with (
                contextlib.suppress(OSError),
                urllib.request.urlopen(f"{base}/ping", timeout=2) as response,
            ):
                if response.status == 200:
                    break
            if time.monotonic() > deadline:
                pytest.fail(f"model server not up after 300 s: {log_path.read_text()[-3000:]}")
            time.sleep(0.5)
        yield base
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


@pytest.mark.slow
@pytest.mark.server
def test_rest_invocations_return_requested_rows(served):
    status, body = _post(
        f"{served}/invocations",
        {"dataframe_split": {"columns": ["n", "label", "seed"], "data": [[5, 1, 0], [3, 0, 7]]}},
    )
    assert status == 200, body
    rows = pd.DataFrame(body["predictions"])
    assert list(rows.columns) == list(COLUMNS)
    assert rows[LABEL].tolist() == [1] * 5 + [0] * 3
    assert rows.notna().all().all()
    assert (rows["Amount"] >= 0).all() and rows["Time"].between(0, 172_792).all()


@pytest.mark.slow
@pytest.mark.server
def test_rest_optional_columns_and_bad_request(served):
    status, body = _post(f"{served}/invocations", {"dataframe_records": [{"n": 4}]})
    assert status == 200, body
    assert [row[LABEL] for row in body["predictions"]] == [1, 1, 1, 1]

    status, body = _post(f"{served}/invocations", {"dataframe_records": [{"n": 2, "label": 5}]})
    assert status == 400
    assert "label=5 is not a value of Class; use one of: 0, 1" in body["message"]
    # the server no longer casts before the checks: 2.5 is not 2 rows, 2**63 is not negative
    status, body = _post(f"{served}/invocations", {"dataframe_records": [{"n": 2.5}]})
    assert status == 400 and "n must be an integer, got 2.5" in body["message"]
    status, body = _post(f"{served}/invocations", {"dataframe_records": [{"n": 2**63}]})
    assert status == 400 and "9223372036854775808 rows requested" in body["message"]


def test_logged_model_takes_where_as_a_param(logged_model, monkeypatch):
    import mlflow.pyfunc

    uri, model_uri = logged_model
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    model = mlflow.pyfunc.load_model(model_uri)
    where = json.dumps({"Amount": [None, 100], "Time": [50_000, None]})
    rows = model.predict(pd.DataFrame({"n": [30, 5], "label": [1, 0]}), params={"where": where})
    assert rows[LABEL].tolist() == [1] * 30 + [0] * 5
    assert (rows["Amount"] <= 100).all() and (rows["Time"] >= 50_000).all()
    with pytest.raises(Exception, match="where: 'Amunt' is not a column of the samples"):
        model.predict(pd.DataFrame({"n": [3]}), params={"where": '{"Amunt": [1, 2]}'})
    with pytest.raises(Exception, match="params where=\\{Amount is not JSON"):
        model.predict(pd.DataFrame({"n": [3]}), params={"where": "{Amount"})


@pytest.mark.slow
@pytest.mark.server
def test_rest_where_param(served):
    where = json.dumps({"Amount": [None, 100]})
    payload = {"dataframe_records": [{"n": 6}], "params": {"where": where}}
    status, body = _post(f"{served}/invocations", payload)
    assert status == 200, body
    assert [row["Amount"] <= 100 for row in body["predictions"]] == [True] * 6
    payload["params"] = {"where": json.dumps({"Amount": [1e9, None]})}
    status, body = _post(f"{served}/invocations", payload)
    assert status == 400 and "where: Amount in [1000000000, null] lies outside" in body["message"]


UNKNOWN_PARAM = (
    "params 'wehre' not taken by this model; did you mean 'where'? its one param is where, JSON "
    'text of conditions such as {"amount": [500, null]}'
)


def test_a_param_the_model_does_not_take_is_refused(logged_model, monkeypatch):
    """MLflow drops a param the signature lacks with a warning; the model refuses it instead of
    answering rows without the conditions asked for."""
    import mlflow.pyfunc

    uri, model_uri = logged_model
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    model = mlflow.pyfunc.load_model(model_uri)
    where = json.dumps({"Amount": [None, 100]})
    with pytest.raises(Exception) as err:
        model.predict(pd.DataFrame({"n": [3]}), params={"wehre": where})
    assert str(err.value) == UNKNOWN_PARAM
    documented(UNKNOWN_PARAM)
    assert len(model.predict(pd.DataFrame({"n": [2]}))) == 2  # the next call is not refused
    rows = model.predict(pd.DataFrame({"n": [4]}), params={"where": where})
    assert (rows["Amount"] <= 100).all()


@pytest.mark.slow
@pytest.mark.server
def test_rest_a_misspelled_param_is_a_400(served):
    payload = {"dataframe_records": [{"n": 3}], "params": {"wehre": '{"Amount": [null, 100]}'}}
    status, body = _post(f"{served}/invocations", payload)
    assert status == 400 and UNKNOWN_PARAM in body["message"]  # the server wraps it
    status, body = _post(f"{served}/invocations", {"dataframe_records": [{"n": 3}]})
    assert status == 200 and len(body["predictions"]) == 3
