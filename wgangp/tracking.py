"""MLflow tracking for a custom training loop: params, tags, metrics, artifacts, run status.

Every call after the run is opened goes through one background worker, in order, so a slow or
absent store never stalls a training step. When the store fails (server gone, sqlite locked past
its timeout), the worker keeps what it could not send in a local outbox
(``<output dir>/tracking_outbox.jsonl``), probes the store now and then and replays the outbox when
it answers again; what is left at the end is replayed by ``python -m wgangp.sync <output dir>``.
The store is ``tracking.uri``, else ``$MLFLOW_TRACKING_URI``, else ``sqlite:///<launch
dir>/mlflow.db`` (MLflow 3 refuses ./mlruns).
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import platform
import queue
import re
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from wgangp.errors import TrackingError
from wgangp.outbox import Outbox

log = logging.getLogger("wgangp.tracking")

#: Environment variables whose values must never reach params, tags or artifacts.
SECRET_ENV_VARS = (
    "KAGGLE_USERNAME",
    "KAGGLE_KEY",
    "KAGGLE_API_TOKEN",
    "MLFLOW_TRACKING_TOKEN",
    "MLFLOW_TRACKING_USERNAME",
    "MLFLOW_TRACKING_PASSWORD",
    "DATABRICKS_TOKEN",
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
            f"MLflow tracking server {redact(uri)} is unreachable ({reason}); start it, fix "
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


_URI_PASSWORD = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<user>[^/@:\s]*):[^/@\s]*@")


def redact(value: Any) -> Any:
    """``value`` (a str) with secrets' values and passwords inside URIs replaced by ``***``."""
    if not isinstance(value, str):
        return value
    value = _URI_PASSWORD.sub(r"\g<scheme>\g<user>:***@", value)
    for name in SECRET_ENV_VARS:
        secret = os.environ.get(name)
        if secret and len(secret) >= 4 and secret in value:
            value = value.replace(secret, "***")
    return value


def scrub_secrets(directory: Path) -> None:
    """Rewrite the text files under ``directory`` with :func:`redact` applied, where it changes."""
    for path in Path(directory).rglob("*"):
        if not path.is_file() or path.stat().st_size > 1_000_000:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        clean = redact(text)
        if clean != text:
            path.write_text(clean, encoding="utf-8")


def open_tracking_uri(uri: str | None, launch_dir: Path, fallback_dir: Path, required: bool) -> str:
    """The store to log to: the configured one, or with ``required=false`` and the server
    down, a local sqlite file in ``fallback_dir`` (the run's output directory)."""
    chosen = resolve_tracking_uri(uri, launch_dir)
    try:
        check_reachable(chosen)
    except TrackingError as err:
        if required:
            raise
        local = f"sqlite:///{(fallback_dir / 'mlflow.db').resolve()}"
        log.warning(
            "%s; tracking.required=false: logging to the local store %s instead (browse it with "
            "mlflow ui --backend-store-uri %s)", err, local, local,
        )  # fmt: skip
        return local
    return chosen


#: MLflow error codes that mean "the store refused this call", not "the store is away".
_REFUSED = {
    "INVALID_PARAMETER_VALUE",
    "RESOURCE_ALREADY_EXISTS",
    "RESOURCE_DOES_NOT_EXIST",
    "BAD_REQUEST",
    "INVALID_STATE",
    "PERMISSION_DENIED",
    "UNAUTHENTICATED",
}
#: MLflow's HTTP client retries 7 times with exponential backoff (~4 minutes) by default; a
#: training run would rather journal a call and move on. Users' own settings win.
HTTP_RETRY_DEFAULTS = {
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2",
    "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
    "MLFLOW_HTTP_REQUEST_TIMEOUT": "30",
}


def is_refusal(err: BaseException) -> bool:
    """True when the store answered and refused the call (replaying it would fail again)."""
    from mlflow.exceptions import MlflowException

    return isinstance(err, MlflowException) and str(err.error_code) in _REFUSED


