"""The one way a model URI becomes a :class:`~wgangp.serving.synthesizer.Synthesizer`:
``python -m wgangp.sample``, ``wgangp.load`` and ``python -m wgangp.evaluate`` all open models
here (a history model, ``data.time``, by :func:`open_model`), so a folder, a run, a logged or a
registered model is found, checked and described the same way wherever it is named.

The bundle is found (and downloaded) before TensorFlow is imported, and a caller's ``check`` of
its schema runs then too: a wrong id, store, label or condition fails in a second, not after the
seconds Keras takes to import.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from wgangp.data.schema.table_schema import TableSchema
from wgangp.errors import WgangpError
from wgangp.serving.bundle import SCHEMA_FILE, run_id_of, stored_bundle

if TYPE_CHECKING:
    from wgangp.serving.histories import HistorySynthesizer
    from wgangp.serving.synthesizer import Synthesizer


class NotRowModelError(WgangpError):
    """A row model's command given a history model (``data.time``)."""


def open_synthesizer(
    model_uri: str,
    tracking_uri: str | None = None,
    launch_dir: Path | None = None,
    *,
    check: Callable[[TableSchema], None] | None = None,
) -> Synthesizer:
    """The row synthesizer behind ``model_uri`` (:func:`open_model`); a history model is refused
    in one line (its rows come from ``sample_histories``)."""
    from wgangp.serving.synthesizer import Synthesizer

    model = open_model(model_uri, tracking_uri, launch_dir, check=check)
    if not isinstance(model, Synthesizer):
        raise NotRowModelError(
            f"{model_uri} is a history model (trained with data.time): draw its customers with "
            "histories=<n> (sample_histories), not rows"
        )
    return model


def open_model(
    model_uri: str,
    tracking_uri: str | None = None,
    launch_dir: Path | None = None,
    *,
    check: Callable[[TableSchema], None] | None = None,
    check_bundle: Callable[[Path], None] | None = None,
) -> Synthesizer | HistorySynthesizer:
    """The model behind ``model_uri``, a row synthesizer or a history model (``data.time``): a
    bundle folder (or a downloaded model's), a run (``runs:/<id>``, a bare id), a logged or
    registered model (``models:/<name>@champion``), from ``tracking_uri`` (else
    ``$MLFLOW_TRACKING_URI``, else ``launch_dir``'s ``mlflow.db``, which must exist).
    ``check_bundle`` sees the bundle's folder and ``check`` its schema before Keras loads
    anything. The result knows its run (None: not a run) and the URI to open it again by (None:
    a folder)."""
    launch_dir = Path(launch_dir or Path.cwd())
    bundle = stored_bundle(model_uri, tracking_uri, launch_dir)
    if check_bundle is not None:
        check_bundle(bundle)
    schema_file = bundle / SCHEMA_FILE
    if check is not None and schema_file.is_file():  # absent: the load below names the damage
        check(TableSchema.load(schema_file))
    # Importing TensorFlow takes seconds: only once the store, the bundle and the checks are good.
    from wgangp.serving.histories import load_bundle

    synthesizer = load_bundle(bundle)
    is_dir = Path(model_uri).expanduser().is_dir()
    synthesizer.run_id = None if is_dir else run_id_of(model_uri)
    synthesizer.model_uri = None if is_dir else model_uri
    return synthesizer
