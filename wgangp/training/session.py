"""One training job's MLflow run and checkpoint directory, from opening to closing.

:class:`TrackedRun` locks the job's output folder (:mod:`.output_lock`), opens (or, on resume,
reopens) the MLflow run and locks the job's checkpoint directory; whatever ends the job, it
closes the run as FINISHED, FAILED (with ``failure.reason`` and ``failure.message`` tags) or
KILLED and records the status in the directory's ``run.json``, so a relaunch knows whether there
is a run to continue.

What the run records about its table (its name, tags, dataset, schema) is
:mod:`.run_record`'s; the run's description (:mod:`wgangp.tracking.note`) says what it trained on
and how it ended.
"""

from __future__ import annotations

import contextlib
import logging
import signal
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import TracebackType

from omegaconf import OmegaConf

from wgangp.config import Config, flatten
from wgangp.data.prepare import PreparedData
from wgangp.errors import DataError, NonFiniteError, WgangpError, report_error
from wgangp.files import write_text
from wgangp.redaction import redact
from wgangp.tracking.note import RunNote, TrainedOn, data_label
from wgangp.tracking.outbox import OUTBOX_FILE
from wgangp.tracking.secrets import redact_logs
from wgangp.tracking.store import open_tracking_uri
from wgangp.tracking.tracker import Tracker
from wgangp.training.checkpoints import (
    INTERRUPTED,
    CheckpointDir,
    RunRecord,
    config_key,
    fresh_start_advice,
    open_checkpoint_dir,
    trajectory_params,
)
from wgangp.training.interrupts import Interrupted, Interruption
from wgangp.training.output_lock import lock_output_dir, unlock_output_dir
from wgangp.training.run_dirs import RunDirs
from wgangp.training.run_record import (
    RUN_NAME_TAG,
    data_tags,
    dataset_record,
    default_run_name,
    planned_table_name,
    table_name,
    trained_on,
    write_schema,
)
from wgangp.training.runtime import environment_tags, git_commit
from wgangp.training.team_report import TeamReport

log = logging.getLogger("wgangp.train")

FAILURE_REASON = "failure.reason"
FAILURE_MESSAGE = "failure.message"
#: How long an abandoned run waits for its queued MLflow calls: ``docker stop`` SIGKILLs at 10 s.
ABANDON_TIMEOUT_S = 3.0


@dataclass
class TrainResult:
    """What :func:`wgangp.train.train` returns: where the run is and how it ended."""

    run_id: str | None
    output_dir: Path
    steps_completed: int
    status: str  # FINISHED | FAILED
    final_metrics: dict[str, float] = field(default_factory=dict)
    synthesizer_dir: Path | None = None
    nan_step: int | None = None
    nan_source: str | None = None


