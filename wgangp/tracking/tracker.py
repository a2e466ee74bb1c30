"""One MLflow run of a custom training loop: params, tags, metrics, artifacts, model, status.

Every call after the run is opened goes through one background worker, in order, so a slow or
absent store never stalls a training step. When the store fails (server gone, sqlite locked past
its timeout), the worker keeps what it could not send in the run's outbox
(:mod:`wgangp.tracking.outbox`), probes the store now and then and replays the outbox when it
answers again; what is left at the end is replayed by ``python -m wgangp.sync <output dir>``.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wgangp.errors import TrackingError
from wgangp.redaction import redact
from wgangp.tracking.names import CRITIC_LOSS
from wgangp.tracking.outbox import Outbox, apply_entry, first_line, is_refusal, replay
from wgangp.tracking.store import (
    check_reachable,
    default_artifact_location,
    store_lock,
    use_http_retry_defaults,
)

if TYPE_CHECKING:
    from mlflow.tracking import MlflowClient

log = logging.getLogger("wgangp.tracking")


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
        self._client: MlflowClient | None = None
        self._queue: queue.Queue = queue.Queue()
        self._worker: threading.Thread | None = None
        self._last_probe = 0.0

    @property
    def client(self) -> MlflowClient:
        if self._client is None:
            from mlflow.tracking import MlflowClient

            use_http_retry_defaults(self.uri)
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
                f"{redact(first_line(err))}); check tracking.uri"
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

    def last_logged_step(self, key: str = CRITIC_LOSS) -> int:
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

    def delete_tags(self, keys: list[str]) -> None:
        """Remove tags (e.g. an earlier launch's failure tags once a resumed run goes on)."""
        self._submit({"op": "delete_tags", "keys": list(keys)})

    def log_metrics(self, metrics: Mapping[str, float], step: int) -> None:
        """Queue metrics without waiting for the store."""
        now = int(time.time() * 1000)
        rows = [[k, float(v), now, int(step)] for k, v in metrics.items()]
        self._submit({"op": "metrics", "metrics": rows})

    def log_artifact(self, path: Path, artifact_path: str | None = None) -> None:
        self._submit(
            {"op": "artifact", "path": str(Path(path).resolve()), "artifact_path": artifact_path}
        )

    def log_dataset(self, dataset: Mapping[str, Any], context: str = "training") -> None:
        """Record the run's table as an MLflow dataset input (the run page's "Datasets"):
        ``dataset`` holds :class:`mlflow.entities.Dataset`'s fields (name, digest, source_type,
        source, schema, profile), never rows; its source is a URL as typed, secrets redacted."""
        fields = {k: redact(v) for k, v in dataset.items()}
        self._submit({"op": "dataset", "dataset": fields, "context": context})

    def log_model(self, spec: Mapping[str, Any]) -> None:
        """Log a pyfunc model (after the artifacts queued before it); tags ``model.uri``.

        ``spec`` describes it as plain JSON (see :func:`~wgangp.tracking.outbox.log_pyfunc_model`),
        so an outage journals it like any other call.
        """
        self._submit({"op": "model", "model": dict(spec)})

    def register_model(
        self, name: str, score: float | None, step: int | None, metric: str | None
    ) -> None:
        """Register the model of the last :meth:`log_model` in the Model Registry as ``name``;
        ``champion`` follows the lowest score (see :mod:`wgangp.tracking.registry`)."""
        spec = {"name": name, "score": score, "step": step, "metric": metric}
        self._submit({"op": "register", "register": spec})

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
                log.warning("MLflow refused %s: %s", entry["op"], redact(first_line(err)))
                return
            self.outage = f"{type(err).__name__}: {redact(first_line(err))[:300]}"
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
            if self.run_id is None:  # no run to probe the store with
                return False
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
