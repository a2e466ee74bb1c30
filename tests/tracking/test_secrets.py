"""Secrets never reach params, tags, artifacts, files or logs; nothing unpickles user files.

The slow tests plant fake Kaggle and MLflow credentials in the environment (and a password inside
``MLFLOW_TRACKING_URI``; typed into ``tracking.uri=`` it is refused before Hydra writes it down),
or a presigned URL with a password as ``data.path``, run the CLI and grep every byte the run
wrote: output and checkpoint dirs, the sqlite store, artifacts, stdout and stderr. The URLs
below are hand-written look-alikes: nothing here reaches the network.
"""

from __future__ import annotations

import io
import logging
import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from support.configs import REPO
from support.mlflow_server import free_port

from wgangp.errors import DataError, report_error
from wgangp.redaction import redact
from wgangp.tracking.secrets import RedactingFilter, redact_logs


def test_redact_masks_secret_values_and_uri_passwords(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAGGLE_KEY", "k-5ecret-value")
    assert redact("key=k-5ecret-value;") == "key=***;"
    assert redact("http://bob:pa55@host:5000/x") == "http://***@host:5000/x"
    assert redact("http://host:5000") == "http://host:5000"


AWS = (
    "https://bucket.s3.amazonaws.com/t.csv?X-Amz-Algorithm=AWS4-HMAC-SHA256"
    "&X-Amz-Credential=AKIAEXAMPLE%2F20240101%2Fus-east-1%2Fs3%2Faws4_request"
    "&X-Amz-Date=20240101T000000Z&X-Amz-Expires=3600&X-Amz-Security-Token=FwoGZXIvYXdz"
    "&X-Amz-SignedHeaders=host&X-Amz-Signature=abcdef0123456789&versionId=v7"
)
GCS = (
    "https://storage.googleapis.com/b/t.csv?X-Goog-Algorithm=GOOG4-RSA-SHA256"
    "&X-Goog-Credential=sa%40proj.iam.gserviceaccount.com%2F20240101%2Fauto%2Fstorage"
    "&X-Goog-Date=20240101T000000Z&X-Goog-Expires=900&X-Goog-SignedHeaders=host"
    "&X-Goog-Signature=0a1b2c3d4e"
)
AZURE = (
    "https://acct.blob.core.windows.net/c/t.csv?sv=2022-11-02&se=2024-01-02T00%3A00%3A00Z"
    "&sp=r&sr=b&sig=AbC%2BdEf%3D"
)


@pytest.mark.parametrize(
    ("url", "secrets_in", "kept"),
    [
        ("https://user:pass@host/t.csv", ["user", "pass"], ["https://***@host/t.csv"]),
        ("http://user:pw@host:5000", ["user", "pw@"], ["http://***@host:5000"]),
        ("https://ghp_tokenABC123@github.com/o/r", ["ghp_tokenABC123"], ["***@github.com/o/r"]),
        ("http://u:p@ss@host/x", ["p@ss", "u:"], ["http://***@host/x"]),  # @ in the password
        ("s3://AKIAKEY:s3cr3t@bucket/tx/*.parquet", ["AKIAKEY", "s3cr3t"], ["@bucket/tx/"]),
        (
            AWS,
            ["AKIAEXAMPLE", "abcdef0123456789", "FwoGZXIvYXdz", "aws4_request"],
            [
                "X-Amz-Date=20240101T000000Z",
                "X-Amz-Expires=3600",
                "versionId=v7",
                "X-Amz-Signature=***",
                "X-Amz-Credential=***",
                "X-Amz-SignedHeaders=host",
            ],
        ),
        (
            GCS,
            ["0a1b2c3d4e", "proj.iam"],
            ["X-Goog-Signature=***", "X-Goog-Credential=***", "X-Goog-Expires=900"],
        ),
        (AZURE, ["AbC%2BdEf"], ["sv=2022-11-02", "se=2024-01-02T00%3A00%3A00Z", "sp=r", "sig=***"]),
        ("https://h/t.csv?token=T0k3n&x=1", ["T0k3n"], ["token=***&x=1"]),
        ("https://h/t.csv?key=K3y", ["K3y"], ["?key=***"]),
        ("https://h/t.csv?access_token=At0k", ["At0k"], ["access_token=***"]),
        ("https://h/t.csv?api_key=Ap1", ["Ap1"], ["api_key=***"]),
        ("https://h/t.csv?password=Pw0rd", ["Pw0rd"], ["password=***"]),
        ("https://h/t.csv?secret=S3cret", ["S3cret"], ["secret=***"]),
        ("https://h/t.csv?ClientSecret=C1&MyApiKey=K1&Sig=G1", ["C1", "K1", "G1"], ["Sig=***"]),
        ("https://h/cb#access_token=Fr4g&state=s1", ["Fr4g"], ["state=s1"]),  # OAuth fragment
    ],
)
def test_redact_masks_a_urls_user_info_and_secret_query_values(
    url: str, secrets_in: list[str], kept: list[str]
) -> None:
    for text in (url, f"error: cannot read data.path={url} (IO Error); check it", f"'{url}'"):
        clean = redact(text)
        leaked = [s for s in secrets_in if s in clean]
        assert leaked == [], clean
        assert all(k in clean for k in kept), clean


def test_redact_handles_several_urls_and_leaves_other_text_alone() -> None:
    text = (
        f"- data.path='{AWS}'\n- tracking.uri=http://u:pw1@h:5000\n"
        f"tried {AZURE} and https://t0k@h/x?versionId=2, then a=b key=value"
    )
    clean = redact(text)
    assert not any(s in clean for s in ("AKIAEXAMPLE", "abcdef0123456789", "pw1", "AbC%2B", "t0k"))
    assert (
        "http://***@h:5000\n" in clean
        and "https://***@h/x?versionId=2, then a=b key=value" in clean
    )
    assert clean.count("X-Amz-Signature=***") == 1 and clean.count("sig=***") == 1
    for untouched in (
        "data.path=/x/y.csv",
        "trainer.steps=5 key=value token=abc password=hunter2",
        "sqlite:////tmp/mlflow.db",
        "http://127.0.0.1:5000/#/experiments/1",
        "file:///data/t.csv?versionId=3",
        "mailto bob@example.com",
        "",
    ):
        assert redact(untouched) == untouched
    assert redact(42) == 42 and redact(None) is None


def test_the_log_filter_redacts_a_records_message_and_args(monkeypatch) -> None:
    monkeypatch.setenv("KAGGLE_KEY", "k-5ecret-value")
    record = logging.LogRecord(
        "duckdb",
        logging.INFO,
        __file__,
        1,
        "reading %s with %s (%d%%)",
        (AWS, "k-5ecret-value", 5),
        None,
    )
    assert RedactingFilter().filter(record) is True
    message = record.getMessage()
    assert "abcdef0123456789" not in message and "AKIAEXAMPLE" not in message
    assert "X-Amz-Signature=***" in message and message.endswith("with *** (5%)")
    assert record.args == ()
    assert RedactingFilter().filter(record) and record.getMessage() == message  # twice: the same


def test_redact_logs_covers_a_library_loggers_records_and_tracebacks() -> None:
    """A handler as Hydra configures one (on a logger), a record from a child logger, and the
    traceback of a logged exception: none shows the URL's secrets."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    parent = logging.getLogger("wgangp_test_secrets")
    parent.addHandler(handler)
    parent.setLevel(logging.INFO)
    try:
        redact_logs()
        redact_logs()  # once per handler
        assert sum(isinstance(f, RedactingFilter) for f in handler.filters) == 1
        library = logging.getLogger("wgangp_test_secrets.somelib")
        library.info("GET %s -> %d", "https://u:pw9@h/t.csv?sig=S1g9&sp=r", 403)
        try:
            raise OSError("cannot open https://h/t.csv?token=T0kx")
        except OSError:
            library.exception("failed")
    finally:
        parent.removeHandler(handler)
    written = stream.getvalue()
    assert "GET https://***@h/t.csv?sig=***&sp=r -> 403" in written
    assert "Traceback" in written and "token=***" in written
    assert not any(s in written for s in ("pw9", "S1g9", "T0kx"))


def test_report_error_prints_one_redacted_line(capsys: pytest.CaptureFixture) -> None:
    err = DataError(
        f"cannot read data.path=https://u:pw7@h/t.csv?X-Amz-Signature=S7 (IO)\nsee {AWS}"
    )
    report_error(err)
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "wgangp: error: cannot read data.path=https://***@h/t.csv?X-Amz-Signature=*** (IO) see "
        + redact(AWS)
    ]
    report_error(err, debug=True)
    said = capsys.readouterr().err
    assert "DataError: cannot read data.path=https://***@h/" in said  # debug=true's report
    assert not any(s in said for s in ("pw7", "S7 ", "AKIAEXAMPLE", "abcdef0123456789"))


def test_hydra_files_and_a_sweeps_record_are_scrubbed(tmp_path: Path) -> None:
    from wgangp.training.run_dirs import RunDirs

    meta = tmp_path / "out" / ".hydra"
    meta.mkdir(parents=True)
    typed = f"- data.path='{AWS}'\n- tracking.uri=http://u:pw3@h:5000\n"
    (meta / "overrides.yaml").write_text(typed)
    (meta / "config.yaml").write_text("data:\n  path: /x/y.csv\n")
    sweep = tmp_path / "multirun.yaml"
    sweep.write_text(typed)
    RunDirs(tmp_path / "out", tmp_path, meta, sweep).scrub()
    for path in (meta / "overrides.yaml", sweep):
        text = path.read_text()
        assert "AKIAEXAMPLE" not in text and "pw3" not in text and "X-Amz-Signature=***" in text
    assert (meta / "config.yaml").read_text() == "data:\n  path: /x/y.csv\n"
    RunDirs(tmp_path / "gone", tmp_path, tmp_path / "gone" / ".hydra", tmp_path / "no.yaml").scrub()


def test_a_url_tables_run_name_comes_from_its_path_only() -> None:
    from wgangp.training.run_record import url_table_name

    assert url_table_name("https://u:pw@h/data/t.csv?X-Amz-Signature=S") == "t"
    assert url_table_name("https://tok@host/") == "host"
    assert url_table_name("s3://bucket/tx/*.parquet") == "tx"
    assert url_table_name("https://h/t?sig=S1") == "t"


def test_no_unpickling_and_keras_safe_mode_in_the_package() -> None:
    """Static guard: no pickle-based loader and no Keras unsafe loading anywhere in wgangp/."""
    forbidden = re.compile(
        r"\bpickle\.loads?\(|\bcloudpickle\b|joblib\.load\(|allow_pickle\s*=\s*True|"
        r"safe_mode\s*=\s*False|pd\.read_pickle|torch\.load\("
    )
    offenders = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path in (REPO / "wgangp").rglob("*.py")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if forbidden.search(line)
    ]
    assert offenders == []


@pytest.mark.slow
def test_planted_secrets_appear_nowhere(tmp_path: Path) -> None:
    planted = {
        "KAGGLE_USERNAME": f"kaggle-user-{secrets.token_hex(6)}",
        "KAGGLE_KEY": secrets.token_hex(16),
        "MLFLOW_TRACKING_TOKEN": f"tok-{secrets.token_hex(12)}",
        "MLFLOW_TRACKING_PASSWORD": f"pw-{secrets.token_hex(12)}",
    }
    uri = f"http://wgangp:{planted['MLFLOW_TRACKING_PASSWORD']}@127.0.0.1:{free_port()}"
    env = {**os.environ, **planted, "TF_CPP_MIN_LOG_LEVEL": "3", "MLFLOW_TRACKING_URI": uri}
    done = subprocess.run(
        [
            sys.executable, "-m", "wgangp.train", "data=simulated", "data.simulated_rows=4000",
            "model.latent_dim=8", "model.generator.hidden=[16]", "model.critic.hidden=[16]",
            "trainer.batch_size=32", "trainer.steps=4", "trainer.steps_per_call=2",
            "trainer.checkpoint_every=2", "trainer.progress=false", "trainer.sample_rows=20",
            "tracking.log_every=2", "evaluate.enabled=false",
            "tracking.required=false", f"hydra.run.dir={tmp_path}/out",
        ],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    said = done.stdout + done.stderr  # Hydra's log handler writes to stdout
    assert "tracking.required=false: logging to the local store sqlite:///" in said
    local = tmp_path / "out" / "mlflow.db"
    assert local.is_file() and (tmp_path / "out" / "mlartifacts").is_dir()

    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(written) > 20  # outputs, hydra files, checkpoints, store, artifacts
    blobs = {str(p): p.read_bytes() for p in written}
    blobs["stdout"], blobs["stderr"] = done.stdout.encode(), done.stderr.encode()
    leaks = [
        f"{name} in {where}"
        for name, value in planted.items()
        for where, blob in blobs.items()
        if value.encode() in blob
    ]
    assert leaks == []


def test_a_password_in_tracking_uri_is_refused_before_hydra_writes_it(tmp_path: Path) -> None:
    """Hydra writes the overrides into ``.hydra/`` as typed: the password never gets there."""
    secret = secrets.token_hex(8)
    uri = f"http://user:{secret}@127.0.0.1:{free_port()}"
    command = [sys.executable, "-m", "wgangp.train", f"tracking.uri={uri}"]
    proc = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert (
        proc.stderr.strip()
        .splitlines()[-1]
        .startswith("wgangp: error: tracking.uri carries a password (http://***@127.0.0.1:")
    )
    assert "set MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD" in proc.stderr
    assert secret not in proc.stderr + proc.stdout
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert all(secret not in p.read_text(errors="replace") for p in written)


def test_the_reachability_check_sends_credentials_from_the_uri() -> None:
    """``MLFLOW_TRACKING_URI=http://user:password@host`` works: the check authenticates."""
    import base64
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    from wgangp.errors import TrackingError
    from wgangp.tracking.store import check_reachable

    expected = "Basic " + base64.b64encode(b"user:p@ss").decode()

    class Health(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the handler's name
            ok = self.path == "/health" and self.headers.get("Authorization") == expected
            self.send_response(200 if ok else 401)
            self.end_headers()
            self.wfile.write(b"OK")

        def log_message(self, *args) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = server.server_address[1]
        check_reachable(f"http://user:p%40ss@127.0.0.1:{port}")
        with pytest.raises(TrackingError) as err:
            check_reachable(f"http://user:wrong@127.0.0.1:{port}")
        assert "wrong" not in str(err.value)
    finally:
        server.shutdown()


@pytest.mark.slow
def test_a_presigned_data_url_leaves_no_secret_when_the_run_fails(tmp_path: Path) -> None:
    """A URL that cannot be read fails in the data phase, after Hydra wrote ``.hydra/`` and the
    MLflow run opened: exit 2, one line, and the password, signature and credential are nowhere.

    ``HOME`` is a file: DuckDB then fails to install its httpfs extension before it would try
    to download it, so the test never reaches the network (nor 127.0.0.1:9)."""
    planted = ("secretpw", "deadbeefcafe", "AKIAEXAMPLE")
    url = (
        "https://user:secretpw@127.0.0.1:9/t.csv"
        "?X-Amz-Signature=deadbeefcafe&X-Amz-Credential=AKIAEXAMPLE&X-Amz-Expires=3600"
    )
    db, out, home = tmp_path / "mlflow.db", tmp_path / "out", tmp_path / "no-home"
    home.write_text("")
    env = {
        **os.environ,
        "HOME": str(home),
        "MPLCONFIGDIR": str(tmp_path / "mpl"),
        "TF_CPP_MIN_LOG_LEVEL": "3",
        "PYTHONPATH": str(REPO),
    }
    env.pop("MLFLOW_TRACKING_URI", None)
    done = subprocess.run(
        [
            sys.executable, "-m", "wgangp.train", f"data.path='{url}'",  # quoted for Hydra
            "data.label=y", "data.fallback=error", f"tracking.uri=sqlite:///{db}",
            f"hydra.run.dir={out}",
        ],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("wgangp:")]
    assert len(said) == 1 and said == done.stderr.strip().splitlines()[-1:], done.stderr
    assert said[0].startswith("wgangp: error: ") and "https://***@127.0.0.1:9/t.csv?" in said[0]
    assert "X-Amz-Expires=3600" in said[0]

    from mlflow import MlflowClient

    client = MlflowClient(f"sqlite:///{db}")
    runs = client.search_runs([e.experiment_id for e in client.search_experiments()])
    assert [r.info.status for r in runs] == ["FAILED"]
    run = runs[0]
    assert run.data.tags["failure.reason"] == "data"
    assert "X-Amz-Signature=***" in run.data.tags["failure.message"]
    written = [p for p in tmp_path.rglob("*") if p.is_file() and "mpl" not in p.parts]
    assert (out / ".hydra" / "overrides.yaml").is_file() and (out / "train.log").is_file()
    blobs = {str(p): p.read_bytes() for p in written}  # .hydra/*.yaml, train.log, the store
    blobs["stdout"], blobs["stderr"] = done.stdout.encode(), done.stderr.encode()
    blobs["mlflow"] = repr((run.info, run.data.params, run.data.tags)).encode()
    leaks = [
        f"{s} in {where}" for s in planted for where, blob in blobs.items() if s.encode() in blob
    ]
    assert leaks == []


def test_a_bad_value_beside_a_presigned_url_leaves_hydras_files_redacted(tmp_path: Path) -> None:
    """A value refused after Hydra started (the job's config check, before any run opens)
    still leaves ``.hydra/`` without the URL's password and signature."""
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(REPO)}
    url = "https://u:pw-9f2c@host/t.csv?X-Amz-Signature=sig-77aa41"
    proc = subprocess.run(
        [sys.executable, "-m", "wgangp.train", f"data.path='{url}'", "trainer.steps=-1",
         f"hydra.run.dir={tmp_path}/out"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr[-2000:]
    overrides = (tmp_path / "out" / ".hydra" / "overrides.yaml").read_text()
    assert "https://***@host/t.csv?X-Amz-Signature=***" in overrides
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    for text in [proc.stdout, proc.stderr, *(p.read_text(errors="replace") for p in written)]:
        assert "pw-9f2c" not in text and "sig-77aa41" not in text


def _no_credentials_in_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The credential variables empty now and removed after the test, whatever the code sets."""
    for name in ("MLFLOW_TRACKING_USERNAME", "MLFLOW_TRACKING_PASSWORD", "MLFLOW_TRACKING_URI"):
        monkeypatch.setenv(name, "")


def test_a_password_in_mlflow_tracking_uri_moves_to_the_credential_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MLflow prints the URI it holds ("View run ... at: <uri>"): it never holds the password."""
    from wgangp.tracking.store import resolve_tracking_uri

    _no_credentials_in_environment(monkeypatch)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://al%40ice:p%40ss:w0rd@127.0.0.1:5000/base")
    assert resolve_tracking_uri(None, tmp_path) == "http://127.0.0.1:5000/base"
    assert os.environ["MLFLOW_TRACKING_URI"] == "http://127.0.0.1:5000/base"
    assert os.environ["MLFLOW_TRACKING_USERNAME"] == "al@ice"
    assert os.environ["MLFLOW_TRACKING_PASSWORD"] == "p@ss:w0rd"
    # credentials set already win (as MLflow would send them), the URI still loses its own
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "https://bob:other@[::1]:8443")
    assert resolve_tracking_uri(None, tmp_path) == "https://[::1]:8443"
    assert os.environ["MLFLOW_TRACKING_PASSWORD"] == "p@ss:w0rd"
    # a user name alone MLflow never sent: the URI's pair replaces it
    monkeypatch.setenv("MLFLOW_TRACKING_PASSWORD", "")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "https://bob:other@[::1]:8443")
    assert resolve_tracking_uri(None, tmp_path) == "https://[::1]:8443"
    assert (os.environ["MLFLOW_TRACKING_USERNAME"], os.environ["MLFLOW_TRACKING_PASSWORD"]) == (
        "bob", "other",
    )  # fmt: skip
    for kept in ("http://127.0.0.1:5000", "http://token@host", f"sqlite:///{tmp_path}/m.db"):
        monkeypatch.setenv("MLFLOW_TRACKING_URI", kept)
        assert resolve_tracking_uri(None, tmp_path) == kept


@pytest.mark.slow
@pytest.mark.server
def test_a_servers_password_prints_nowhere(
    mlflow_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``MLFLOW_TRACKING_URI=http://user:password@host`` and the server up: training and sampling
    finish, and the password is in no output (MLflow's own "View run" lines included), no file
    of the run and no byte of the server's store."""
    from mlflow import MlflowClient
    from support.configs import QUICK, TINY_MODEL

    password = f"pw-{secrets.token_hex(10)}"
    uri = mlflow_server.url.replace("http://", f"http://alice:{password}@")
    env = {**os.environ, "MLFLOW_TRACKING_URI": uri, "TF_CPP_MIN_LOG_LEVEL": "3"}
    for name in ("MLFLOW_TRACKING_USERNAME", "MLFLOW_TRACKING_PASSWORD"):
        env.pop(name, None)
    train = subprocess.run(
        [sys.executable, "-m", "wgangp.train", *TINY_MODEL, *QUICK,
         f"hydra.run.dir={tmp_path}/out"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert train.returncode == 0, train.stderr[-3000:]
    assert "View run default-simulated-seed0" in train.stdout  # MLflow's line, redacted now
    assert f"at: {mlflow_server.url}/#/experiments/" in train.stdout
    runs = MlflowClient(mlflow_server.url).search_runs(
        [e.experiment_id for e in MlflowClient(mlflow_server.url).search_experiments()]
    )
    assert [r.info.status for r in runs] == ["FINISHED"]
    sample = subprocess.run(
        [sys.executable, "-m", "wgangp.sample", f"model_uri=runs:/{runs[0].info.run_id}", "n=5"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert sample.returncode == 0, sample.stderr[-3000:]
    blobs = {str(p): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    for name, done in (("train", train), ("sample", sample)):
        blobs[f"{name} out"], blobs[f"{name} err"] = done.stdout.encode(), done.stderr.encode()
    assert len(blobs) > 20  # the run's files, the server's store and artifacts, the outputs
    assert [where for where, blob in blobs.items() if password.encode() in blob] == []
