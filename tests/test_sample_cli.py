"""``python -m wgangp.sample``: argument checks (fast, no TensorFlow) and sampling from a real
tiny training run by ``runs:/``, ``models:/`` and directory, to CSV and Parquet."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from support.configs import REPO, TINY, compose
from support.creditcard import COLUMNS, LABEL, TIME
from support.docs import documented
from support.tables import loans_features, loans_table

from wgangp.data.schema.inference import infer_schema
from wgangp.sample import (
    SampleArgumentError,
    check_writable,
    main,
    output_format,
    parse_args,
)
from wgangp.serving.bundle import META_FILE, SCHEMA_FILE, ModelUriError, artifact_uri_for
from wgangp.serving.labels import LabelError, label_class

# --- arguments: each mistake is one line naming the fix, before any model is loaded ---------


def test_parse_args_reads_every_key():
    request = parse_args(
        ["model_uri=runs:/abc", "n=10000", "label=0", "output=out/fraud.parquet", "seed=7"]
        + ["tracking_uri=http://127.0.0.1:5000"]
    )
    assert (request.model_uri, request.n, request.label, request.seed) == (
        "runs:/abc",
        10000,
        "0",
        7,
    )
    assert request.output == Path("out/fraud.parquet")
    assert request.file_format == "parquet"
    assert request.tracking_uri == "http://127.0.0.1:5000"


def test_a_where_that_is_no_map_is_the_documented_line():
    with pytest.raises(SampleArgumentError) as info:
        parse_args(["model_uri=runs:/a", "where=[1,2]"])
    documented(str(info.value))


@pytest.mark.parametrize(
    "text",
    ["{Amount:[null,100],Time:[1000,null]}", '{"Amount": [null, 100], "Time": [1000, null]}'],
)
def test_where_is_read_in_hydras_grammar_or_as_json(text):
    request = parse_args(["model_uri=runs:/abc", f"where={text}"])
    assert request.where == {"Amount": [None, 100], "Time": [1000, None]}


def test_parse_args_defaults():
    request = parse_args(["model_uri=runs:/abc", "output=x.csv"])
    # no label=: the class the model synthesizes (1, or a table's positive value)
    assert (request.n, request.label, request.seed, request.tracking_uri) == (1000, None, 0, None)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["model_uri=runs:/a", "output=x.csv", "n=abc"], "n must be an integer, got n='abc'"),
        (["model_uri=runs:/a", "output=x.csv", "n=0"], "n must be in [1,"),
        (["model_uri=runs:/a", "output=x.csv", "n=-5"], "n must be in [1,"),
        (["model_uri=runs:/a", "output=x.csv", "label= "], "label= is empty"),
        (["model_uri=runs:/a", "output=x.csv", "seed=-1"], "seed must be in [0,"),
        (["model_uri=runs:/a", "output=x.txt"], "use .csv, .csv.gz or .parquet"),
        (["model_uri=runs:/a", "output=x.json.gz"], "use .csv, .csv.gz or .parquet"),
        (["modl_uri=runs:/a", "output=x.csv"], "did you mean 'model_uri'?"),
        (["output=x.csv"], "missing model_uri=..."),
        (["model_uri=runs:/a", "output=x.csv", "10"], "argument '10' is not key=value"),
        (["model_uri=runs:/a", "where={Amount:[1,2]"], "where={Amount:[1,2] is not a map of"),
        (["model_uri=runs:/a", "where=[1,2]"], "where=[1,2] is not a map of conditions; write"),
    ],
)
def test_parse_args_rejects_with_one_line(argv, expected):
    with pytest.raises(SampleArgumentError) as info:
        parse_args(argv)
    assert expected in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("value", ["2", "fraud"])
def test_a_label_of_no_class_of_a_creditcard_bundle_is_one_line(value):
    """Kaggle's bundle carries its schema.yaml like any table's: its label's values are 1 and 0,
    checked before the model loads."""
    from support.creditcard import SCHEMA

    with pytest.raises(LabelError) as err:
        label_class(SCHEMA, value)
    assert str(err.value) == f"label={value} is not a value of Class; use one of: 0, 1"
    assert (label_class(SCHEMA, "0"), label_class(SCHEMA, 1)) == (0, 1)


@pytest.mark.parametrize(
    ("name", "fmt"),
    [("a.csv", "csv"), ("a.CSV", "csv"), ("a.csv.gz", "csv"), ("a.parquet", "parquet")]
    + [("dir.v1/a.pq", "parquet")],
)
def test_output_format_by_extension(name, fmt):
    assert output_format(Path(name)) == fmt


def test_model_uri_forms():
    assert artifact_uri_for("runs:/abc") == "runs:/abc/synthesizer"
    assert artifact_uri_for("runs:/abc/") == "runs:/abc/synthesizer"
    assert artifact_uri_for("runs:/abc/other") == "runs:/abc/other"
    assert artifact_uri_for("abc123") == "runs:/abc123/synthesizer"
    assert artifact_uri_for("models:/m-123") == "models:/m-123"
    with pytest.raises(ModelUriError, match="neither a directory nor an MLflow URI"):
        artifact_uri_for("no/such/dir")


def test_unwritable_output_is_one_line(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(SampleArgumentError, match="cannot write output="):
        check_writable(blocker / "sub" / "x.csv")  # parent is a file
    with pytest.raises(SampleArgumentError, match="is a directory"):
        check_writable(tmp_path)
    check_writable(tmp_path / "new" / "x.csv")  # missing parents are created
    assert (tmp_path / "new").is_dir()


def test_an_output_link_is_written_through_and_kept(tmp_path):
    """output= a symbolic link (to another folder, relative): its target gets the rows, replaced
    whole in the target's folder, and the link stays a link."""
    from wgangp.serving.row_files import write_rows

    (tmp_path / "shared").mkdir()
    target = tmp_path / "shared" / "rows.csv"
    target.write_text("old\n")
    link = tmp_path / "latest.csv"
    link.symlink_to(Path("shared") / "rows.csv")
    check_writable(link)
    write_rows([pd.DataFrame({"a": [1, 2]})], link, "csv")
    assert link.is_symlink() and link.resolve() == target.resolve()
    assert target.read_text() == "a\n1\n2\n"
    assert sorted(p.name for p in (tmp_path / "shared").iterdir()) == ["rows.csv"]
    dangling = tmp_path / "new.csv"
    dangling.symlink_to(tmp_path / "shared" / "new.csv")
    write_rows([pd.DataFrame({"b": [3]})], dangling, "csv")
    assert dangling.is_symlink() and pd.read_csv(dangling)["b"].tolist() == [3]


