"""One live job per output folder: a second job aimed at a folder another is writing is refused.

Two jobs started together with one ``hydra.run.dir`` used to both finish: the folder ended with
the second job's bundle, metrics and config, and ``train.log`` interleaved both. The folder is
now locked like a checkpoint folder (:mod:`.checkpoints`): a lock file holding the pid, with an
``flock`` that dies with its process, even on ``kill -9``. Under Hydra the lock is taken by a
callback (``conf/config.yaml``, ``hydra.callbacks``) before Hydra writes ``.hydra/`` or opens
``train.log``, so the second job writes nothing there and opens no MLflow run: it is refused in
one line, or, when the folder is Hydra's default ``outputs/<date>/<time>`` (two jobs started in
the same second), moved to a free sibling ``<time>-1`` with a line saying where. Outside Hydra
(``train(cfg, output_dir=...)``) the run's session takes the same lock.
"""

from __future__ import annotations

import fcntl
import os
import sys
from pathlib import Path
from typing import IO, Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf, open_dict, read_write

from wgangp.errors import ConfigError, WgangpError, report_error

LOCK_FILE = ".wgangp.lock"
#: Folders this process holds: path -> (lock file handle, holders in this process).
_HELD: dict[Path, list[Any]] = {}


def lock_output_dir(path: Path, key: str = "hydra.run.dir") -> Path:
    """Lock ``path`` (created if needed) for this process; a folder another live process holds
    is a one-line ConfigError naming ``key``. Taking it again in this process only counts."""
    path = Path(path).expanduser().resolve()
    if path in _HELD:
        _HELD[path][1] += 1
        return path
    handle = _try_lock(path, key)
    if handle is None:
        holder = _holder(path)
        raise ConfigError(
            f"output directory {path} is in use by {holder}; wait for that job, or give this one "
            f"its own {key}=..."
        )
    _HELD[path] = [handle, 1]
    return path


def unlock_output_dir(path: Path) -> None:
    """Release one hold of ``path``; the last one unlocks it (the lock file stays)."""
    path = Path(path).expanduser().resolve()
    held = _HELD.get(path)
    if held is None:
        return
    held[1] -= 1
    if held[1] <= 0:
        del _HELD[path]
        try:
            fcntl.flock(held[0], fcntl.LOCK_UN)
        finally:
            held[0].close()


def _try_lock(path: Path, key: str) -> IO[str] | None:
    try:
        path.mkdir(parents=True, exist_ok=True)
        handle = (path / LOCK_FILE).open("a+")
    except OSError as err:
        raise ConfigError(
            f"cannot create the output directory {path} ({err.strerror or err}); run from a "
            f"writable directory or set {key}=/a/writable/dir"
        ) from None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    handle.seek(0)
    handle.truncate()
    handle.write(f"pid {os.getpid()}\n")
    handle.flush()
    return handle


def _holder(path: Path) -> str:
    try:
        return (path / LOCK_FILE).read_text().strip() or "another process"
    except OSError:
        return "another process"


def _chosen(config: DictConfig, key: str) -> bool:
    """Whether the command line set ``key`` (else it is Hydra's default, from the clock)."""
    given = OmegaConf.select(config, "hydra.overrides.hydra", default=[]) or []
    return any(str(override).lstrip("+").startswith(f"{key}=") for override in given)


def _free_sibling(path: Path) -> Path:
    """``<path>-1``, ``<path>-2``, ...: the first one this process can lock."""
    for i in range(1, 1000):
        candidate = path.with_name(f"{path.name}-{i}")
        handle = _try_lock(candidate, "hydra.run.dir")
        if handle is not None:
            _HELD[candidate.resolve()] = [handle, 1]
            return candidate
    raise ConfigError(f"no free output directory beside {path}; set hydra.run.dir=...")


class OutputDirLock(Callback):
    """Hydra callback: lock the run (or sweep) folder before Hydra writes into it."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        self._lock(config, "hydra.run.dir")

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        self._lock(config, "hydra.sweep.dir")

    def on_run_end(self, config: DictConfig, **kwargs: Any) -> None:
        unlock_output_dir(Path(str(OmegaConf.select(config, "hydra.run.dir"))))

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        unlock_output_dir(Path(str(OmegaConf.select(config, "hydra.sweep.dir"))))

    def _lock(self, config: DictConfig, key: str) -> None:
        path = Path(str(OmegaConf.select(config, key)))
        try:
            lock_output_dir(path, key)
        except WgangpError as err:
            if key == "hydra.run.dir" and not _chosen(config, key) and "in use" in str(err):
                moved = _free_sibling(path)
                with read_write(config.hydra.run), open_dict(config.hydra.run):
                    config.hydra.run.dir = str(moved)
                print(
                    f"wgangp: output directory {path} is in use by {_holder(path)}; this run "
                    f"writes to {moved}",
                    file=sys.stderr,
                    flush=True,
                )
                return
            report_error(err)
            sys.exit(err.exit_code)