class Tracker:
    """One MLflow run; every call is a no-op when tracking is disabled.

    Calls are queued to one worker thread and sent in order; ``flush`` waits for the queue.
    ``outbox`` (a path) is where unsent calls go when the store fails; without it they are
    dropped with a warning.
    """

    def __init__(
        self,
        uri: str | None,
        experiment: str,
        enabled: bool = True,
        outbox: Path | None = None,
        retry_interval_s: float | None = None,
    ) -> None:
        self.enabled = enabled
        self.uri = uri
        self.experiment = experiment
        self.run_id: str | None = None
        self.outbox = Outbox(outbox) if outbox is not None else None
        if retry_interval_s is None:  # tests shorten it
            retry_interval_s = float(os.environ.get("WGANGP_TRACKING_RETRY_S", "30"))
        self.retry_interval_s = retry_interval_s
        self.outage: str | None = None  # first failure, while the store is away
        self.outage_count = 0  # outages seen during the run
        self._client = None
        self._queue: queue.Queue = queue.Queue()
        self._worker: threading.Thread | None = None
        self._last_probe = 0.0

    @property
    def client(self):
        if self._client is None:
            from mlflow.tracking import MlflowClient

            if self.uri and self.uri.startswith(("http://", "https://")):
                for name, value in HTTP_RETRY_DEFAULTS.items():
                    os.environ.setdefault(name, value)
            self._client = MlflowClient(tracking_uri=self.uri)
        return self._client

    # -- opening the run (synchronous: a store that is down here is a start-up error) ------

    def start(
        self, run_name: str | None, tags: Mapping[str, str], run_id: str | None = None
    ) -> str | None:
        """Create (or, with ``run_id``, reopen) the run; returns its id."""
        if not self.enabled:
            return None
        try:
            with store_lock(self.uri):
                if run_id:
                    self.client.update_run(run_id, status="RUNNING")
                    self.run_id = run_id
                else:
                    experiment_id = self._experiment_id()
                    run = self.client.create_run(
                        experiment_id,
                        run_name=run_name,
                        tags={k: redact(str(v)) for k, v in tags.items()},
                    )
                    self.run_id = run.info.run_id
        except TrackingError:
            raise
        except Exception as err:
            raise TrackingError(
                f"cannot open an MLflow run at {redact(self.uri)} ({type(err).__name__}: "
                f"{redact(_first_line(err))}); check tracking.uri"
            ) from err
        if run_id and tags:
            self.set_tags(tags)
        self._worker = threading.Thread(target=self._work, name="wgangp-tracking", daemon=True)
        self._worker.start()
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

    def last_logged_step(self, key: str = "critic_loss") -> int:
        """The highest step of metric ``key`` already in the run (-1 if none or unknown)."""
        if not self.run_id:
            return -1
        try:
            history = self.client.get_metric_history(self.run_id, key)
        except Exception:
            log.warning("could not read metric history of run %s", self.run_id)
            return -1
        return max((m.step for m in history), default=-1)

    # -- calls (queued, in order) ------------------------------------------------------------

    def log_params(self, params: Mapping[str, Any]) -> None:
        items = {k: str(redact(str(v)))[:6000] for k, v in params.items()}
        self._submit({"op": "params", "params": items})

    def set_tags(self, tags: Mapping[str, Any]) -> None:
        self._submit(
            {"op": "tags", "tags": {k: str(redact(str(v)))[:5000] for k, v in tags.items()}}
        )

    def log_metrics(self, metrics: Mapping[str, float], step: int) -> None:
        """Queue metrics without waiting for the store."""
        now = int(time.time() * 1000)
        rows = [[k, float(v), now, int(step)] for k, v in metrics.items()]
        self._submit({"op": "metrics", "metrics": rows})

    def log_artifact(self, path: Path, artifact_path: str | None = None) -> None:
        self._submit(
            {"op": "artifact", "path": str(Path(path).resolve()), "artifact_path": artifact_path}
        )

    def log_model(self, synthesizer_dir: Path) -> None:
        """Log the synthesizer as the run's pyfunc model (after its artifacts); tag model.uri."""
        self._submit({"op": "model", "synthesizer_dir": str(Path(synthesizer_dir).resolve())})

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every queued call was sent or journaled; False on timeout."""
        if self._worker is None:
            return True
        done = threading.Event()
        self._queue.put(("barrier", done))
        return done.wait(timeout)

    def end(self, status: str, timeout: float = 300.0) -> None:
        """Close the run as FINISHED, FAILED or KILLED after the queued calls; stop the worker.

        If the store is still away, a last probe replays the outbox; else the user is told
        where the unsent calls are and how to send them.
        """
        if not self.run_id or self._worker is None:
            return
        self._submit({"op": "terminate", "status": status})
        self._queue.put(("stop", None))
        self._worker.join(timeout)
        if self._worker.is_alive():
            log.warning("MLflow calls still pending after %.0f s; leaving them", timeout)
        self._worker = None
        if self.outage is not None:
            self._recover(force=True)
        if self.outage is not None and self.outbox is not None:
            log.warning(
                "MLflow store %s unavailable (%s); %d call(s) of run %s kept in %s; training "
                "outputs and checkpoints are complete. When the store is back, run: "
                "python -m wgangp.sync %s",
                redact(self.uri), self.outage, len(self.outbox), self.run_id, self.outbox.path,
                self.outbox.path.parent,
            )  # fmt: skip

    # -- the worker ----------------------------------------------------------------------------

    def _submit(self, entry: dict[str, Any]) -> None:
        if not self.run_id:
            return
        entry["run_id"] = self.run_id
        if self._worker is None:  # not started (or already ended): send now
            self._deliver(entry)
        else:
            self._queue.put(("call", entry))

    def _work(self) -> None:
        while True:
            kind, item = self._queue.get()
            if kind == "stop":
                return
            if kind == "barrier":
                item.set()
                continue
            self._deliver(item)

    def _deliver(self, entry: dict[str, Any]) -> None:
        if self.outage is not None and not self._recover():
            self._journal(entry)
            return
        try:
            apply_entry(self.client, self.uri, entry)
        except Exception as err:
            if is_refusal(err):
                log.warning("MLflow refused %s: %s", entry["op"], redact(_first_line(err)))
                return
            self.outage = f"{type(err).__name__}: {redact(_first_line(err))[:300]}"
            self.outage_count += 1
            self._last_probe = time.monotonic()
            kept_in = self.outbox.path if self.outbox is not None else "nowhere (no outbox)"
            log.warning(
                "MLflow store %s failed (%s); training goes on, tracking calls are kept in %s "
                "and retried every %.0f s",
                redact(self.uri), self.outage, kept_in, self.retry_interval_s,
            )  # fmt: skip
            self._journal(entry)

    def _journal(self, entry: dict[str, Any]) -> None:
        if self.outbox is not None:
            self.outbox.append({**entry, "tracking_uri": redact(self.uri)})
        else:
            log.warning("MLflow call %s dropped (no outbox)", entry["op"])

    def _recover(self, force: bool = False) -> bool:
        """Probe the store (at most every ``retry_interval_s``); replay the outbox if it is back."""
        if not force and time.monotonic() - self._last_probe < self.retry_interval_s:
            return False
        self._last_probe = time.monotonic()
        try:
            check_reachable(self.uri or "", timeout=2.0)
            self.client.get_run(self.run_id)
        except Exception:
            return False
        if self.outbox is not None:
            sent, remaining = replay(self.outbox, self.client, self.uri)
            if remaining:
                return False
            log.warning("MLflow store %s is back: replayed %d kept call(s)", redact(self.uri), sent)
        self.outage = None
        return True


def apply_entry(client, uri: str | None, entry: dict[str, Any]) -> None:
    """Send one journaled call to the store (synchronously)."""
    from mlflow.entities import Metric, Param, RunTag

    run_id, op = entry["run_id"], entry["op"]
    if op == "metrics":
        metrics = [Metric(k, float(v), int(ts), int(step)) for k, v, ts, step in entry["metrics"]]
        client.log_batch(run_id, metrics=metrics)
    elif op == "params":
        items = [Param(k, v) for k, v in entry["params"].items()]
        for i in range(0, len(items), 100):
            client.log_batch(run_id, params=items[i : i + 100])
    elif op == "tags":
        client.log_batch(run_id, tags=[RunTag(k, v) for k, v in entry["tags"].items()])
    elif op == "artifact":
        path = Path(entry["path"])
        if path.is_dir():
            client.log_artifacts(run_id, str(path), entry.get("artifact_path"))
        elif path.exists():
            client.log_artifact(run_id, str(path), entry.get("artifact_path"))
        else:
            log.warning("artifact %s no longer exists; not logged", path)
    elif op == "model":
        from wgangp.serving import log_sampler_model

        model_uri = log_sampler_model(Path(entry["synthesizer_dir"]), run_id, uri)
        client.set_tag(run_id, "model.uri", model_uri)
    elif op == "terminate":
        client.set_terminated(run_id, status=entry["status"])
    else:
        raise ValueError(f"unknown tracking call {op!r}")


def replay(outbox: Outbox, client, uri: str | None) -> tuple[int, list[dict[str, Any]]]:
    """Send the outbox's calls in order; stop at the first failure and keep the rest.

    Metric points already in the run (same key and step) are skipped, so a replay can be
    repeated, and one after a resumed run adds no duplicates. Returns (sent, remaining).
    """
    entries = list(outbox.entries())
    seen: dict[tuple[str, str], set[int]] = {}
    sent = 0
    for index, entry in enumerate(entries):
        try:
            if entry["op"] == "metrics":
                entry = dict(entry)
                entry["metrics"] = [
                    row for row in entry["metrics"]
                    if row[3] not in _steps(seen, client, entry["run_id"], row[0])
                ]  # fmt: skip
                if not entry["metrics"]:
                    sent += 1
                    continue
            apply_entry(client, uri, entry)
        except Exception as err:
            if is_refusal(err):
                log.warning("MLflow refused kept %s: %s", entry["op"], redact(_first_line(err)))
                sent += 1
                continue
            remaining = entries[index:]
            outbox.replace(remaining)
            return sent, remaining
        if entry["op"] == "metrics":
            for key, _, _, step in entry["metrics"]:
                seen[(entry["run_id"], key)].add(int(step))
        sent += 1
    outbox.replace([])
    return sent, []


def _steps(seen: dict[tuple[str, str], set[int]], client, run_id: str, key: str) -> set[int]:
    if (run_id, key) not in seen:
        seen[(run_id, key)] = {int(m.step) for m in client.get_metric_history(run_id, key)}
    return seen[(run_id, key)]


@contextlib.contextmanager
def store_lock(uri: str | None) -> Iterator[None]:
    """Serialize store creation across processes for a sqlite file (parallel sweep jobs).

    Parallel jobs on one fresh sqlite file race on schema and experiment creation (mlflow #4123);
    an flock on ``<db>.lock`` makes the first job create them and the others find them.
    """
    if not uri or not uri.startswith("sqlite:///"):
        yield
        return
    database = Path(uri[len("sqlite:///") :])
    database.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{database}.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


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
