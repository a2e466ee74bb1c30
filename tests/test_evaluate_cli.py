"""python -m wgangp.evaluate on a trained run: same split, metrics back into the run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from mlflow.tracking import MlflowClient
from support.configs import TINY, compose
from support.tracked_runs import SMALL_EVALUATION

from wgangp.evaluate import main
from wgangp.train import train


@pytest.mark.slow
def test_evaluate_a_real_rows_run(tmp_path: Path, real_sample: Path, capsys) -> None:
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    overrides = [o for o in TINY if not o.startswith(("data=", "data."))]
    # The command reads the run's evaluate.* settings: a test's size (no SDMetrics, small detectors)
    overrides += [o for o in SMALL_EVALUATION if o != "evaluate.enabled=true"]
    cfg = compose(
        overrides + [f"data.path={real_sample}", "data.schema=creditcard", f"tracking.uri={uri}"]
    )
    result = train(cfg, output_dir=tmp_path / "out", launch_dir=tmp_path)
    args = ["--run", f"runs:/{result.run_id}", "--tracking-uri", uri, "--out", str(tmp_path / "ev")]
    args += ["--seeds", "1", "--n-synthetic", "200", "--max-normal-rows", "2000"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "held-out real rows" in printed and "eval/pr_auc_smote" in printed
    run = MlflowClient(uri).get_run(result.run_id)
    for name in ("eval/ks_mean", "eval/c2st_auc_gbm", "eval/pr_auc_real", "eval/pr_auc_augmented",
                 "eval/pr_auc_smote", "eval/dcr_ratio", "eval/exact_copies"):  # fmt: skip
        assert np.isfinite(run.data.metrics[name]), name
    assert (tmp_path / "ev" / "report.md").exists()
    artifacts = {a.path for a in MlflowClient(uri).list_artifacts(result.run_id, "evaluation")}
    assert "evaluation/report.md" in artifacts


def test_unknown_run_is_one_line(tmp_path: Path, capsys) -> None:
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    assert main(["--run", "0123456789abcdef", "--tracking-uri", uri]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("wgangp: error: cannot read the config of run 0123456789abcdef")


def test_a_table_edited_after_training_is_refused(tmp_path: Path, capsys, caplog) -> None:
    """The split would differ: the run's training rows would be scored as held out."""
    from wgangp.data.builtin.simulated import simulate_creditcard
    from wgangp.evaluate import check_same_table

    table = tmp_path / "table.csv"
    frame = simulate_creditcard(4000, seed=0)
    frame.to_csv(table, index=False)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    overrides = [o for o in TINY if not o.startswith(("data=", "data."))]
    cfg = compose(overrides + [f"data.path={table}", f"tracking.uri={uri}"])
    result = train(cfg, output_dir=tmp_path / "out", launch_dir=tmp_path)
    digest = MlflowClient(uri).get_run(result.run_id).data.tags["data.digest"]
    frame.iloc[10:].to_csv(table, index=False)  # edited in place
    args = ["--run", result.run_id, "--tracking-uri", uri, "--no-log"]
    assert main(args) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()[-1:]
    assert line.startswith(
        f"wgangp: error: run {result.run_id} split a table with digest {digest}, but {table} "
        "now has digest "
    )
    assert line.endswith(
        "(edited, replaced or another file): its 'test' rows would include rows the run trained "
        "on; evaluate on the table the run split, or pass new_split=true to score a new split "
        "anyway"
    )

    class Data:
        origin, digest = str(table), "0123"

    with caplog.at_level("WARNING"):
        assert check_same_table("r", digest, Data, new_split=True).startswith("new: table digest")
    assert "NEW SPLIT: run r split a table" in caplog.text
    assert check_same_table("r", "0123", Data, new_split=False) is None
