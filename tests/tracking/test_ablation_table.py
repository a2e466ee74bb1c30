"""``python -m wgangp.report``: the table read back from MLflow (hand-made store, real sweep)."""

from __future__ import annotations

import math
import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from support.configs import REPO

from wgangp import report
from wgangp.tracking import ablation


def _store(tmp_path: Path) -> str:
    """Three runs as training logs them: a NaN at step 7, a finished run, a float16 variant."""
    from mlflow.entities import Metric, Param, RunTag
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{tmp_path}/mlflow.db"
    client = MlflowClient(tracking_uri=uri)
    experiment = client.create_experiment("ablation", artifact_location=str(tmp_path / "art"))

    def run(params: dict, tags: dict, status: str, steps: int, west: list[float]) -> None:
        created = client.create_run(experiment, tags={"experiment": "tf_norm_nan", **tags})
        run_id = created.info.run_id
        client.log_batch(
            run_id,
            metrics=[
                Metric("train/wasserstein_estimate", w, 0, 5 * (i + 1)) for i, w in enumerate(west)
            ]
            + [Metric("run/wall_time_s", 1.0, 0, steps)],
            params=[Param(k, str(v)) for k, v in params.items()],
            tags=[RunTag(k, str(v)) for k, v in tags.items()],
        )
        client.set_terminated(run_id, status=status)

    base = {"gp.dtype": "float32", "trainer.precision": "float32"}
    run({**base, "gp.norm": "tf_norm", "seed": 1}, {"nan.step": 7, "nan.source": "x"}, "FAILED", 7,
        [0.5])  # fmt: skip
    run({**base, "gp.norm": "safe_sqrt", "seed": 0}, {}, "FINISHED", 20, [0.1, 0.2, 0.3, 0.25])
    run({"gp.norm": "safe_sqrt", "seed": 0, "gp.dtype": "compute",
         "trainer.precision": "mixed_float16"}, {}, "FINISHED", 10, [0.4, 0.45])  # fmt: skip
    return uri


def test_rows_read_back_from_the_store(tmp_path: Path) -> None:
    rows = ablation.collect(_store(tmp_path), "ablation")
    table = ablation.table(rows).set_index("variant")
    assert list(table.index) == [
        "safe_sqrt",
        "safe_sqrt (penalty compute, mixed_float16)",
        "tf_norm",
    ]
    nan = table.loc["tf_norm"]
    assert (nan["status"], nan["first_nan_step"], nan["steps_completed"]) == ("FAILED", 7, 7)
    fine = table.loc["safe_sqrt"]
    assert (fine["status"], fine["steps_completed"], fine["seed"]) == ("FINISHED", 20, 0)
    assert pd.isna(fine["first_nan_step"])
    assert fine["final_wasserstein"] == pytest.approx(0.25)  # the last point, not the mean


def test_cli_prints_and_writes_markdown_and_csv(tmp_path: Path, capsys) -> None:
    uri = _store(tmp_path)
    out = tmp_path / "report"
    code = report.main([f"tracking_uri={uri}", "experiment=ablation", f"output_dir={out}"])
    assert code == 0
    printed = capsys.readouterr().out
    markdown = (out / "ablation_report.md").read_text()
    assert printed.strip() == markdown.strip()
    assert "| tf_norm_nan | tf_norm | 1 | FAILED | 7 | x | 7 | 0.5000 |" in markdown
    assert "| tf_norm_nan | tf_norm | 1 | 1 | 7 | 7 |" in markdown  # the per-variant summary
    frame = pd.read_csv(out / "ablation_report.csv")
    assert len(frame) == 3 and set(frame["status"]) == {"FAILED", "FINISHED"}


def test_cli_filter_and_errors_are_one_line(tmp_path: Path, capsys) -> None:
    uri = _store(tmp_path)
    args = [f"tracking_uri={uri}", f"output_dir={tmp_path / 'r'}"]
    assert report.main([*args, "experiment=ablation", "filter=params.seed = '1'"]) == 0
    assert len(pd.read_csv(tmp_path / "r" / "ablation_report.csv")) == 1
    capsys.readouterr()
    assert report.main([*args, "experiment=missing"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("wgangp: error: no MLflow experiment named 'missing'")
    assert "\n" not in err


def test_cli_bad_filter_and_unwritable_output_are_one_line(tmp_path: Path, capsys) -> None:
    uri = _store(tmp_path)
    capsys.readouterr()
    args = [f"tracking_uri={uri}", "experiment=ablation"]
    assert report.main([*args, "filter=params.seed = 'o'brien'"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("wgangp: error: MLflow refused the search filter") and "\n" not in err
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert report.main([*args, f"output_dir={blocker / 'sub'}"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"wgangp: error: cannot create {blocker / 'sub'} (") and "\n" not in err


@pytest.mark.slow
def test_report_on_a_small_sweep(tmp_path: Path) -> None:
    """scripts/ablation_sweep.sh end to end at a tiny size: two norms x one seed, then the table."""
    from test_ablation import REDUCED, REDUCED_NAN_STEP

    env = {
        **os.environ,
        "TF_CPP_MIN_LOG_LEVEL": "2",
        "STEPS": "60",
        "SEEDS": "0",
        "NORMS": "tf_norm,safe_sqrt",
        "FP16": "0",
        "OUT": str(tmp_path / "report"),
    }
    env.pop("MLFLOW_TRACKING_URI", None)
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "ablation_sweep.sh"), *REDUCED],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "mlflow.db").exists()  # the store the script pre-created, in the cwd
    frame = pd.read_csv(tmp_path / "report" / "ablation_report.csv").set_index("variant")
    assert frame.loc["tf_norm", "status"] == "FAILED"
    assert frame.loc["tf_norm", "first_nan_step"] == REDUCED_NAN_STEP
    assert frame.loc["tf_norm", "steps_completed"] == REDUCED_NAN_STEP
    assert frame.loc["safe_sqrt", "status"] == "FINISHED"
    assert frame.loc["safe_sqrt", "steps_completed"] == 60
    assert math.isfinite(frame.loc["safe_sqrt", "final_wasserstein"])
    assert "| tf_norm_nan | tf_norm | 0 | FAILED | 52 |" in done.stdout