def test_missing_sqlite_store_is_reported_not_created(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    code = main(["model_uri=runs:/abc", "output=x.csv"])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("wgangp: error: no MLflow store at") and "\n" not in err
    assert not (tmp_path / "mlflow.db").exists()


def test_unreachable_server_is_one_line(tmp_path, capsys):
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        uri = f"http://127.0.0.1:{sock.getsockname()[1]}"
    code = main(["model_uri=runs:/abc", f"output={tmp_path / 'x.csv'}", f"tracking_uri={uri}"])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"wgangp: error: MLflow tracking server {uri} is unreachable; start it or pass the right "
        "tracking_uri=... / MLFLOW_TRACKING_URI"
    )


# --- sampling from a real (tiny) training run ------------------------------------------------


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """One tiny tracked training run: (tracking URI, run id, models:/ URI, local bundle)."""
    from mlflow import MlflowClient

    from wgangp.train import train

    root = tmp_path_factory.mktemp("sample-cli")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    result = train(
        compose([*TINY, f"tracking.uri={uri}"]), output_dir=root / "out", launch_dir=root
    )
    assert result.status == "FINISHED"
    model_uri = MlflowClient(uri).get_run(result.run_id).data.tags["model.uri"]
    return uri, result.run_id, model_uri, result.synthesizer_dir


def _check_rows(frame: pd.DataFrame, n: int, label: int) -> None:
    assert list(frame.columns) == list(COLUMNS)
    assert len(frame) == n
    assert (frame[LABEL] == label).all()
    assert frame.notna().all().all()
    # original units, not the standardized training space: Time is in seconds over two days
    assert frame[TIME].between(0, 172_792).all() and frame[TIME].mean() > 1_000
    assert (frame["Amount"] >= 0).all()


def test_sample_run_uri_to_parquet(trained, tmp_path, capsys):
    uri, run_id, _, _ = trained
    out = tmp_path / "fraud.parquet"
    argv = [f"model_uri=runs:/{run_id}", "n=200", "label=1", f"output={out}", "seed=0"]
    assert main([*argv, f"tracking_uri={uri}"]) == 0
    assert capsys.readouterr().out.strip() == str(out)
    _check_rows(pd.read_parquet(out), 200, 1)


def test_sample_model_uri_to_csv_matches_run_uri(trained, tmp_path, monkeypatch):
    """The pyfunc model and the run's bundle are the same generator: same seed, same rows."""
    uri, run_id, model_uri, _ = trained
    assert model_uri.startswith("models:/")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)  # the env var instead of tracking_uri=
    by_model, by_run = tmp_path / "m.csv", tmp_path / "r.csv.gz"
    assert main([f"model_uri={model_uri}", "n=64", "label=0", f"output={by_model}"]) == 0
    assert main([f"model_uri=runs:/{run_id}", "n=64", "label=0", f"output={by_run}"]) == 0
    rows = pd.read_csv(by_model)
    _check_rows(rows, 64, 0)
    pd.testing.assert_frame_equal(rows, pd.read_csv(by_run))


