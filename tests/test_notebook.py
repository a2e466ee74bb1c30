"""The notebooks: committed without outputs (an nbstripout-style check), and executed end to end
with nbclient: ``compare_runs.ipynb`` against real training runs on a real MLflow server,
``quickstart.ipynb`` fitting, sampling and plotting through ``wgangp.fit``."""

from __future__ import annotations

import nbformat
import pytest
from support.configs import REPO
from support.tracked_runs import EXPERIMENT, ServerRuns

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
ARTIFACTS_DIR = REPO / "test-artifacts"


def test_there_are_the_notebooks():
    assert {REPO / "notebooks" / n for n in ("compare_runs.ipynb", "quickstart.ipynb")} <= set(
        NOTEBOOKS
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_committed_stripped(path):
    """What ``nbstripout`` would remove is absent: outputs, execution counts, run metadata."""
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    dirty = [
        i
        for i, cell in enumerate(notebook.cells)
        if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None)
    ]
    assert not dirty, f"{path.name}: cells {dirty} carry outputs; run nbstripout {path}"
    for i, cell in enumerate(notebook.cells):
        assert not set(cell.metadata) & {"execution", "collapsed", "scrolled"}, (path.name, i)
    assert "widgets" not in notebook.metadata
    assert set(notebook.metadata) <= {"kernelspec", "language_info"}


def _text(cell) -> str:
    parts = []
    for output in cell.get("outputs", []):
        if "text" in output:
            parts.append(output["text"])
        for kind in ("text/plain", "text/html"):
            if kind in output.get("data", {}):
                parts.append(output["data"][kind])
    return "\n".join(parts)


@pytest.mark.slow
@pytest.mark.server
def test_notebook_runs_against_tracked_runs(server_runs: ServerRuns, monkeypatch):
    from nbclient import NotebookClient

    monkeypatch.setenv("MLFLOW_TRACKING_URI", server_runs.url)
    monkeypatch.setenv("WGANGP_EXPERIMENT", EXPERIMENT)
    monkeypatch.setenv("WGANGP_SYNTHETIC_ROWS", "300")
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "2")
    monkeypatch.delenv("WGANGP_REAL_DATA", raising=False)
    notebook = nbformat.read(REPO / "notebooks" / "compare_runs.ipynb", as_version=4)
    client = NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(REPO / "notebooks")}},
    )
    client.execute()  # raises CellExecutionError, with the cell and traceback, on any error
    ARTIFACTS_DIR.mkdir(exist_ok=True)
    nbformat.write(notebook, ARTIFACTS_DIR / "compare_runs.executed.ipynb")

    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    text = "\n".join(_text(cell) for cell in code)
    assert "2 runs: 1 stable, 1 NaN" in text
    nan_run = server_runs.run_ids["nan"]
    assert nan_run in _text(code[3])  # the NaN-step table lists the NaN run
    assert "tf_norm" in _text(code[3]) and "tanh" in _text(code[3])
    assert "real frauds:" in text and "synthetic frauds: 300 rows" in text
    assert "KS statistic" in text
    assert "eval/c2st_auc_gbm_control" in text  # the stable run's small test evaluation
    figures = [
        output for cell in code for output in cell.outputs if "image/png" in output.get("data", {})
    ]
    assert len(figures) == 2  # the curves and the feature histograms


@pytest.mark.slow
def test_the_quickstart_fits_samples_under_conditions_and_plots(tmp_path, monkeypatch):
    """``notebooks/quickstart.ipynb`` end to end, shrunk to a few steps, in a scratch folder
    (its outputs, checkpoints and ``mlflow.db`` land there)."""
    from nbclient import NotebookClient

    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    monkeypatch.setenv("WGANGP_QUICKSTART_STEPS", "20")
    monkeypatch.setenv("WGANGP_QUICKSTART_OVERRIDES", " ".join(QUICKSTART_SIZE))
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "2")
    notebook = nbformat.read(REPO / "notebooks" / "quickstart.ipynb", as_version=4)
    client = NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()
    ARTIFACTS_DIR.mkdir(exist_ok=True)
    nbformat.write(notebook, ARTIFACTS_DIR / "quickstart.executed.ipynb")
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    text = "\n".join(_text(cell) for cell in code)
    assert "runs:/" in _text(code[2])
    assert "where: " in text and "the rarest is" in text
    figures = [o for c in code for o in c.outputs if "image/png" in o.get("data", {})]
    assert len(figures) == 1


#: The quickstart at a test's size: tiny networks, no end-of-run evaluation.
QUICKSTART_SIZE = [
    "model.latent_dim=8",
    "model.generator.hidden=[16]",
    "model.critic.hidden=[16]",
    "trainer.batch_size=64",
    "trainer.steps_per_call=5",
    "trainer.progress=false",
    "evaluate.enabled=false",
]
