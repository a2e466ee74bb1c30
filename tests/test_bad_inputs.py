"""Every bad input a user can cause ends as ONE clear line, a non-zero exit and no traceback.

Most cases go through the real CLI code (``wgangp.train.main``: override checks, Hydra, the
entry's error report) in this process, so TensorFlow is imported once; a few run as real
subprocesses (``python -m wgangp.train``). A case that fails after its MLflow run was opened must
leave that run FAILED with the reason as a tag. ``docs/errors.md`` lists the same lines.
"""

from __future__ import annotations

import gzip
import sys
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support.cli import run_train_cli
from support.mlflow_server import free_port

from wgangp.data.schema import COLUMNS, LABEL

#: Small but valid: passes validation and the split, trains with a batch of 32.
QUICK = [
    "trainer.batch_size=32",
    "trainer.steps=2",
    "trainer.progress=false",
    "evaluate.enabled=false",
    "model.generator.hidden=[8]",
    "model.critic.hidden=[8]",
    "model.latent_dim=4",
]


def valid_frame(normal: int = 200, fraud: int = 12) -> pd.DataFrame:
    from wgangp.data.simulated import simulate_creditcard

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
        "data file not found at {path}; put creditcard.csv there, set "
        "data.path=/path/to/creditcard.csv, or use data=simulated",
    ),
    "missing_columns": (
        "missing.csv",
        _with(lambda f: f.drop(columns=["V3"])),
        [],
        "{path}: missing 1 column(s) V3; the header needs exactly the 31 columns",
    ),
    "extra_columns": (
        "extra.csv",
        _with(lambda f: f.assign(Merchant=1.0)),
        [],
        "{path}: 1 unexpected column(s) Merchant; the header needs exactly the 31 columns",
    ),
    "renamed_header": (
        "renamed.csv",
        _with(lambda f: f.rename(columns={"Amount": "amount"})),
        [],
        "{path}: missing 1 column(s) Amount and 1 unexpected column(s) amount (renamed header?)",
    ),
    "nan": (
        "nan.csv",
        _with(_set_cell("V7", np.nan)),
        [],
        "{path}: column V7 has 1 missing/NaN value(s) (first at data row 6)",
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
        "{path}: column Class has 1 value(s) outside {{0, 1}} (e.g. 2); Class must be 0",
    ),
    "no_fraud_rows": (
        "nofraud.csv",
        _with(lambda f: f.assign(Class=0)),
        [],
        "{path}: only 0 row(s) of Class 1 (fraud) in column Class; at least 4 are needed",
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
        "{path} has a header but no rows",
    ),
    "truncated_gz": ("cut.csv.gz", _truncated_gz, [], "{path} is truncated or corrupt ("),
    "truncated_zip": ("cut.zip", _truncated_zip, [], "{path} is truncated or corrupt ("),
    "semicolon_separated": (
        "semi.csv",
        lambda p: write_csv(valid_frame(), p, sep=";"),
        [],
        "{path} looks semicolon-separated (a single column",
    ),
}


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
            "data.fallback=error",
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


def test_reordered_header_is_accepted(tmp_path: Path) -> None:
    from wgangp.data.loader import load_creditcard

    frame = valid_frame()
    path = write_csv(frame[list(reversed(COLUMNS))], tmp_path / "reordered.csv")
    loaded = load_creditcard(str(path), launch_dir=tmp_path, fallback="error", cache_dir=tmp_path)
    assert list(loaded.frame.columns) == list(COLUMNS)
    assert np.allclose(loaded.frame["Amount"], frame["Amount"])


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
            "data.fallback=error",
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
