"""Where a run's checkpoints live, so that the same command can find them again after a crash.

Hydra gives every launch a fresh output directory, so checkpoints kept there could not be found by
a relaunch. By default they go to ``<launch dir>/checkpoints/<name>-seed<seed>-<key>``, where
``<key>`` hashes the config minus the settings that do not change the training trajectory
(``trainer.resume``, ``trainer.progress``, ``debug``, ``evaluate.*``, ``trainer.sample_rows``):
the same command plus ``trainer.resume=true`` lands in the same directory, while every job of a
sweep gets its own. ``trainer.checkpoint_dir`` overrides it.

Beside the checkpoints, ``run.json`` records the MLflow run id, the store and the status, so a
resumed run logs into the same MLflow run; ``history.csv`` keeps every step's metrics up to the
last checkpoint, so the curves of a resumed run have no gap and no repeat. A lock file keeps two
live jobs out of one directory (the lock dies with its process, even on ``kill -9``).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, NamedTuple

from wgangp.config import Config, flatten
from wgangp.errors import ConfigError, WgangpError
from wgangp.files import write_text
from wgangp.redaction import redact

log = logging.getLogger("wgangp.resume")

RECORD_FILE = "run.json"
HISTORY_FILE = "history.csv"
LOCK_FILE = ".lock"
#: Settings that do not change the weights a run ends with: not part of the directory key.
TRAJECTORY_FREE = (
    "trainer.resume",
    "trainer.progress",
    "trainer.sample_rows",
    "tracking.log_every",
    "debug",
)
TRAJECTORY_FREE_PREFIXES = ("evaluate.",)
#: Statuses of a run that stopped before its end and can be continued.
INTERRUPTED = ("RUNNING", "KILLED")


def trajectory_params(cfg: Config) -> dict:
    """The settings that decide the weights a run ends with, as plain JSON values, secrets
    redacted (``run.json`` keeps them, and a URL's signature is no setting of the training)."""
    params = {
        key: redact(value)
        for key, value in flatten(cfg).items()
        if key not in TRAJECTORY_FREE and not key.startswith(TRAJECTORY_FREE_PREFIXES)
    }
    return json.loads(json.dumps(params, sort_keys=True, default=str))


def config_key(cfg: Config) -> str:
    """8 hex digits identifying the training trajectory a config describes."""
    text = json.dumps(trajectory_params(cfg), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def changed_settings(before: dict, now: dict) -> list[str]:
    """``key (a there, b now)`` for each training setting that differs."""
    keys = sorted(set(before) | set(now))
    missing = "unset"
    return [
        f"{key} ({before.get(key, missing)} there, {now.get(key, missing)} now)"
        for key in keys
        if before.get(key, missing) != now.get(key, missing)
    ]


def fresh_start_advice(path: Path) -> str:
    return (
        f"to start fresh, delete {path} or set another trainer.checkpoint_dir=..., and drop "
        "trainer.resume=true"
    )


def default_checkpoint_dir(cfg: Config, launch_dir: Path) -> Path:
    return launch_dir / "checkpoints" / f"{cfg.name}-seed{cfg.seed}-{config_key(cfg)}"


def resolve_checkpoint_dir(cfg: Config, launch_dir: Path) -> Path:
    """``trainer.checkpoint_dir`` (relative to the launch dir), else the keyed default."""
    configured = cfg.trainer.checkpoint_dir
    if not configured:
        return default_checkpoint_dir(cfg, launch_dir).resolve()
    path = Path(os.path.expanduser(configured))
    return (path if path.is_absolute() else launch_dir / path).resolve()


@dataclass
class RunRecord:
    """``run.json``: what a relaunch needs to continue the same MLflow run."""

    run_id: str | None = None
    tracking_uri: str | None = None
    experiment: str | None = None
    status: str = "RUNNING"
    step: int = 0
    output_dir: str | None = None
    config_key: str | None = None
    #: :func:`trajectory_params` of the run: a resume with other values is refused.
    params: dict | None = None
    #: The digest of the table the run split (set once the data is loaded).
    data_digest: str | None = None
    updated: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))