def test_sample_with_where_meets_it_and_refuses_a_bad_column(trained, tmp_path, capsys):
    uri, run_id, _, _ = trained
    out = tmp_path / "cheap.csv"
    argv = [f"model_uri=runs:/{run_id}", "n=50", f"output={out}", f"tracking_uri={uri}"]
    assert main([*argv, "where={Amount:[null,100],Time:[50000,null]}"]) == 0
    rows = pd.read_csv(out)
    assert len(rows) == 50 and (rows["Amount"] <= 100).all() and (rows[TIME] >= 50000).all()
    capsys.readouterr()
    assert main([*argv, "where={Amunt:[null,100]}"]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "wgangp: error: where: 'Amunt' is not a column of the samples; did you mean 'Amount'?"
    )


def test_sample_directory_seed_changes_rows(trained, tmp_path):
    bundle = trained[3]
    a, b, c = (tmp_path / f"{name}.csv" for name in "abc")
    for path, seed in ((a, 1), (b, 1), (c, 2)):
        assert main([f"model_uri={bundle}", "n=20", f"output={path}", f"seed={seed}"]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(a), pd.read_csv(b))
    assert not pd.read_csv(a).equals(pd.read_csv(c))


def test_sample_to_a_link_keeps_the_link(trained, tmp_path):
    target, link = tmp_path / "target.csv", tmp_path / "link.csv"
    target.write_text("old\n")
    link.symlink_to(target)
    assert main([f"model_uri={trained[3]}", "n=10", f"output={link}"]) == 0
    assert link.is_symlink() and len(pd.read_csv(target)) == 10


