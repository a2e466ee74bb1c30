"""MLflow tracking for a custom training loop: params, tags, metrics, artifacts, run status.

Metrics go out asynchronously (``synchronous=False``) so a slow store never stalls a step; the
queue is flushed at checkpoints and at the end. The store is ``tracking.uri``, else
``$MLFLOW_TRACKING_URI``, else ``sqlite:///<launch dir>/mlflow.db`` (MLflow 3 refuses ./mlruns).
"""

from __future__ import annotations

import logging
import os
import platform
import subprocess
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wgangp.errors import TrackingError

log = logging.getLogger("wgangp.tracking")

#: Environment variables whose values must never reach params, tags or artifacts.
SECRET_ENV_VARS = (
    "KAGGLE_KEY",
    "KAGGLE_API_TOKEN",
    "MLFLOW_TRACKING_TOKEN",
    "MLFLOW_TRACKING_PASSWORD",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
)


def resolve_tracking_uri(uri: str | None, launch_dir: Path) -> str:
    """``tracking.uri``, else ``$MLFLOW_TRACKING_URI``, else a sqlite file in the launch dir."""
    if uri:
        chosen = uri
    elif os.environ.get("MLFLOW_TRACKING_URI"):
        chosen = os.environ["MLFLOW_TRACKING_URI"]
    else:
        return f"sqlite:///{(launch_dir / 'mlflow.db').resolve()}"
    if chosen.startswith("sqlite:///") and not chosen.startswith("sqlite:////"):
        relative = chosen[len("sqlite:///") :]
        chosen = f"sqlite:///{(launch_dir / relative).resolve()}"
    if "://" not in chosen and not chosen.startswith("databricks"):
        raise TrackingError(
            f"tracking URI {chosen!r} is a plain path, which MLflow 3 refuses; "
            f"use sqlite:///{Path(chosen).resolve()}.db or http://host:port"
        )
    return chosen


def check_reachable(uri: str, timeout: float = 5.0) -> None:
    """Fail fast with the fix when an HTTP tracking server does not answer."""
    if not uri.startswith(("http://", "https://")):
        return
    try:
        with urllib.request.urlopen(f"{uri.rstrip('/')}/health", timeout=timeout) as response:
            response.read()
    except (urllib.error.URLError, OSError, ValueError) as err:
        reason = getattr(err, "reason", err)
        raise TrackingError(
            f"MLflow tracking server {uri} is unreachable ({reason}); start it, fix "
            "tracking.uri / MLFLOW_TRACKING_URI, or set tracking.required=false to log locally"
        ) from None


def default_artifact_location(uri: str | None) -> str | None:
    """Artifacts of a sqlite store go to ``mlartifacts/`` beside the database, not ``./mlruns``."""
    if not uri or not uri.startswith("sqlite:///"):
        return None  # a server decides (--artifacts-destination)
    database = Path(uri[len("sqlite:///") :])
    return (database.parent / "mlartifacts").resolve().as_uri()


def git_commit(cwd: Path) -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() if out.returncode == 0 else "unknown"


def redact(value: Any) -> Any:
    """Replace any secret's value found inside ``value`` (a str) by ``***``."""
    if not isinstance(value, str):
        return value
    for name in SECRET_ENV_VARS:
        secret = os.environ.get(name)
        if secret and len(secret) >= 4 and secret in value:
            value = value.replace(secret, "***")
    return value


class Tracker:
    """One MLflow run; every call is a no-op when tracking is disabled."""

    def __init__(self, uri: str | None, experiment: str, enabled: bool = True) -> None:
        self.enabled = enabled
        self.uri = uri
        self.experiment = experiment
        self.run_id: str | None = None
        self._client = None

    @property
    def client(self):
        if self._client is None:
            from mlflow.tracking import MlflowClient

            self._client = MlflowClient(tracking_uri=self.uri)
        return self._client

    def start(
        self, run_name: str | None, tags: Mapping[str, str], run_id: str | None = None
    ) -> str | None:
        """Create (or, with ``run_id``, reopen) the run; returns its id."""
        if not self.enabled:
            return None
        try:
            if run_id:
                self.client.update_run(run_id, status="RUNNING")
                self.run_id = run_id
                return run_id
            experiment_id = self._experiment_id()
            run = self.client.create_run(
                experiment_id, run_name=run_name, tags={k: redact(str(v)) for k, v in tags.items()}
            )
        except TrackingError:
            raise
        except Exception as err:
            raise TrackingError(
                f"cannot open an MLflow run at {self.uri} ({type(err).__name__}: "
                f"{str(err).splitlines()[0] if str(err) else ''}); check tracking.uri"
            ) from err
        self.run_id = run.info.run_id
        return self.run_id

    def _experiment_id(self) -> str:
        from mlflow.exceptions import MlflowException

        found = self.client.get_experiment_by_name(self.experiment)
        if found is not None:
            if found.lifecycle_stage == "deleted":
                self.client.restore_experiment(found.experiment_id)
            return found.experiment_id
        try:
            return self.client.create_experiment(
                self.experiment, artifact_location=default_artifact_location(self.uri)
            )
        except MlflowException:  # created meanwhile by a parallel job
            found = self.client.get_experiment_by_name(self.experiment)
            if found is None:
                raise
            return found.experiment_id

    def log_params(self, params: Mapping[str, Any]) -> None:
        if not self.run_id:
            return
        from mlflow.entities import Param

        items = [Param(k, str(redact(str(v)))[:6000]) for k, v in params.items()]
        for i in range(0, len(items), 100):
            self.client.log_batch(self.run_id, params=items[i : i + 100])

    def set_tags(self, tags: Mapping[str, Any]) -> None:
        if not self.run_id:
            return
        from mlflow.entities import RunTag

        items = [RunTag(k, str(redact(str(v)))[:5000]) for k, v in tags.items()]
        self.client.log_batch(self.run_id, tags=items)

    def log_metrics(self, metrics: Mapping[str, float], step: int) -> None:
        """Queue metrics without waiting for the store."""
        if not self.run_id:
            return
        import time

        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        items = [Metric(k, float(v), now, int(step)) for k, v in metrics.items()]
        self.client.log_batch(self.run_id, metrics=items, synchronous=False)

    def flush(self) -> None:
        if not self.run_id:
            return
        import mlflow

        mlflow.flush_async_logging()

    def log_artifact(self, path: Path, artifact_path: str | None = None) -> None:
        if not self.run_id:
            return
        if Path(path).is_dir():
            self.client.log_artifacts(self.run_id, str(path), artifact_path)
        else:
            self.client.log_artifact(self.run_id, str(path), artifact_path)

    def end(self, status: str) -> None:
        """Flush pending metrics and close the run as FINISHED, FAILED or KILLED."""
        if not self.run_id:
            return
        try:
            self.flush()
        finally:
            self.client.set_terminated(self.run_id, status=status)


def environment_tags() -> dict[str, str]:
    """TensorFlow version, device, host platform."""
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    device = "gpu" if gpus else "cpu"
    tags = {
        "tensorflow.version": tf.__version__,
        "device": device,
        "platform": platform.platform(),
        "python.version": platform.python_version(),
    }
    if gpus:
        details = tf.config.experimental.get_device_details(gpus[0])
        tags["gpu.name"] = str(details.get("device_name", "unknown"))
        tags["gpu.count"] = str(len(gpus))
    return tags
