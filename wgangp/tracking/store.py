"""Which MLflow store a command talks to, and whether it answers.

The store is ``tracking.uri``, else ``$MLFLOW_TRACKING_URI``, else ``sqlite:///<launch
dir>/mlflow.db`` (MLflow 3 refuses ./mlruns). Relative sqlite paths are taken from the launch
directory, like every other path a user types.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import logging
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from wgangp.errors import TrackingError
from wgangp.redaction import redact
from wgangp.tracking.secrets import basic_auth, credentials_to_environment

log = logging.getLogger("wgangp.tracking")

SQLITE = "sqlite:///"
#: URI schemes of the stores MLflow can log to: files (sqlite) and databases (SQLAlchemy URIs),
#: a tracking server, Databricks.
SCHEMES = ("sqlite", "postgresql", "mysql", "mssql", "http", "https", "databricks")
#: MLflow's HTTP client retries 7 times with exponential backoff (~4 minutes) by default; a
#: training run would rather journal a call and move on. Users' own settings win.
HTTP_RETRY_DEFAULTS = {
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2",
    "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
    "MLFLOW_HTTP_REQUEST_TIMEOUT": "30",
}


def _sqlite_file(path: Path, launch_dir: Path) -> Path:
    """The database a plain path most likely meant: the file itself (a store that exists, or a
    ``.db`` name), ``mlflow.db`` inside a folder, else the name plus ``.db``."""
    path = path if path.is_absolute() else launch_dir / path
    path = path.resolve()
    if path.is_file() or path.suffix in (".db", ".sqlite", ".sqlite3"):
        return path
    if path.is_dir():
        return path / "mlflow.db"
    return path.with_name(path.name + ".db")


def resolve_tracking_uri(uri: str | None, launch_dir: Path) -> str:
    """``tracking.uri``, else ``$MLFLOW_TRACKING_URI``, else a sqlite file in the launch dir."""
    if uri:
        chosen = uri
    elif os.environ.get("MLFLOW_TRACKING_URI"):
        chosen = os.environ["MLFLOW_TRACKING_URI"]
    else:
        return f"{SQLITE}{(launch_dir / 'mlflow.db').resolve()}"
    if chosen.startswith(SQLITE) and not chosen.startswith("sqlite:////"):
        relative = chosen[len(SQLITE) :]
        chosen = f"{SQLITE}{(launch_dir / relative).resolve()}"
    if "://" not in chosen and not chosen.startswith("databricks"):
        raise TrackingError(
            f"tracking URI {chosen!r} is a plain path, which MLflow 3 refuses; "
            f"use sqlite:///{_sqlite_file(Path(chosen), launch_dir)} or http://host:port"
        )
    scheme = urllib.parse.urlsplit(chosen).scheme.split("+")[0].lower() or chosen  # databricks
    if scheme not in SCHEMES:
        raise TrackingError(
            f"tracking URI scheme '{scheme}' ({redact(chosen)}) is not supported; use one of "
            f"{', '.join(f'{s}://' for s in SCHEMES)} (e.g. sqlite:///mlflow.db or "
            "http://host:5000)"
        )
    if chosen.startswith(SQLITE):
        _check_sqlite_directory(Path(chosen[len(SQLITE) :]), launch_dir)
    return credentials_to_environment(chosen)


def _check_sqlite_directory(database: Path, launch_dir: Path) -> None:
    """A sqlite store's folder is created only inside the launch directory: elsewhere a missing
    folder is far more likely a typo than a wish to create directories (at / or in /home)."""
    parent = database.parent
    if parent.is_dir() or parent.resolve().is_relative_to(launch_dir.resolve()):
        return
    raise TrackingError(
        f"the folder of the sqlite store {database} does not exist ({parent}); create it, or "
        "point tracking.uri / MLFLOW_TRACKING_URI at a folder that exists"
    )


def is_http(uri: str | None) -> bool:
    return uri is not None and uri.startswith(("http://", "https://"))


def check_reachable(uri: str, timeout: float = 5.0) -> None:
    """Fail fast with the fix when an HTTP tracking server does not answer."""
    if not is_http(uri):
        return
    parts = urllib.parse.urlsplit(uri)
    request = urllib.request.Request(f"{uri.rstrip('/')}/health")
    credentials = basic_auth()  # as MLflow sends them: the environment's first
    if parts.username is not None:  # urllib would take user:password@ for part of the host
        netloc = (parts.hostname or "") + (f":{parts.port}" if parts.port else "")
        bare = urllib.parse.urlunsplit(parts._replace(netloc=netloc)).rstrip("/")
        request = urllib.request.Request(f"{bare}/health")
        unquote = urllib.parse.unquote
        credentials = credentials or (unquote(parts.username), unquote(parts.password or ""))
    if credentials is not None:
        token = base64.b64encode(":".join(credentials).encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            response.read()
    except (urllib.error.URLError, OSError, ValueError) as err:
        reason = getattr(err, "reason", err)
        raise TrackingError(
            f"MLflow tracking server {redact(uri)} is unreachable ({reason}); start it, fix "
            "tracking.uri / MLFLOW_TRACKING_URI, or set tracking.required=false to log locally"
        ) from None


def open_tracking_uri(uri: str | None, launch_dir: Path, fallback_dir: Path, required: bool) -> str:
    """The store a training run logs to: the configured one, or with ``required=false`` and the
    server down, a local sqlite file in ``fallback_dir`` (the run's output directory)."""
    chosen = resolve_tracking_uri(uri, launch_dir)
    try:
        check_reachable(chosen)
    except TrackingError as err:
        if required:
            raise
        local = f"{SQLITE}{(fallback_dir / 'mlflow.db').resolve()}"
        log.warning(
            "%s; tracking.required=false: logging to the local store %s instead (browse it with "
            "mlflow ui --backend-store-uri %s)", err, local, local,
        )  # fmt: skip
        return local
    return chosen


def existing_store(uri: str | None, launch_dir: Path) -> str:
    """The store a command reads runs and models from; it must already exist and answer.

    A missing sqlite file is an error: MLflow would silently create an empty one and then
    report the run as not found.
    """
    chosen = resolve_tracking_uri(uri, launch_dir)
    if chosen.startswith(SQLITE):
        database = Path(chosen[len(SQLITE) :])
        if not database.exists():
            raise TrackingError(
                f"no MLflow store at {database}; pass tracking_uri=sqlite:///<path to mlflow.db> "
                "or set MLFLOW_TRACKING_URI to the server that holds the run"
            )
    try:
        check_reachable(chosen)
    except TrackingError:
        raise TrackingError(
            f"MLflow tracking server {redact(chosen)} is unreachable; start it or pass the right "
            "tracking_uri=... / MLFLOW_TRACKING_URI"
        ) from None
    return chosen


def default_artifact_location(uri: str | None) -> str | None:
    """Artifacts of a sqlite store go to ``mlartifacts/`` beside the database, not ``./mlruns``."""
    if not uri or not uri.startswith(SQLITE):
        return None  # a server decides (--artifacts-destination)
    database = Path(uri[len(SQLITE) :])
    return (database.parent / "mlartifacts").resolve().as_uri()


def use_http_retry_defaults(uri: str | None) -> None:
    """Shorter HTTP retries for an MLflow server (see HTTP_RETRY_DEFAULTS); user settings win."""
    if is_http(uri):
        for name, value in HTTP_RETRY_DEFAULTS.items():
            os.environ.setdefault(name, value)


@contextlib.contextmanager
def store_lock(uri: str | None) -> Iterator[None]:
    """Serialize store creation across processes for a sqlite file (parallel sweep jobs).

    Parallel jobs on one fresh sqlite file race on schema and experiment creation (mlflow #4123);
    an flock on ``<db>.lock`` makes the first job create them and the others find them.
    """
    if not uri or not uri.startswith(SQLITE):
        yield
        return
    database = Path(uri[len(SQLITE) :])
    database.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{database}.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def use_tracking_uri(uri: str) -> Iterator[None]:
    """Point MLflow's fluent API at ``uri`` for a block, then restore exactly what was there.

    Needed even where an API takes ``tracking_uri=``: resolving ``models:/<id>`` looks the model
    up in the *default* store (creating ``./mlflow.db`` when that is sqlite) whatever is passed.

    ``mlflow.set_tracking_uri`` also writes ``$MLFLOW_TRACKING_URI``; restoring with
    ``set_tracking_uri(mlflow.get_tracking_uri())`` would pin the *default* store (a sqlite file
    in the working directory) for the rest of the process, so the module global and the variable
    are restored separately.
    """
    import mlflow
    from mlflow.tracking._tracking_service import utils

    saved_global = utils._tracking_uri
    saved_env = os.environ.get("MLFLOW_TRACKING_URI")
    mlflow.set_tracking_uri(uri)
    try:
        yield
    finally:
        # None restores MLflow's own default, as it was before.
        mlflow.set_tracking_uri(saved_global)  # type: ignore[arg-type]  # hinted str | Path only
        if saved_env is None:
            os.environ.pop("MLFLOW_TRACKING_URI", None)
        else:
            os.environ["MLFLOW_TRACKING_URI"] = saved_env