def test_unknown_run_and_model_are_one_line(trained, tmp_path, capsys, monkeypatch):
    """...and never create a stray ./mlflow.db (MLflow's models:/ lookup uses the default store)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    uri = trained[0]
    for bad in ("runs:/0123456789abcdef", "models:/m-0123456789abcdef"):
        assert (
            main([f"model_uri={bad}", f"output={tmp_path / 'x.csv'}", f"tracking_uri={uri}"]) == 2
        )
        errors = [x for x in capsys.readouterr().err.splitlines() if x.startswith("wgangp:")]
        assert len(errors) == 1 and errors[0].startswith(f"wgangp: error: cannot download {bad}")
    assert not (tmp_path / "x.csv").exists()
    assert not (tmp_path / "mlflow.db").exists()


@pytest.mark.slow
def test_real_cli_subprocess(trained, tmp_path):
    """The console entry as a user runs it: exit 0 and a file; exit 2 and one line on error."""
    uri, run_id, _, _ = trained
    env = {**os.environ, "MLFLOW_TRACKING_URI": uri, "TF_CPP_MIN_LOG_LEVEL": "3"}
    command = [sys.executable, "-m", "wgangp.sample", f"model_uri=runs:/{run_id}", "n=30"]
    ok = subprocess.run(
        [*command, "output=rows.parquet"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert ok.returncode == 0, ok.stderr[-2000:]
    _check_rows(pd.read_parquet(tmp_path / "rows.parquet"), 30, 1)
    bad = subprocess.run(
        [*command, "output=/proc/rows.csv"], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert bad.returncode == 2
    assert "Traceback" not in bad.stderr
    assert bad.stderr.strip().splitlines()[-1].startswith("wgangp: error: cannot write output=")


def test_a_large_n_streams_in_chunks_to_every_output(tmp_path, monkeypatch, capsys):
    """n above a chunk is drawn and written chunk by chunk (never a draw of more than a chunk:
    10,000,000 rows were killed for memory), the same rows to CSV, CSV.gz, Parquet and stdout,
    the first chunk the plain sample of its size."""
    import io

    from support.synthesizers import creditcard_synthesizer, simulated_rows

    from wgangp.serving import row_files
    from wgangp.serving.synthesizer import Synthesizer

    bundle = creditcard_synthesizer(train=simulated_rows(500)).save(tmp_path / "synthesizer")
    monkeypatch.setattr(row_files, "CHUNK_ROWS", 1000)
    drawn = []
    draw = Synthesizer.sample_class

    def counted(self, n, *args, **kwargs):
        drawn.append(n)
        return draw(self, n, *args, **kwargs)

    monkeypatch.setattr(Synthesizer, "sample_class", counted)
    frames = {}
    for name in ("rows.csv", "rows.csv.gz", "rows.parquet"):
        argv = [f"model_uri={bundle}", "n=2500", f"output={tmp_path / name}", "seed=3"]
        assert main(argv) == 0
        read = pd.read_parquet if name.endswith(".parquet") else pd.read_csv
        frames[name] = read(tmp_path / name)
    capsys.readouterr()
    assert main([f"model_uri={bundle}", "n=2500", "seed=3"]) == 0
    frames["stdout"] = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert drawn == [1000, 1000, 500] * 4
    rows = frames["rows.csv"]
    assert len(rows) == 2500 and not rows.duplicated().any()
    for frame in frames.values():
        pd.testing.assert_frame_equal(frame, rows, check_dtype=False)
    first = Synthesizer.load(bundle).sample(1000, seed=3)
    plain = pd.read_csv(io.StringIO(first.to_csv(index=False)))
    pd.testing.assert_frame_equal(rows.iloc[:1000], plain, check_dtype=False)


def test_a_chunk_holds_what_a_quarter_of_the_free_memory_holds(monkeypatch):
    from wgangp.serving import row_files
    from wgangp.serving.row_files import CHUNK_ROWS, MIN_CHUNK_ROWS, chunk_rows

    for available, expected in ((None, CHUNK_ROWS), (10**8, 2500), (10**4, MIN_CHUNK_ROWS)):
        monkeypatch.setattr(row_files, "available_memory", lambda a=available: a)
        assert chunk_rows(10_000) == expected


@pytest.mark.slow
def test_a_reader_that_stops_early_is_no_error(tmp_path):
    """``wgangp.sample ... | head -2``: no traceback, exit 0."""
    from support.synthesizers import creditcard_synthesizer, simulated_rows

    bundle = creditcard_synthesizer(train=simulated_rows(500)).save(tmp_path / "synthesizer")
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    command = [sys.executable, "-m", "wgangp.sample", f"model_uri={bundle}", "n=200000"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdout.readline().startswith(b"Time,V1,")
    proc.stdout.close()  # as head does after its lines
    err = proc.stderr.read().decode()
    assert proc.wait(300) == 0, err
    assert "Traceback" not in err and "BrokenPipe" not in err


def test_sample_without_label_draws_the_class_the_model_synthesizes(tmp_path, monkeypatch) -> None:
    from wgangp.serving import synthesizer as synthesizer_module

    bundle = tmp_path / "synthesizer"
    bundle.mkdir()
    frame = loans_features(loans_table(), "Age")
    schema = infer_schema(frame, "Status")
    (bundle / SCHEMA_FILE).write_text(schema.to_yaml())
    (bundle / META_FILE).write_text("{}")
    asked = []

    class Loaded:  # None: the class the model synthesizes (Synthesizer.sample's default)
        privacy = guarantee = None  # trained without a guarantee
        latent_dim, width, columns, schema = 4, 3, ["Status", "Age"], None

        def sample_chunks(self, n: int, label: object, seed: int, where=None, chunk_rows=0):
            asked.append(label)
            status = "good" if label == "good" else "bad"
            yield pd.DataFrame({"Status": [status] * n, "Age": [30] * n})

    Loaded.schema = schema  # type: ignore[attr-defined]  # as the bundle's
    monkeypatch.setattr(
        synthesizer_module.Synthesizer, "load", classmethod(lambda cls, p: Loaded())
    )
    out = tmp_path / "rows.csv"
    assert main([f"model_uri={bundle}", "n=5", f"output={out}"]) == 0
    assert asked == [None]
    assert set(pd.read_csv(out)["Status"]) == {"bad"}
    assert main([f"model_uri={bundle}", "n=5", f"output={out}", "label=good"]) == 0
    assert asked == [None, "good"]


@pytest.mark.slow
def test_a_stream_stopped_by_sigterm_leaves_no_file(tmp_path):
    """SIGTERM while chunks stream into output=: exit 143, one line, neither the output nor the
    hidden file it was being written under is left (Python's default would leave the latter)."""
    import signal
    import time

    from support.synthesizers import creditcard_synthesizer, simulated_rows

    bundle = creditcard_synthesizer(train=simulated_rows(500)).save(tmp_path / "synthesizer")
    out = tmp_path / "rows.csv"
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    command = [sys.executable, "-m", "wgangp.sample", f"model_uri={bundle}", "n=10000000"]
    proc = subprocess.Popen(
        [*command, f"output={out}"], stderr=subprocess.PIPE, env=env, cwd=tmp_path, text=True
    )
    deadline = time.monotonic() + 300
    while not list(tmp_path.glob(".tmp-*rows.csv")) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert list(tmp_path.glob(".tmp-*rows.csv")), "the stream never started"
    proc.send_signal(signal.SIGTERM)
    err = proc.communicate(timeout=120)[1]
    assert proc.returncode == 143, err[-2000:]
    assert err.strip().splitlines()[-1] == (
        "wgangp: interrupted; output= is left as it was (rows already on stdout stay there)"
    )
    assert "Traceback" not in err
    assert not out.exists() and not list(tmp_path.glob(".tmp-*"))
