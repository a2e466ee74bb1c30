"""What the store did not take: a local JSON-lines journal of tracking calls, and its replay.

When the MLflow store goes away mid-run, training goes on: every metric batch, tag, artifact upload,
model, registration or status change that could not be sent is appended to
``<output dir>/tracking_outbox.jsonl``, in order, one JSON object per line, flushed at once (a
crash loses nothing already written). The
tracker replays it when the store answers again; ``python -m wgangp.sync <output dir>`` replays
what is left after the run, into the same MLflow run.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wgangp.errors import TrackingError
from wgangp.files import write_text
from wgangp.redaction import redact
from wgangp.tracking.store import check_reachable, use_http_retry_defaults, use_tracking_uri

if TYPE_CHECKING:
    from mlflow.tracking import MlflowClient

log = logging.getLogger("wgangp.tracking")

OUTBOX_FILE = "tracking_outbox.jsonl"
#: The run tag that names the pyfunc model logged by a ``model`` call.
MODEL_URI_TAG = "model.uri"
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


class Outbox:
    """Append-only while a run writes it; rewritten (atomically) only by a replay."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def append(self, entry: dict[str, Any]) -> None:
        line = json.dumps(entry, default=str)
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(line + "\n")
                handle.flush()

    def entries(self) -> Iterator[dict[str, Any]]:
        """The journal's entries in order; a torn last line (crash mid-write) is skipped."""
        if not self.path.is_file():
            return
        with self.path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                try:
                    line = raw.decode("utf-8").strip()
                except UnicodeDecodeError:
                    log.warning("skipping line %d of %s: not UTF-8 (damaged)", number, self.path)
                    continue
                if not line:
                    continue
                try:
                    yield json.loads(line)
                except ValueError:
                    continue

    def __len__(self) -> int:
        return sum(1 for _ in self.entries())

    def replace(self, remaining: list[dict[str, Any]]) -> None:
        """Keep only ``remaining`` (the entries a replay could not send); delete when empty."""
        with self._lock:
            if not remaining:
                self.path.unlink(missing_ok=True)
                return
            write_text(self.path, "".join(json.dumps(e, default=str) + "\n" for e in remaining))


#: The operations a kept call can be (what :func:`apply_entry` replays).
OPERATIONS = (
    "metrics",
    "params",
    "tags",
    "delete_tags",
    "artifact",
    "dataset",
    "model",
    "register",
    "terminate",
)


def is_refusal(err: BaseException) -> bool:
    """True when the store answered and refused the call (replaying it would fail again)."""
    from mlflow.exceptions import MlflowException

    return isinstance(err, MlflowException) and str(err.error_code) in _REFUSED


def first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def apply_entry(client: MlflowClient, uri: str | None, entry: dict[str, Any]) -> None:
    """Send one tracking call (queued or journaled) to the store, synchronously."""
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
    elif op == "delete_tags":
        present = client.get_run(run_id).data.tags
        for key in entry["keys"]:
            if key in present:
                client.delete_tag(run_id, key)
    elif op == "artifact":
        path = Path(entry["path"])
        if path.is_dir():
            client.log_artifacts(run_id, str(path), entry.get("artifact_path"))
        elif path.exists():
            client.log_artifact(run_id, str(path), entry.get("artifact_path"))
        else:
            log.warning("artifact %s no longer exists; not logged", path)
    elif op == "dataset":
        from mlflow.entities import Dataset, DatasetInput, InputTag

        dataset = Dataset(**entry["dataset"])
        context = InputTag("mlflow.data.context", entry.get("context", "training"))
        client.log_inputs(run_id, datasets=[DatasetInput(dataset, tags=[context])])
    elif op == "model":
        model_uri = log_pyfunc_model(entry["model"], run_id, uri)
        client.set_tag(run_id, MODEL_URI_TAG, model_uri)
    elif op == "register":
        logged = client.get_run(run_id).data.tags.get(MODEL_URI_TAG)
        if not logged:
            log.warning("not registered: run %s logged no model (no tag %s)", run_id, MODEL_URI_TAG)
            return
        from wgangp.tracking.registry import register_run_model

        register_run_model(client, uri, run_id, logged, **entry["register"])
    elif op == "terminate":
        client.set_terminated(run_id, status=entry["status"])
    else:
        raise ValueError(f"unknown tracking call {op!r}")


def log_pyfunc_model(spec: dict[str, Any], run_id: str, tracking_uri: str | None) -> str:
    """Log a models-from-code pyfunc model described by ``spec`` into ``run_id``; its URI.

    ``spec`` is plain JSON (journaled with the other calls): ``name``, ``python_model`` (the
    code file), ``artifacts``, ``signature`` (``ModelSignature.to_dict()``), ``input_example``
    (columns -> values) and ``pip_requirements``.
    """
    import mlflow
    import pandas as pd
    from mlflow.models import ModelSignature

    with use_tracking_uri(tracking_uri or mlflow.get_tracking_uri()), mlflow.start_run(run_id):
        info = mlflow.pyfunc.log_model(
            name=spec["name"],
            python_model=spec["python_model"],
            artifacts=spec["artifacts"],
            signature=ModelSignature.from_dict(spec["signature"]),
            input_example=pd.DataFrame(spec["input_example"]),
            pip_requirements=spec["pip_requirements"],
            metadata=spec.get("metadata"),
        )
    return info.model_uri


def replay(
    outbox: Outbox, client: MlflowClient, uri: str | None
) -> tuple[int, list[dict[str, Any]]]:
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
                log.warning("MLflow refused kept %s: %s", entry["op"], redact(first_line(err)))
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


def _steps(
    seen: dict[tuple[str, str], set[int]], client: MlflowClient, run_id: str, key: str
) -> set[int]:
    if (run_id, key) not in seen:
        seen[(run_id, key)] = {int(m.step) for m in client.get_metric_history(run_id, key)}
    return seen[(run_id, key)]


def sync_outbox(output_dir: Path, tracking_uri: str | None = None) -> int:
    """Replay ``output_dir``'s outbox into its store (or ``tracking_uri``); the calls sent."""
    from mlflow.tracking import MlflowClient

    if not Path(output_dir).is_dir():
        raise TrackingError(
            f"{output_dir} is not a directory; pass the training run's output directory (the one "
            f"holding {OUTBOX_FILE}, named in the run's last line)"
        )
    outbox = Outbox(Path(output_dir) / OUTBOX_FILE)
    entries = list(outbox.entries())
    for number, entry in enumerate(entries, start=1):
        if (
            not isinstance(entry, dict)
            or entry.get("op") not in OPERATIONS
            or not entry.get("run_id")
        ):
            raise TrackingError(
                f"{outbox.path}: kept call {number} has no known operation or run id (edited or "
                "damaged), so no retry can send it; remove that line and run this again"
            )
    if not entries:
        log.info("nothing to sync: no kept tracking calls in %s", outbox.path)
        return 0
    uri = tracking_uri or entries[0].get("tracking_uri")
    if not uri or "***" in uri:
        raise TrackingError(
            f"{outbox.path} does not name a usable tracking store; pass tracking_uri=URI"
        )
    check_reachable(uri)
    use_http_retry_defaults(uri)
    sent, remaining = replay(outbox, MlflowClient(tracking_uri=uri), uri)
    if remaining:
        raise TrackingError(
            f"sent {sent} of {len(entries)} kept call(s) to {redact(uri)}, then the store failed; "
            f"the other {len(remaining)} stay in {outbox.path}: run this again later"
        )
    log.info("sent %d kept tracking call(s) to %s", sent, redact(uri))
    return sent