class TrackedRun:
    """Use as ``with TrackedRun(cfg, dirs) as run:``; the body trains and returns
    :meth:`result`. An exception leaves the run FAILED with its reason; SIGTERM or SIGINT
    (:mod:`.interrupts`) leaves it KILLED and resumable, with one line saying how."""

    def __init__(self, cfg: Config, dirs: RunDirs, embedded: bool = False) -> None:
        """``embedded``: called from Python (:func:`wgangp.fit`): a signal ends the run, never
        the process (:mod:`.interrupts`)."""
        self.cfg = cfg
        self.dirs = dirs
        self.status = "FAILED"  # until the body reports how it ended
        self._nan_failure = False
        self.tracker = Tracker(
            None,
            cfg.tracking.experiment,
            enabled=cfg.tracking.enabled,
            outbox=dirs.output / OUTBOX_FILE,
        )
        self.checkpoints: CheckpointDir
        self.previous: RunRecord | None = None
        self.record: RunRecord
        self._resumed_run_id: str | None = None
        self.interruption = Interruption(on_abandon=self._abandon, exits=not embedded)
        self._closing = False
        self.note: RunNote | None = None  # the run page's description, once the data is known
        #: Under ``privacy.epsilon``: the team report, for what the shared run may not hold
        #: (:mod:`.team_report`), and what it trained on, which the shared run's note withholds.
        self.report: TeamReport | None = None
        self._trained_on: TrainedOn | None = None

    @property
    def resumed(self) -> bool:
        """Whether this job continues an MLflow run a previous launch opened."""
        return self._resumed_run_id is not None

    def __enter__(self) -> TrackedRun:
        cfg, tracker = self.cfg, self.tracker
        # One live job per output folder (Hydra's callback holds it already): before any run.
        lock_output_dir(self.dirs.output)
        # Before anything can fail or log: whatever ends the job, Hydra's files and the
        # console and train.log show no secret of a URL.
        redact_logs()
        self.dirs.scrub()
        try:
            if cfg.tracking.enabled:
                tracker.uri = open_tracking_uri(
                    cfg.tracking.uri,
                    self.dirs.launch,
                    self.dirs.output,
                    required=cfg.tracking.required,
                )
                log.info(
                    "MLflow tracking URI: %s (experiment %s)",
                    redact(tracker.uri),
                    tracker.experiment,
                )
            self.checkpoints, self.previous, stale = open_checkpoint_dir(cfg, self.dirs.launch)
        except BaseException:
            unlock_output_dir(self.dirs.output)
            raise
        self.record = RunRecord(
            tracking_uri=redact(tracker.uri) if tracker.uri else None,
            experiment=tracker.experiment,
            output_dir=str(self.dirs.output),
            config_key=config_key(cfg),
            params=trajectory_params(cfg),
        )
        try:
            self._close_stale(stale)
            self._resumed_run_id = self._run_to_continue()
            tags = {
                "experiment": cfg.name,
                "git.commit": git_commit(Path(__file__).resolve().parent),
                "checkpoint.dir": str(self.checkpoints.path),
                "output.dir": str(self.dirs.output),
                **environment_tags(),
            }
            name = cfg.tracking.run_name or default_run_name(
                cfg, planned_table_name(cfg), config_key(cfg)
            )
            tracker.start(name, tags, run_id=self._resumed_run_id)
            if cfg.privacy.enabled and tracker.run_id:
                self.report = TeamReport.open(tracker, name, tags)
            if self.resumed:  # the earlier launch's failure is not this run's outcome any more
                tracker.delete_tags([FAILURE_REASON, FAILURE_MESSAGE])
            self.record.run_id = tracker.run_id
            if self.previous is not None:
                self.record.step = self.previous.step
                self.record.data_digest = self.previous.data_digest
            self.checkpoints.write_record(self.record)
            if tracker.run_id:
                log.info("MLflow run %s; checkpoints in %s", tracker.run_id, self.checkpoints.path)
            self.interruption.__enter__()
        except BaseException:
            self._close()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        err: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        # Closing is not interrupted: a signal now is only noted, and the watchdog stands down.
        self.interruption.acknowledge()
        with self.interruption.deferred():
            try:
                interrupted = self._end(err)
            finally:
                self.interruption.__exit__()
        if interrupted is not None:
            raise interrupted from None

    def _end(self, err: BaseException | None) -> Interrupted | None:
        """Close the run as its body ended; an interruption comes back with its one line."""
        self._closing = True
        if isinstance(err, Interrupted | KeyboardInterrupt):
            signum = err.signum if isinstance(err, Interrupted) else signal.SIGINT
            interrupted = Interrupted(self._interrupted_message(), signum)
            self._record_failure(interrupted, "KILLED")
            self._close()
            return interrupted
        if err is not None:
            if isinstance(err, WgangpError):
                log.debug("run failed", exc_info=err)
            self._record_failure(err, "FAILED")
            self._nan_failure = isinstance(err, NonFiniteError)
        self._close()
        return None

    def log_data(self, data: PreparedData) -> None:
        """Where the rows came from, their digest, and how many exact duplicates the split kept
        together; the description's first line. A resumed run must split the same table as its
        first launch; a run whose rows came from elsewhere than planned (simulated rows, Kaggle's
        download) is renamed after its table. Under ``privacy.epsilon`` the shared run gets the
        table's name, where it came from and its released schema; the digest, the counts and
        the dataset's profile go to the team report (:attr:`records`)."""
        previous = self.previous
        if previous is not None and previous.data_digest and previous.data_digest != data.digest:
            raise DataError(
                f"trainer.resume=true, but the table {data.origin} is not the one the checkpoints "
                f"in {self.checkpoints.path} were trained on (digest {previous.data_digest}, now "
                f"{data.digest}): it was edited or replaced; restore it, or "
                f"{fresh_start_advice(self.checkpoints.path)}"
            )
        self.record.data_digest = data.digest
        self.checkpoints.write_record(self.record)
        cfg = self.cfg
        tags = data_tags(data)
        self.records.set_tags(tags)
        # A DataFrame's origin counts its rows: under privacy the shared run names its kind.
        origin = data.origin if data.provenance != "dataframe" or not self.report else "DataFrame"
        if self.report is not None:
            self.tracker.set_tags({"data.source": tags["data.source"], "data.origin": origin})
        name = table_name(cfg, data)
        if name != planned_table_name(cfg) and not cfg.tracking.run_name:
            run_name = default_run_name(cfg, name, config_key(cfg))
            self.tracker.set_tags({RUN_NAME_TAG: run_name})
        self.records.log_dataset(dataset_record(data, name))
        self.tracker.log_artifact(write_schema(data, cfg, self.dirs.output))
        label = data_label(name, data.provenance, origin)
        self._trained_on = trained_on(data, cfg.trainer.steps)
        withheld = TrainedOn(None, None, cfg.trainer.steps)
        self.describe(RunNote(label, withheld if self.report else self._trained_on))
        log.info("data: %s", data.describe_duplicates())

    @property
    def records(self) -> Tracker:
        """Where what reads rows is logged (the table's counts, the held-out evaluation, the
        phases): the run itself, or under ``privacy.epsilon`` its team report."""
        return self.report.tracker if self.report is not None else self.tracker

    def describe(self, note: RunNote, report_outcome: str | None = None) -> None:
        """Set the run page's description (the data line, the headline figures); the team
        report's too, with the counts the shared run withholds and ``report_outcome``."""
        self.note = note
        self.tracker.set_tags(note.tags())
        if self.report is not None and self._trained_on is not None:
            fit = replace(self._trained_on, steps=note.fit.steps)
            outcome = report_outcome if report_outcome is not None else note.outcome
            self.report.tracker.set_tags(replace(note, fit=fit, outcome=outcome).tags())

    def describe_end(
        self,
        steps: int,
        outcome: str,
        refit: TrainedOn | None = None,
        report_outcome: str | None = None,
    ) -> None:
        """The description once training ended: the steps it took, the refit, the outcome
        (``report_outcome``: the team report's, when it says more)."""
        if self.note is not None:
            fit = replace(self.note.fit, steps=steps)
            self.describe(replace(self.note, fit=fit, refit=refit, outcome=outcome), report_outcome)

    def log_config(self) -> None:
        """The resolved config (secrets redacted) as a file and artifact, and as params unless
        this job continues a run (a resumed run keeps the params of its first launch)."""
        output = self.dirs.output
        resolved = OmegaConf.structured(self.cfg)
        write_text(output / "config_resolved.yaml", redact(OmegaConf.to_yaml(resolved)))
        if not self.resumed:
            self.tracker.log_params(flatten(self.cfg))
        self.tracker.log_artifact(output / "config_resolved.yaml", "config")
        meta = self.dirs.hydra_meta
        if meta is not None and meta.is_dir():
            self.dirs.scrub()  # done when the run opened; again, as the files are shipped
            self.tracker.log_artifact(meta, "config/hydra")

    def result(
        self,
        status: str,
        steps_completed: int,
        final_metrics: dict[str, float],
        *,
        synthesizer_dir: Path | None = None,
        nan_step: int | None = None,
        nan_source: str | None = None,
    ) -> TrainResult:
        """How the job ended (the run is closed with this status on leaving the ``with``)."""
        self.status = status
        self._nan_failure = nan_step is not None
        return TrainResult(
            run_id=self.tracker.run_id,
            output_dir=self.dirs.output,
            steps_completed=steps_completed,
            status=status,
            final_metrics=final_metrics,
            synthesizer_dir=synthesizer_dir,
            nan_step=nan_step,
            nan_source=nan_source,
        )

    def _run_to_continue(self) -> str | None:
        """The MLflow run a resumed job logs into: the recorded one, if it is in the same store."""
        previous, record = self.previous, self.record
        if previous is None or not previous.run_id or record.tracking_uri is None:
            return None
        if previous.tracking_uri != record.tracking_uri:
            log.warning(
                "resuming, but the run was tracked in %s and this job tracks to %s: starting a new "
                "MLflow run", previous.tracking_uri, record.tracking_uri,
            )  # fmt: skip
            return None
        return previous.run_id

    def _record_failure(self, err: BaseException, status: str) -> None:
        reason = err.reason if isinstance(err, WgangpError) else type(err).__name__
        message = redact(str(err))  # before it is cut: a URL cut short is no longer recognized
        failure = {FAILURE_REASON: reason, FAILURE_MESSAGE: message[:4000]}
        if self.report is not None:  # a message may count rows: the shared run gets the reason
            self.report.tracker.set_tags(failure)
            failure = {FAILURE_REASON: reason}
        self.tracker.set_tags(failure)
        if self.note is not None:
            ended = "**Interrupted**" if status == "KILLED" else f"**Failed** ({reason})"
            first = message.splitlines()[0][:300] if message else type(err).__name__
            self.describe(self.note.with_outcome(f"{ended}: {first}"))
        self.status = status

    def _interrupted_message(self) -> str:
        """The one line of an interrupted run: where it can continue from, and how."""
        if self.checkpoints.has_checkpoint():
            return (
                f"interrupted at step {self.record.step}; checkpoint kept in "
                f"{self.checkpoints.path}; rerun with trainer.resume=true to continue"
            )
        return "interrupted before the first checkpoint; nothing to keep: rerun the same command"

    def _abandon(self, signum: int) -> None:
        """The call in flight did not finish in time: close the run on its last checkpoint.

        Runs on the interruption's watchdog thread while the main thread is still inside the
        call (or in the main thread, at a second signal); the process exits right after.
        """
        if self._closing:
            return  # the run is being closed already; a second signal only hurries the exit
        interrupted = Interrupted(self._interrupted_message(), signum)
        self._record_failure(interrupted, "KILLED")
        self._close(timeout=ABANDON_TIMEOUT_S)
        report_error(interrupted)

    def _close_stale(self, stale: RunRecord | None) -> None:
        """An interrupted run left no checkpoint to continue: end its MLflow run if still open."""
        if stale is None or not stale.run_id or stale.tracking_uri != self.record.tracking_uri:
            return
        with contextlib.suppress(Exception):
            if self.tracker.client.get_run(stale.run_id).info.status == "RUNNING":
                self.tracker.client.set_terminated(stale.run_id, status="KILLED")

    def _close(self, timeout: float = 300.0) -> None:
        """End the MLflow run, record the status in run.json, release the checkpoint directory."""
        status, previous = self.status, self.previous
        for tracker in (self.tracker, *([self.report.tracker] if self.report else [])):
            try:
                tracker.end(status, timeout=timeout)
            except Exception:
                log.warning("could not close MLflow run %s as %s", tracker.run_id, status)
        self.record.status = status
        failed_again = status == "FAILED" and not self._nan_failure
        if failed_again and previous is not None and previous.status in INTERRUPTED:
            self.record.status = previous.status  # a failed relaunch leaves the run resumable
        with contextlib.suppress(OSError):
            self.checkpoints.write_record(self.record)
        self.dirs.scrub()  # done when the run opened; once more, whatever happened since
        if previous is None and status != "FINISHED":
            self.checkpoints.discard_if_unused()  # a job that failed early leaves no empty dir
        self.checkpoints.release()
        unlock_output_dir(self.dirs.output)
