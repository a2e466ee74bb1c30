"""Every bad input a user can cause ends as ONE clear line, a non-zero exit and no traceback.

Most cases go through the real CLI code (``wgangp.train.main``: override checks, Hydra, the
entry's error report) in this process, so TensorFlow is imported once; a few run as real
subprocesses (``python -m wgangp.train``). A case that fails after its MLflow run was opened must
leave that run FAILED with the reason as a tag. ``docs/errors.md`` lists the same lines.
"""

from __future__ import annotations

import gzip
import json
import sys
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support.cli import run_train_cli
from support.configs import QUICK
from support.creditcard import COLUMNS, LABEL
from support.mlflow_server import free_port


def valid_frame(normal: int = 200, fraud: int = 12) -> pd.DataFrame:
    from wgangp.data.builtin.simulated import simulate_creditcard

    sim = simulate_creditcard(n_rows=4000, seed=1)
    frauds = sim[sim[LABEL] == 1]
    frauds = frauds.sample(n=fraud, replace=len(frauds) < fraud, random_state=0)
    return pd.concat([sim[sim[LABEL] == 0].head(normal), frauds], ignore_index=True)


def write_csv(frame: pd.DataFrame, path: Path, **kwargs) -> Path:
    frame.to_csv(path, index=False, **kwargs)
    return path


