"""The notebooks: ``compare_runs.ipynb`` committed without outputs (an nbstripout-style check),
``quickstart.ipynb`` shipped with its outputs (``python -m scripts.quickstart_outputs``: what a
reader sees where the file is shown); both executed end to end with nbclient:
``compare_runs.ipynb`` against real training runs on a real MLflow server, ``quickstart.ipynb``
fitting, sampling and plotting through ``wgangp.fit``."""

from __future__ import annotations

import nbformat
import pytest
from support.configs import REPO
from support.tracked_runs import EXPERIMENT, ServerRuns

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
#: Shipped with its outputs; the others without.
EXECUTED = REPO / "notebooks" / "quickstart.ipynb"
ARTIFACTS_DIR = REPO / "test-artifacts"


def test_there_are_the_notebooks():
    assert {REPO / "notebooks" / n for n in ("compare_runs.ipynb", "quickstart.ipynb")} <= set(
        NOTEBOOKS
    )


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p != EXECUTED], ids=lambda p: p.name)
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


def test_the_quickstart_ships_with_its_results_and_nothing_else():
    """Every code cell ran, in order, and shows its results: the table, the samples, the
    figure, the rarest condition's line; no log (stderr), no error, no path of the machine that
    ran it, no run metadata; small."""
    notebook = nbformat.read(EXECUTED, as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert [cell.execution_count for cell in code] == list(range(1, len(code) + 1))
    outputs = [output for cell in code for output in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error" or o.get("name") == "stderr"]
    figures = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(figures) == 1
    text = "\n".join(_text(cell) for cell in code)
    assert "runs:/" in _text(code[2]) and "the rarest is" in text
    assert "/tmp/" not in text and str(REPO) not in text
    for cell in notebook.cells:
        assert not set(cell.metadata) & {"execution", "collapsed", "scrolled"}
    assert set(notebook.metadata) <= {"kernelspec", "language_info"}
    assert EXECUTED.stat().st_size < 200_000


def test_shipping_keeps_results_and_drops_the_log():
    """``scripts.quickstart_outputs.shipped`` on a cell as nbclient leaves it."""
    from scripts.quickstart_outputs import shipped

    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("print(1)")
    cell.execution_count = 7
    cell.metadata = {"execution": {"iopub.status.busy": "2026-11-28T00:00:00"}}
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stderr", text="[2026-11-28][wgangp] /tmp/x\n"),
        nbformat.v4.new_output("stream", name="stdout", text="1\n"),
    ]
    notebook.cells = [nbformat.v4.new_markdown_cell("# x"), cell]
    notebook.metadata = {"kernelspec": {"name": "python3"}, "papermill": {}}
    shipped(notebook)
    assert notebook.cells[1].execution_count == 1 and notebook.cells[1].metadata == {}
    assert [o.name for o in notebook.cells[1].outputs] == ["stdout"]
    assert set(notebook.metadata) == {"kernelspec"}


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
