"""The synthesizer bundle's names, and the one way a model URI becomes a local bundle directory.

A bundle is a directory (no pickle anywhere): ``generator.keras`` (Keras native format, loaded in
safe mode), ``preprocessing.json``, ``calibration.json`` (only when the run calibrated the
marginals), ``copula.json`` (only when a share of the rows comes from a Gaussian copula) and
``synthesizer.json`` (latent size, columns, versions), sealed by ``manifest.json`` (the bundle's
format and each file's size and SHA-256): the bundle is a unit, and a file edited, truncated,
deleted or added after the save is refused at load (:func:`check_manifest`) before anything is
parsed, in one line naming the file. A training run logs it as the artifact
``synthesizer`` and inside its pyfunc model ``synthesizer`` (under ``artifacts/synthesizer``).
Nothing here imports Keras, so a wrong URI fails in a second.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path
from typing import Any

from wgangp.errors import WgangpError
from wgangp.files import write_text
from wgangp.tracking.store import existing_store, use_tracking_uri

#: The bundle's folder: the artifact path in a training run and the pyfunc model's artifact key.
BUNDLE = "synthesizer"
GENERATOR_FILE = "generator.keras"
PREPROCESSING_FILE = "preprocessing.json"
META_FILE = "synthesizer.json"
CALIBRATION_FILE = "calibration.json"
COPULA_FILE = "copula.json"
MANIFEST_FILE = "manifest.json"
#: The table's schema (the label's name and values, the columns' kinds, levels and options).
SCHEMA_FILE = "schema.yaml"
#: A history model's (``data.time``) ``synthesizer.json`` format, and its encoding's file.
HISTORY_FORMAT = "wgangp.histories/1"
HISTORIES_FILE = "histories.json"
#: Every file a bundle can hold.
BUNDLE_FILES = (
    GENERATOR_FILE, PREPROCESSING_FILE, META_FILE, CALIBRATION_FILE, COPULA_FILE, SCHEMA_FILE,
    HISTORIES_FILE,
)  # fmt: skip
#: The bundle's format, recorded in its manifest: a loader refuses any other. Format 2: every
#: table's bundle holds its schema and one kind of transform (Kaggle's file included).
BUNDLE_FORMAT = "wgangp.bundle/2"
_FORMAT_FAMILY = "wgangp.bundle/"
#: What a user can do about a damaged bundle.
REEXPORT = "the bundle is a unit: do not edit its files; download it again from its run, or retrain"
#: The name of the pyfunc model inside a training run.
MODEL_NAME = "synthesizer"


def is_history_bundle(directory: Path) -> bool:
    """Whether ``directory``'s ``synthesizer.json`` describes a history model."""
    try:
        meta = json.loads((Path(directory) / META_FILE).read_text(encoding="utf-8"))
        return isinstance(meta, dict) and meta.get("format") == HISTORY_FORMAT
    except (OSError, ValueError):
        return False


class DamagedBundleError(WgangpError):
    """A bundle whose files are not the ones its save wrote (edited, truncated, missing)."""

    reason = "model"


def load_generator(path: Path) -> Any:
    """``generator.keras`` in Keras' native format, loaded in safe mode; whatever Keras raises
    for a damaged file (ValueError, OSError, zipfile and h5py errors alike) is one line. Keras is
    imported here, on first use, not with this module."""
    import keras

    try:
        return keras.saving.load_model(path, compile=False, safe_mode=True)
    except Exception as err:
        first = (str(err).splitlines() or [""])[0][:160]
        raise DamagedBundleError(
            f"{path} cannot be loaded as a Keras model ({type(err).__name__}: {first}); {REEXPORT}"
        ) from None


def _digest(path: Path) -> str:
    sha = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()


def _sealed(name: str) -> bool:
    """Files the manifest covers: all but itself and hidden ones (a file manager's litter)."""
    return name != MANIFEST_FILE and not name.startswith(".")


def write_manifest(directory: Path) -> Path:
    """Seal a complete bundle: its format and every file's size and SHA-256 (call last)."""
    directory = Path(directory)
    files = {
        path.name: {"bytes": path.stat().st_size, "sha256": _digest(path)}
        for path in sorted(directory.iterdir())
        if path.is_file() and _sealed(path.name)
    }
    manifest = {"format": BUNDLE_FORMAT, "files": files}
    return write_text(directory / MANIFEST_FILE, json.dumps(manifest, indent=2) + "\n")


def check_manifest(directory: Path) -> None:
    """Every file the manifest lists is present with its size and checksum, and no other bundle
    file is there; else one line naming the file."""
    directory = Path(directory)
    path = directory / MANIFEST_FILE
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        found = manifest.get("format")
        if isinstance(found, str) and found.startswith(_FORMAT_FAMILY) and found != BUNDLE_FORMAT:
            raise DamagedBundleError(
                f"{directory} was saved by another wgangp version (format {found}; this one "
                f"reads {BUNDLE_FORMAT}); retrain to get a bundle of this version"
            )
        if found != BUNDLE_FORMAT:
            raise ValueError(f"format {found!r}, not {BUNDLE_FORMAT}")
        files = {str(name): dict(entry) for name, entry in manifest["files"].items()}
        expected = {n: (int(e["bytes"]), str(e["sha256"])) for n, e in files.items()}
    except FileNotFoundError:
        raise DamagedBundleError(
            f"{directory} has no {MANIFEST_FILE}, so its files cannot be checked (saved by an "
            f"older version, or not a complete bundle); {REEXPORT}"
        ) from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
        raise DamagedBundleError(f"{path} is unreadable ({err}); {REEXPORT}") from None
    for name, (size, sha) in sorted(expected.items()):
        file = directory / name
        if not file.is_file():
            raise DamagedBundleError(f"{file} is missing from the bundle; {REEXPORT}")
        actual = file.stat().st_size
        if actual != size:
            raise DamagedBundleError(
                f"{file} has {actual} bytes, not the {size} it was saved with (truncated or "
                f"edited); {REEXPORT}"
            )
        if _digest(file) != sha:
            raise DamagedBundleError(
                f"{file} does not match its checksum in {MANIFEST_FILE} (edited or damaged); "
                f"{REEXPORT}"
            )
    # A run's artifact folder may also hold its pyfunc model's files (MLmodel, ...): only a
    # bundle file the save did not write would change what is sampled.
    extra = sorted(
        name for name in BUNDLE_FILES if name not in expected and (directory / name).exists()
    )
    if extra:
        raise DamagedBundleError(
            f"{directory} holds {', '.join(extra)}, which its {MANIFEST_FILE} does not list "
            f"(added after the save); {REEXPORT}"
        )


