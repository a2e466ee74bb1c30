"""python -m wgangp.evaluate on a trained run: same split, metrics back into the run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from mlflow.tracking import MlflowClient
from support.configs import TINY, compose

from wgangp.evaluate import main
from wgangp.train import train


@pytest.mark.slow
def test_evaluate_a_real_rows_run(tmp_path: Path, real_sample: Path, capsys) -> None:
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    overrides = [o for o in TINY if not o.startswith(("data=", "data."))]
    cfg = compose(overrides + [f"data.path={real_sample}", f"tracking.uri={uri}"])
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
