"""Execute ``notebooks/quickstart.ipynb`` and ship it with its outputs:
``python -m scripts.quickstart_outputs``.

It runs as a reader would (the notebook's own quick settings: seeded, so the tables and the
figure come out the same on one machine and library set), in a scratch folder that takes the
run's outputs, checkpoints and ``mlflow.db``. What is kept is what the notebook shows: tables,
printed lines, the figure. The run's log (stderr: timestamps, scratch paths), execution times
and kernel details are dropped, so the committed file changes only when the results do.
``tests/test_notebook.py`` checks that the shipped copy has its outputs and that the notebook
still runs.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = REPO / "notebooks" / "quickstart.ipynb"


def shipped(notebook: Any) -> Any:
    """``notebook`` with only what a reader should see: each code cell's results, no stderr,
    no execution metadata; counts 1, 2, ... as a fresh kernel numbers them."""
    count = 0
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        count += 1
        cell.execution_count = count
        cell.metadata = {}
        kept = []
        for output in cell.outputs:
            if output.get("output_type") == "stream" and output.get("name") == "stderr":
                continue
            if "execution_count" in output:
                output["execution_count"] = count
            kept.append(output)
        cell.outputs = kept
    kept_keys = ("kernelspec", "language_info")
    notebook.metadata = {k: v for k, v in notebook.metadata.items() if k in kept_keys}
    return notebook


def main() -> None:
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(NOTEBOOK, as_version=4)
    with tempfile.TemporaryDirectory(prefix="wgangp-quickstart-") as scratch:
        env = {"MLFLOW_TRACKING_URI": f"sqlite:///{Path(scratch) / 'mlflow.db'}"}
        os.environ.update(env)
        for name in ("WGANGP_QUICKSTART_STEPS", "WGANGP_QUICKSTART_OVERRIDES"):
            os.environ.pop(name, None)  # the notebook's own settings, as a reader runs it
        client = NotebookClient(
            notebook, timeout=1800, kernel_name="python3", resources={"metadata": {"path": scratch}}
        )
        client.execute()
    notebook = shipped(notebook)
    nbformat.validate(notebook)
    nbformat.write(notebook, NOTEBOOK)
    print(f"wrote {NOTEBOOK.relative_to(REPO)} ({NOTEBOOK.stat().st_size // 1024} KB)")


if __name__ == "__main__":
    sys.exit(main())