def _truncated_gz(path: Path) -> Path:
    data = gzip.compress(valid_frame().to_csv(index=False).encode())
    path.write_bytes(data[: len(data) // 2])
    return path


def _truncated_zip(path: Path) -> Path:
    full = path.with_suffix(".full.zip")
    with zipfile.ZipFile(full, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("creditcard.csv", valid_frame().to_csv(index=False))
    data = full.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


def _zipped(path: Path, text: str) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("creditcard.csv", text)
    return path


def _excel_workbook(path: Path) -> Path:
    """The zip layout of an .xlsx file (what "Save As" leaves when the name says .csv)."""
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("xl/workbook.xml", "<workbook/>")
    return path


def _duplicate_column(kind: str) -> callable:
    """The header names V1 twice (and V2 not at all), in a .csv, .csv.gz or Kaggle-style .zip."""

    def make(path: Path) -> Path:
        header, body = valid_frame().to_csv(index=False).split("\n", 1)
        text = header.replace("V2,", "V1,", 1) + "\n" + body
        if kind == "zip":
            return _zipped(path, text)
        path.write_bytes(gzip.compress(text.encode()) if kind == "gz" else text.encode())
        return path

    return make


def _set_rows(column: str, rows: list[int], value: float) -> callable:
    def change(frame: pd.DataFrame) -> pd.DataFrame:
        frame[column] = frame[column].astype(float)
        frame.loc[rows, column] = value
        return frame

    return change


def _with(change) -> callable:
    def make(path: Path) -> Path:
        frame = valid_frame()
        frame = change(frame)
        return write_csv(frame, path)

    return make


def _set_cell(column: str, value) -> callable:
    def change(frame: pd.DataFrame) -> pd.DataFrame:
        frame[column] = frame[column].astype(object if isinstance(value, str) else float)
        frame.loc[5, column] = value
        return frame

    return change


#: id -> (file name, writer or None for a missing file, extra overrides, expected line part)
DATA_CASES = {
    "missing_file": (
        "absent.csv",
        None,
        [],
        "data.path={path}: no such file or folder ({path}); check the path (the simulated "
        "fallback is for the default data/creditcard.csv only)",
    ),
    "missing_columns": (
        "missing.csv",
        _with(lambda f: f.drop(columns=["V3"])),
        [],
        "{path}: column(s) V3 of the schema are not in the table; the header needs the 31 "
        "columns Time,V1..V28,Amount,Class as in Kaggle's creditcard.csv",
    ),
    "renamed_header": (
        "renamed.csv",
        _with(lambda f: f.rename(columns={"Amount": "amount"})),
        [],
        "{path}: column(s) Amount of the schema are not in the table (renamed? the table has "
        "amount)",
    ),
    "nan": (
        "nan.csv",
        _with(_set_cell("V7", np.nan)),
        [],
        "{path}: column V7 has 1 missing value(s) (first at data row 6) but the schema says "
        "nullable: false; fix or drop those rows",
    ),
    "inf": (
        "inf.csv",
        _with(_set_cell("V2", np.inf)),
        [],
        "{path}: column V2 has 1 infinite value(s) (first at data row 6)",
    ),
    "non_numeric": (
        "text.csv",
        _with(_set_cell("Amount", "12,50 EUR")),
        [],
        "{path}: column Amount has 1 non-numeric value(s) (first at data row 6: '12,50 EUR')",
    ),
    "class_outside_0_1": (
        "class.csv",
        _with(_set_cell(LABEL, 2)),
        [],
        "{path}: column Class has 1 value(s) outside its levels (e.g. 2); its values are 0, 1: "
        "fix those rows",
    ),
    "no_fraud_rows": (
        "nofraud.csv",
        _with(lambda f: f.assign(Class=0)),
        [],
        "{path}: no row has Class = 1, the class to synthesize; the table needs rows of both "
        "classes",
    ),
    "three_fraud_rows": (
        "three.csv",
        lambda p: write_csv(valid_frame(fraud=3), p),
        [],
        "{path}: only 3 distinct row(s) with Class=1; at least 4 are needed so that training "
        "gets 2 and validation and test one each: use a larger table",
    ),
    "four_frauds_two_distinct": (
        "copies.csv",
        lambda p: write_csv(
            pd.concat([valid_frame(fraud=2)] + [valid_frame(normal=0, fraud=2)], ignore_index=True),
            p,
        ),
        [],
        "{path}: only 2 distinct row(s) with Class=1 among 4 (the others are exact copies); "
        "at least 4 are needed so that training gets 2 and validation and test one each: "
        "use a larger table",
    ),
    "negative_amount": (
        "negative.csv",
        _with(_set_cell("Amount", -3.5)),
        [],
        "{path}: column Amount has 1 negative value(s) (min -3.5); it is modelled on a log "
        "scale (log: true) and needs values >= 0: fix those rows",
    ),
    "huge_value": (
        "huge.csv",
        _with(_set_cell("V3", 1e200)),
        [],
        "{path}: column V3 has 1 value(s) larger than 1e+15 in magnitude (first at data row 6: "
        "1e+200); fix or drop those rows, no real value of a table comes near that size",
    ),
    "huge_values_every_100th_row": (
        "huge_time.csv",
        _with(_set_rows("Time", [0, 100, 200], 1e308)),
        [],
        "{path}: column Time has 3 value(s) larger than 1e+15 in magnitude (first at data row 1: "
        "1e+308)",
    ),
    "huge_negative_amount": (
        "huge_amount.csv",
        _with(_set_cell("Amount", -1e308)),
        [],
        "{path}: column Amount has 1 value(s) larger than 1e+15 in magnitude (first at data row "
        "6: -1e+308)",
    ),
    "duplicate_column": (
        "dupcol.csv",
        _duplicate_column("csv"),
        [],
        "{path}: column(s) V1 appear more than once in the header; rename or drop the copies, "
        "every column needs its own name",
    ),
    "duplicate_column_gz": (
        "dupcol.csv.gz",
        _duplicate_column("gz"),
        [],
        "{path}: column(s) V1 appear more than once in the header",
    ),
    "duplicate_column_zip": (
        "dupcol.zip",
        _duplicate_column("zip"),
        [],
        "{path}: column(s) V1 appear more than once in the header",
    ),
    "gzip_named_csv": (
        "cards.csv",
        lambda p: (p.write_bytes(gzip.compress(valid_frame().to_csv(index=False).encode())), p)[1],
        [],
        "{path} is gzip-compressed but its name does not end in .gz; rename it to cards.csv.gz",
    ),
    "text_named_csv_gz": (
        "cards.csv.gz",
        lambda p: write_csv(valid_frame(), p, compression=None),
        [],
        "{path} is plain text, not gzip-compressed, but its name ends in .gz; rename it to "
        "cards.csv",
    ),
    "excel_named_csv": (
        "book.csv",
        lambda p: _excel_workbook(p),
        [],
        "{path} is an Excel workbook, not a CSV; save it as CSV (comma-separated) and set "
        "data.path to that file",
    ),
    "zip_named_csv": (
        "archive.csv",
        lambda p: _zipped(p, valid_frame().to_csv(index=False)),
        [],
        "{path} is a zip archive but its name does not end in .zip; rename it to archive.zip",
    ),
    "fewer_rows_than_a_batch": (
        "small.csv",
        _with(lambda f: f),
        ["trainer.batch_size=512"],
        "{path}: the training split has 149 rows, fewer than one batch "
        "(trainer.batch_size=512); use a larger table or set trainer.batch_size=74",
    ),
    "empty_file": (
        "empty.csv",
        lambda p: (p.write_bytes(b""), p)[1],
        [],
        "{path} is empty (0 bytes, no rows); replace it with creditcard.csv",
    ),
    "header_only": (
        "header.csv",
        lambda p: (p.write_text(",".join(COLUMNS) + "\n"), p)[1],
        [],
        "{path} has a header but no rows; replace it with creditcard.csv",
    ),
    "truncated_gz": ("cut.csv.gz", _truncated_gz, [], "{path} is truncated or corrupt ("),
    "truncated_zip": ("cut.zip", _truncated_zip, [], "{path} is truncated or corrupt ("),
    "semicolon_separated": (
        "semi.csv",
        lambda p: write_csv(valid_frame(), p, sep=";"),
        [],
        "{path} looks semicolon-separated (a single column",
    ),
    "glob_matching_nothing": (
        "nothing/*.parquet",
        lambda p: p.parent.mkdir(),
        [],
        "no Parquet or CSV file matches data.path={path}; check the pattern (e.g. "
        "data/transactions/*.parquet) or give a file or a folder",
    ),
    "folder_of_two_formats": (
        "two_formats",
        lambda p: _folder(p, {"a.parquet": valid_frame(), "b.csv": valid_frame()}),
        [],
        "{path} holds both Parquet and CSV files (a.parquet, b.csv); keep the files of one "
        "table in one format",
    ),
    "folder_of_files_with_other_columns": (
        "other_columns",
        lambda p: _folder(
            p, {"a.parquet": valid_frame(), "b.parquet": valid_frame().drop(columns=["V3"])}
        ),
        [],
        "{path}/b.parquet: its columns differ from those of {path}/a.parquet (missing V3); "
        "every file of one table needs the same columns",
    ),
}


def _folder(path: Path, files: dict[str, pd.DataFrame]) -> Path:
    """A folder of the table's files (Parquet or CSV by name)."""
    path.mkdir()
    for name, frame in files.items():
        if name.endswith(".parquet"):
            frame.to_parquet(path / name, index=False)
        else:
            frame.to_csv(path / name, index=False)
    return path


def run_main(args: list[str], capsys: pytest.CaptureFixture, monkeypatch) -> tuple[int, str]:
    """The console entry in this process: (exit code, stderr)."""
    from wgangp.train import main

    monkeypatch.setattr(sys, "argv", ["wgangp-train", *args])
    capsys.readouterr()
    with pytest.raises(SystemExit) as caught:
        main()
    return int(caught.value.code or 0), capsys.readouterr().err


def assert_one_line(stderr: str, expected: str) -> str:
    assert "Traceback" not in stderr, stderr
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("wgangp: error: "), stderr
    assert expected in last, f"\nexpected: {expected}\nlast line: {last}"
    return last


def _runs(db: Path):
    from mlflow.tracking import MlflowClient

    client = MlflowClient(f"sqlite:///{db}")
    experiment = client.get_experiment_by_name("wgangp")
    return [] if experiment is None else client.search_runs([experiment.experiment_id])


@pytest.mark.slow
def test_bad_data_files_through_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "mlflow.db"
    lines = {}
    for case, (name, make, extra, expected) in DATA_CASES.items():
        path = tmp_path / name
        if make is not None:
            make(path)
        args = [
            f"data.path={path}",
            "data.schema=creditcard",
            f"tracking.uri=sqlite:///{db}",
            f"tracking.run_name={case}",
            f"hydra.run.dir={tmp_path / 'runs' / case}",
            *QUICK,
            *extra,
        ]
        code, stderr = run_main(args, capsys, monkeypatch)
        assert code == 2, (case, stderr)
        lines[case] = assert_one_line(stderr, expected.format(path=path))
    # Each run that was opened is FAILED with the reason as a tag.
    runs = {run.info.run_name: run for run in _runs(db)}
    assert set(runs) == set(DATA_CASES)
    for case, run in runs.items():
        assert run.info.status == "FAILED", case
        assert run.data.tags["failure.reason"] == "data", case
        assert run.data.tags["failure.message"] in lines[case], case


def test_reordered_header_and_an_extra_column_are_accepted(tmp_path: Path) -> None:
    """Kaggle's columns in any order, plus one it does not have (dropped, said in the log)."""
    from wgangp.config import DataConfig
    from wgangp.data.prepare import prepare_data

    frame = valid_frame()
    shuffled = frame[list(reversed(COLUMNS))].assign(Merchant=1.0)
    path = write_csv(shuffled, tmp_path / "reordered.csv")
    data = prepare_data(
        DataConfig(path=str(path), schema="creditcard"), seed=0, launch_dir=tmp_path
    )
    rows = pd.concat([data.train, data.val, data.test])
    assert list(rows.columns) == list(COLUMNS)
    assert sorted(rows["Amount"]) == pytest.approx(sorted(frame["Amount"]))


@pytest.mark.slow
def test_duplicate_rows_are_valid_counted_and_the_samples_bounded(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every row twice: exit 0, FINISHED, tag ``data.duplicate_rows`` and one log line; the
    sampled frauds are finite with Amounts no larger than the training rows'."""
    frame = valid_frame()  # its 12 frauds are drawn from 7 (5 repeats)
    doubled = pd.concat([frame, frame], ignore_index=True)
    repeats = int(doubled.duplicated().sum())
    assert repeats == len(frame) + 5
    path = write_csv(doubled, tmp_path / "twice.csv")
    db = tmp_path / "mlflow.db"
    out = tmp_path / "run"
    args = [f"data.path={path}", "data.schema=creditcard", f"tracking.uri=sqlite:///{db}"]
    args += [f"hydra.run.dir={out}", "tracking.log_model=false", *QUICK]
    from wgangp.train import main

    monkeypatch.setattr(sys, "argv", ["wgangp-train", *args])
    capsys.readouterr()
    main()  # returns: Hydra's entry exits only on an error
    stderr = capsys.readouterr().err
    assert "wgangp: error" not in stderr
    (run,) = _runs(db)
    assert run.info.status == "FINISHED"
    assert run.data.tags["data.duplicate_rows"] == str(repeats)
    assert (
        f"data: {repeats} row(s) repeat an earlier row exactly" in (out / "train.log").read_text()
    )
    samples = pd.read_csv(out / "samples.csv")
    assert np.isfinite(samples.to_numpy(np.float64)).all()
    assert samples["Amount"].max() <= frame["Amount"].max()


def _broken_bundle(directory: Path, problem: str) -> Path:
    """A synthesizer bundle whose generator returns NaN, or whose preprocessing.json holds an
    infinite scale (what training saved before validation refused huge values)."""
    from support.synthesizers import creditcard_synthesizer, simulated_rows

    from wgangp.serving.bundle import write_manifest

    weights = "nan" if problem == "nan_generator" else "random"
    synthesizer = creditcard_synthesizer(weights, train=simulated_rows(4000, seed=1))
    bundle = synthesizer.save(directory)
    if problem == "infinite_scale":
        path = bundle / "preprocessing.json"
        payload = json.loads(path.read_text())
        payload["columns"][3]["scales"]["all"]["std"] = [float("inf")]
        path.write_text(json.dumps(payload))  # writes Infinity, as json.dumps did for the old code
        write_manifest(bundle)  # sealed, as the old code's save would have
    return bundle


SAMPLE_CASES = {
    "nan_generator": "synthesizer {bundle}: the generator returned NaN or inf in 5 of 5 row(s) "
    "(class 1, seed 0, first in column Time); a broken model returns no rows: retrain it",
    "infinite_scale": "{bundle}/preprocessing.json column V3: its scale of all is non-finite "
    "(mean ",
}


@pytest.mark.parametrize("problem", SAMPLE_CASES)
def test_broken_models_through_the_sample_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture, problem: str
) -> None:
    """``python -m wgangp.sample`` writes no file from a model that yields NaN or inf."""
    from wgangp.sample import main

    bundle = _broken_bundle(tmp_path / "synthesizer", problem)
    output = tmp_path / "rows.csv"
    capsys.readouterr()
    code = main([f"model_uri={bundle}", f"output={output}", "n=5"])
    stderr = capsys.readouterr().err
    assert code == 2, stderr
    assert_one_line(stderr, SAMPLE_CASES[problem].format(bundle=bundle))
    assert not output.exists()


CONFIG_CASES = {
    "unknown_key": (
        ["trainer.stepz=5"],
        "unknown config key 'trainer.stepz' in override 'trainer.stepz=5'; "
        "did you mean 'trainer.steps'?",
    ),
    "wrong_type": (
        ["trainer.batch_size=big"],
        "invalid config value in override 'trainer.batch_size=big': Value 'big' of type 'str' "
        "could not be converted to Integer",
    ),
    "out_of_range": (
        ["trainer.steps=0"],
        "invalid config value trainer.steps: must be >= 1 (got 0)",
    ),
    "bad_choice": (
        ["gp.norm=l3"],
        "invalid config value gp.norm: 'l3' is not one of safe_sqrt, tf_norm, custom_gradient",
    ),
    "seed_above_32_bits": (
        ["seed=4294967296"],
        "invalid config value seed: must be in [0, 4294967295] (got 4294967296)",
    ),
    "learning_rate_without_its_optimizer": (
        ["trainer.lr=1e-3"],
        "unknown config key 'trainer.lr' in override 'trainer.lr=1e-3'; did you mean "
        "'trainer.critic_optimizer.lr' or 'trainer.generator_optimizer.lr'?",
    ),
    "experiment_without_plus": (
        ["experiment=stable_gp"],
        "config group 'experiment' needs a '+' (it is not in the defaults list of "
        "conf/config.yaml): write +experiment=stable_gp",
    ),
    "unknown_group_option": (
        ["trainer=fastt"],
        "no option 'fastt' in config group 'trainer' (override 'trainer=fastt'); did you mean "
        "'fast'? choose one of default, fast",
    ),
    "unsupported_tracking_scheme": (
        ["tracking.uri=ftp://x"],
        "tracking URI scheme 'ftp' (ftp://x) is not supported; use one of sqlite://, "
        "postgresql://, mysql://, mssql://, http://, https://, databricks:// (e.g. "
        "sqlite:///mlflow.db or http://host:5000)",
    ),
    "sqlite_store_in_a_missing_folder": (
        ["tracking.uri=sqlite:////nonexistent_dir/x.db"],
        "the folder of the sqlite store /nonexistent_dir/x.db does not exist (/nonexistent_dir); "
        "create it, or point tracking.uri / MLFLOW_TRACKING_URI at a folder that exists",
    ),
}


def test_bad_config_through_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    for case, (args, expected) in CONFIG_CASES.items():
        code, stderr = run_main(
            ["data=simulated", f"hydra.run.dir={tmp_path / case}", *args], capsys, monkeypatch
        )
        assert code == 2, (case, stderr)
        assert_one_line(stderr, expected)
    assert not Path("/nonexistent_dir").exists()  # a sqlite store's folder is not created at /


def test_debug_shows_the_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, stderr = run_main(
        ["data=simulated", "trainer.steps=0", "debug=true", f"hydra.run.dir={tmp_path}/o"],
        capsys,
        monkeypatch,
    )
    assert code == 2 and "Traceback" in stderr
    assert stderr.strip().splitlines()[-1].startswith("wgangp: error: invalid config value")


@pytest.mark.slow
def test_unwritable_output_dir_and_unreachable_server_in_real_processes(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    done = run_train_cli(["data=simulated", f"hydra.run.dir={blocker}/run"], tmp_path, timeout=300)
    assert done.returncode == 2, done.stderr
    assert_one_line(
        done.stderr,
        f"cannot create the output directory {blocker}/run ({blocker} is a file); run from a "
        "writable directory or set hydra.run.dir=/a/writable/dir",
    )

    url = f"http://127.0.0.1:{free_port()}"
    done = run_train_cli(
        ["data=simulated", f"tracking.uri={url}", f"hydra.run.dir={tmp_path}/o"],
        tmp_path,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr
    assert_one_line(
        done.stderr,
        f"MLflow tracking server {url} is unreachable (",
    )
    assert "set tracking.required=false to log locally" in done.stderr
    assert not (tmp_path / "mlflow.db").exists()  # nothing was started


def test_unwritable_output_dir_in_process(tmp_path: Path) -> None:
    """``train(output_dir=...)`` (the Python API) refuses it the same way."""
    from support.configs import TINY, compose

    from wgangp.errors import WgangpError
    from wgangp.train import train

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(WgangpError, match="is not writable .*set hydra.run.dir=") as caught:
        train(compose(TINY), output_dir=blocker / "out", launch_dir=tmp_path)
    assert "\n" not in str(caught.value)


@pytest.mark.slow
def test_bad_data_file_in_a_real_process(tmp_path: Path) -> None:
    path = _truncated_gz(tmp_path / "creditcard.csv.gz")
    done = run_train_cli(
        [
            f"data.path={path}",
            "data.schema=creditcard",
            f"tracking.uri=sqlite:///{tmp_path}/mlflow.db",
            f"hydra.run.dir={tmp_path}/o",
            *QUICK,
        ],
        tmp_path,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr
    assert_one_line(done.stderr, f"{path} is truncated or corrupt (")
    (run,) = _runs(tmp_path / "mlflow.db")
    assert run.info.status == "FAILED" and run.data.tags["failure.reason"] == "data"