class ModelUriError(WgangpError):
    """A model URI that names neither a directory nor an MLflow location."""

    reason = "config"


#: The scheme of a run's URI (``runs:/<run_id>[/<artifact path>]``).
RUNS = "runs:/"


def run_uri(run_id: str) -> str:
    """The URI a run's synthesizer is opened by: ``runs:/<run_id>``."""
    return f"{RUNS}{run_id}"


def run_id_of(model_uri: str) -> str | None:
    """The run a URI names: ``runs:/<id>`` (with or without an artifact path) or a bare run id
    (no scheme, no slash); None for any other URI (``models:/...``, a path)."""
    if model_uri.startswith(RUNS):
        return model_uri.removeprefix(RUNS).split("/")[0] or None
    if ":" not in model_uri and "/" not in model_uri and model_uri:
        return model_uri
    return None


def artifact_uri_for(model_uri: str) -> str:
    """``runs:/<id>`` or a bare run id -> the run's bundle; other MLflow URIs unchanged."""
    run_id = run_id_of(model_uri)
    if run_id is not None and model_uri.rstrip("/") in (run_id, run_uri(run_id)):
        return f"{run_uri(run_id)}/{BUNDLE}"
    if "://" not in model_uri and not model_uri.startswith((RUNS, "models:/")):
        raise ModelUriError(
            f"model_uri={model_uri} is neither a directory nor an MLflow URI; "
            "use runs:/<run_id>, models:/<model_id>, models:/<name>@champion or a synthesizer "
            "directory"
        )
    return model_uri


def find_bundle(directory: Path) -> Path:
    """The bundle inside ``directory``: the bundle itself, a run's artifact root (``synthesizer/``)
    or a downloaded pyfunc model (``artifacts/synthesizer/``)."""
    directory = Path(directory)
    for candidate in (directory, directory / BUNDLE, directory / "artifacts" / BUNDLE):
        if (candidate / META_FILE).is_file():
            return candidate
    raise WgangpError(
        f"{directory} holds no wgangp synthesizer ({META_FILE} not found); point at a "
        f"training run's '{BUNDLE}' artifact or its '{MODEL_NAME}' model"
    )


def check_alias(model_uri: str, tracking_uri: str | None) -> None:
    """``models:/NAME@ALIAS``: fail in one line when the registry has no such model or alias."""
    if not model_uri.startswith("models:/") or "@" not in model_uri:
        return
    from mlflow.tracking import MlflowClient

    name, _, alias = model_uri.removeprefix("models:/").rstrip("/").partition("@")
    try:
        MlflowClient(tracking_uri, registry_uri=tracking_uri).get_model_version_by_alias(
            name, alias
        )
    except Exception as err:
        first = str(err).splitlines()[0][:200] if str(err) else type(err).__name__
        raise ModelUriError(
            f"{model_uri}: the registry at {tracking_uri} has no version behind it ({first}); "
            f"train with tracking.register_as={name} to register one, or check the tracking URI"
        ) from None


def download(model_uri: str, tracking_uri: str | None) -> Path:
    """Download a run's bundle or a logged model (``models:/...``) into a temporary directory."""
    import mlflow

    uri = artifact_uri_for(model_uri)
    scope = use_tracking_uri(tracking_uri) if tracking_uri else contextlib.nullcontext()
    check_alias(uri, tracking_uri)
    try:
        with scope:
            local = mlflow.artifacts.download_artifacts(
                artifact_uri=uri, tracking_uri=tracking_uri, registry_uri=tracking_uri
            )
    except Exception as err:
        first = str(err).splitlines()[0][:200] if str(err) else ""
        raise WgangpError(
            f"cannot download {uri} from {tracking_uri} ({type(err).__name__}: {first}); check "
            "the run id or model id (tag model.uri of the training run) and the tracking URI"
        ) from None
    return Path(local)


def local_bundle(model_uri: str, tracking_uri: str | None) -> Path:
    """The bundle behind a directory, a run (``runs:/<id>``, a bare id) or a logged model."""
    local = Path(model_uri).expanduser()
    return find_bundle(local if local.is_dir() else download(model_uri, tracking_uri))


def stored_bundle(model_uri: str, tracking_uri: str | None, launch_dir: Path) -> Path:
    """:func:`local_bundle` as a command finds it: a folder as it is, else from the store
    (``tracking_uri``, ``$MLFLOW_TRACKING_URI`` or ``launch_dir``'s ``mlflow.db``), which must
    exist (:func:`~wgangp.tracking.store.existing_store`)."""
    is_dir = Path(model_uri).expanduser().is_dir()
    return local_bundle(model_uri, None if is_dir else existing_store(tracking_uri, launch_dir))