class CheckpointDir:
    """The locked checkpoint directory of one job, and its ``run.json``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock_handle: IO[str] | None = None

    @property
    def record_path(self) -> Path:
        return self.path / RECORD_FILE

    @property
    def history_path(self) -> Path:
        return self.path / HISTORY_FILE

    def acquire(self) -> CheckpointDir:
        """Create and lock the directory; a second live job on it is a one-line error."""
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            handle = (self.path / LOCK_FILE).open("a+")
        except OSError as err:
            raise WgangpError(
                f"checkpoint directory {self.path} is not writable ({err.strerror}); "
                "set trainer.checkpoint_dir=/a/writable/dir"
            ) from None
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise ConfigError(
                f"checkpoint directory {self.path} is in use by {holder}; wait for that job, "
                "or give this one its own trainer.checkpoint_dir=..."
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}\n")
        handle.flush()
        self._lock_handle = handle
        return self

    def release(self) -> None:
        if self._lock_handle is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._lock_handle, fcntl.LOCK_UN)
                self._lock_handle.close()
            self._lock_handle = None

    def read_record(self) -> RunRecord | None:
        if not self.record_path.is_file():
            return None
        try:
            data = json.loads(self.record_path.read_text())
            known = {k: v for k, v in data.items() if k in RunRecord.__dataclass_fields__}
            return RunRecord(**known)
        except (OSError, ValueError, TypeError):
            log.warning("ignoring unreadable %s", self.record_path)
            return None

    def write_record(self, record: RunRecord) -> None:
        """Atomically replace ``run.json`` (a crash never leaves half a file)."""
        record.updated = datetime.now(UTC).isoformat(timespec="seconds")
        write_text(self.record_path, json.dumps(record.__dict__, indent=2) + "\n")

    def has_checkpoint(self) -> bool:
        return (self.path / "checkpoint").is_file()

    def discard_if_unused(self) -> None:
        """Remove the directory of a job that failed before its first checkpoint (call last)."""
        if self.path.is_dir() and not self.has_checkpoint():
            self.release()
            shutil.rmtree(self.path, ignore_errors=True)

    def clear(self) -> None:
        """Remove a finished run's checkpoints, record and history (not the lock)."""
        for child in self.path.iterdir():
            if child.name == LOCK_FILE:
                continue
            if child.is_dir():
                shutil.rmtree(child)
            else:
                child.unlink()


def _check_same_training(cfg: Config, record: RunRecord | None, path: Path) -> None:
    """A resume continues the same training or none: other settings would mix two runs."""
    if record is None or record.params is None:
        if record is not None and record.config_key and record.config_key != config_key(cfg):
            raise ConfigError(
                f"trainer.resume=true, but the checkpoints in {path} were trained with other "
                f"settings (config key {record.config_key}, now {config_key(cfg)}); "
                f"{fresh_start_advice(path)}"
            )
        return
    changed = changed_settings(record.params, trajectory_params(cfg))
    if changed:
        raise ConfigError(
            f"trainer.resume=true, but the checkpoints in {path} were trained with other "
            f"settings: {', '.join(changed)}; resume with the same settings, or "
            f"{fresh_start_advice(path)}"
        )


class OpenedDir(NamedTuple):
    """A locked checkpoint directory, and what a previous launch left in it."""

    directory: CheckpointDir
    previous: RunRecord | None  # the run to continue (trainer.resume=true and a checkpoint)
    stale: RunRecord | None  # an interrupted run without a checkpoint: nothing to continue


def open_checkpoint_dir(cfg: Config, launch_dir: Path) -> OpenedDir:
    """Lock the job's checkpoint directory and decide what a previous launch left means.

    A checkpoint of an interrupted run is continued with ``trainer.resume=true`` and is an
    error without it (naming the two ways forward) rather than silently overwritten; a finished
    run's checkpoints are cleared. A run interrupted before its first checkpoint left nothing to
    continue: the job starts over (its record comes back as ``stale``, so the caller can close
    that run's MLflow run), with or without ``trainer.resume``.
    """
    directory = CheckpointDir(resolve_checkpoint_dir(cfg, launch_dir)).acquire()
    try:
        record = directory.read_record()
        interrupted = record is not None and record.status in INTERRUPTED
        if directory.has_checkpoint():
            if cfg.trainer.resume and record is not None and record.status == "FINISHED":
                log.info(
                    "trainer.resume=true: the run in %s (MLflow run %s) finished, nothing to "
                    "resume; starting a fresh run", directory.path, record.run_id,
                )  # fmt: skip
            elif cfg.trainer.resume:
                _check_same_training(cfg, record, directory.path)
                return OpenedDir(directory, record, None)
            if interrupted and record is not None:
                raise ConfigError(
                    f"an interrupted run (step {record.step}, MLflow run {record.run_id}) has "
                    f"checkpoints in {directory.path}; add trainer.resume=true to continue it, "
                    "or delete that directory to start over"
                )
            log.info("starting over: clearing the finished run's checkpoints in %s", directory.path)
        elif interrupted and record is not None:
            log.info(
                "the interrupted run %s stopped before its first checkpoint: starting over in %s",
                record.run_id, directory.path,
            )  # fmt: skip
        elif cfg.trainer.resume:
            log.info("trainer.resume=true: no checkpoint in %s yet, starting fresh", directory.path)
        directory.clear()
        return OpenedDir(directory, None, record if interrupted else None)
    except BaseException:
        directory.release()
        raise
