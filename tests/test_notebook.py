"""``notebooks/compare_runs.ipynb``: committed without outputs (an nbstripout-style check), and
executed end to end with nbclient against real training runs on a real MLflow server."""

from __future__ import annotations

import nbformat
import pytest
from support.configs import REPO
from support.tracked_runs import EXPERIMENT, ServerRuns

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
ARTIFACTS_DIR = REPO / "test-artifacts"


def test_there_is_a_notebook():
    assert REPO / "notebooks" / "compare_runs.ipynb" in NOTEBOOKS


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
