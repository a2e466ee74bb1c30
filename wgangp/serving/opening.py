"""The one way a model URI becomes a :class:`~wgangp.serving.synthesizer.Synthesizer`:
``python -m wgangp.sample``, ``wgangp.load`` and ``python -m wgangp.evaluate`` all open models
here, so a folder, a run, a logged or a registered model is found, checked and described the same
way wherever it is named.

The bundle is found (and downloaded) before TensorFlow is imported, and a caller's ``check`` of
its schema runs then too: a wrong id, store, label or condition fails in a second, not after the
seconds Keras takes to import.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from wgangp.data.schema.table_schema import TableSchema
from wgangp.serving.bundle import SCHEMA_FILE, run_id_of, stored_bundle

if TYPE_CHECKING:
    from wgangp.serving.synthesizer import Synthesizer


def open_synthesizer(
    model_uri: str,
    tracking_uri: str | None = None,
    launch_dir: Path | None = None,
    *,
    check: Callable[[TableSchema], None] | None = None,
) -> Synthesizer:
    """The synthesizer behind ``model_uri``: a bundle folder (or a downloaded model's), a run
    (``runs:/<id>``, a bare id), a logged or registered model (``models:/<name>@champion``),
    from ``tracking_uri`` (else ``$MLFLOW_TRACKING_URI``, else ``launch_dir``'s ``mlflow.db``,
    which must exist). ``check`` sees the bundle's schema before Keras loads anything. The
    result knows its run (None: not a run) and the URI to open it again by (None: a folder)."""
    launch_dir = Path(launch_dir or Path.cwd())
    bundle = stored_bundle(model_uri, tracking_uri, launch_dir)
    schema_file = bundle / SCHEMA_FILE
    if check is not None and schema_file.is_file():  # absent: the load below names the damage
        check(TableSchema.load(schema_file))
    # Importing TensorFlow takes seconds: only once the store, the bundle and the check are good.
    from wgangp.serving.synthesizer import Synthesizer

    synthesizer = Synthesizer.load(bundle)
    is_dir = Path(model_uri).expanduser().is_dir()
    synthesizer.run_id = None if is_dir else run_id_of(model_uri)
    synthesizer.model_uri = None if is_dir else model_uri
    return synthesizer
