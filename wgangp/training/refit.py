"""Refit after selection (``trainer.refit``): train again, from scratch, on the training and the
validation rows, for as many steps as the quality loop selected.

The quality loop needs the validation rare rows to choose a step; once it has chosen, they can
serve as training rows. On validation, fewer training rare rows make even a resampler's rows easier
to detect; on the test split the refit tied the default at a higher cost (docs/quality.md), so it
is an option, off by default. Nothing is left to judge the refit generator on but the test split,
so the run keeps the first fit's selection (step and score, which the registry compares).

The refit's split is :meth:`~wgangp.data.prepare.PreparedData.with_validation_rows`. The second
fit runs through the same :class:`~wgangp.training.loop.HostLoop` as the first, seen
through :class:`RefitRun`: its metrics go in the ``refit`` section (``refit/train/critic_loss``),
its tags carry a ``refit.`` prefix, its curves and checkpoints live in ``refit/`` folders, so
the two fits never overwrite each other and an interrupted refit resumes where it stopped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from wgangp.tracking.names import CRITIC_LOSS, REFIT, in_section, metric
from wgangp.tracking.tracker import Tracker
from wgangp.training.checkpoints import CheckpointDir, RunRecord
from wgangp.training.interrupts import Interruption
from wgangp.training.run_dirs import RunDirs
from wgangp.training.session import TrackedRun

#: Tag prefix, artifact folder and checkpoint subfolder of the refit.
PREFIX = "refit."
FOLDER = "refit"


def refit_metrics(metrics: Mapping[str, float]) -> dict[str, float]:
    """The refit's metrics, in the ``refit`` section of the run page."""
    return in_section(REFIT, metrics)


class RefitTracker:
    """The run's tracker, with every metric in the ``refit`` section, ``refit.`` before every tag
    and a ``refit`` artifact folder: what :class:`~wgangp.training.loop.HostLoop` logs for the
    second fit."""

    def __init__(self, tracker: Tracker) -> None:
        self._tracker = tracker

    def log_metrics(self, metrics: Mapping[str, float], step: int) -> None:
        self._tracker.log_metrics(refit_metrics(metrics), step)

    def set_tags(self, tags: Mapping[str, Any]) -> None:
        self._tracker.set_tags({PREFIX + k: v for k, v in tags.items()})

    def log_artifact(self, path: Path, artifact_path: str | None = None) -> None:
        folder = f"{FOLDER}/{artifact_path}" if artifact_path else FOLDER
        self._tracker.log_artifact(path, folder)

    def last_logged_step(self, key: str = CRITIC_LOSS) -> int:
        return self._tracker.last_logged_step(metric(REFIT, key))

    def flush(self, timeout: float | None = None) -> bool:
        return self._tracker.flush(timeout)


@dataclass
class RefitRun:
    """What :class:`~wgangp.training.loop.HostLoop` uses of a :class:`TrackedRun`, for the
    refit: its own checkpoint subfolder, record and output folder; the run's interruption."""

    tracker: RefitTracker
    checkpoints: CheckpointDir
    record: RunRecord
    dirs: RunDirs
    interruption: Interruption

    @classmethod
    def of(cls, run: TrackedRun) -> RefitRun:
        checkpoints = CheckpointDir(run.checkpoints.path / FOLDER)
        checkpoints.path.mkdir(parents=True, exist_ok=True)
        output = run.dirs.output / FOLDER
        output.mkdir(parents=True, exist_ok=True)
        return cls(
            RefitTracker(run.tracker),
            checkpoints,
            replace(run.record, step=0),
            replace(run.dirs, output=output),
            run.interruption,
        )
