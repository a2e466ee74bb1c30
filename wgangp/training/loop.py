"""The host side of training: calls the compiled step, logs, checkpoints, stops on a NaN.

Each call runs up to ``trainer.steps_per_call`` steps and never crosses a checkpoint boundary, so
checkpoints land exactly every ``trainer.checkpoint_every`` steps (and at the end). Before each
checkpoint the tracker's queue is sent (or kept in the outbox) and the metrics journal written,
so a resumed run, which logs only the steps after its checkpoint, has no gap and no repeat.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import tensorflow as tf
from tqdm.auto import tqdm

from wgangp.config import TrainerConfig
from wgangp.errors import DataError, NonFiniteError
from wgangp.files import FileWriteError
from wgangp.step.train_step import METRICS, ChunkResult, TrainStep
from wgangp.synthesis.selection import StepSelector
from wgangp.tracking import names
from wgangp.training.averaging import GeneratorAverage
from wgangp.training.checkpoints import fresh_start_advice
from wgangp.training.forensics import investigate, write_forensics
from wgangp.training.history import MetricHistory
from wgangp.training.interrupts import Interrupted
from wgangp.training.refit import RefitRun
from wgangp.training.session import TrackedRun

log = logging.getLogger("wgangp.train")
#: How long a checkpoint waits for the points queued before it to reach the store (or the
#: outbox); only a store that stopped answering takes that long.
TRACKING_FLUSH_S = 60.0
# TensorFlow's checkpoint writer logs "Sharding callback duration" at INFO through absl.
logging.getLogger("absl").setLevel(logging.WARNING)


def recover_checkpoint_list(directory: Path) -> None:
    """Rebuild TensorFlow's list of checkpoints (the ``checkpoint`` file) from the ``ckpt-N``
    files present when it is unreadable: TensorFlow would ignore it and start from scratch."""
    if not (directory / "checkpoint").is_file():
        return
    try:
        state = tf.train.get_checkpoint_state(str(directory))
    except ValueError:
        state = None
    if state is not None and state.model_checkpoint_path:
        return
    steps = sorted(
        int(p.name[5:-6]) for p in directory.glob("ckpt-*.index") if p.name[5:-6].isdigit()
    )
    if not steps:
        return
    paths = [f"ckpt-{step}" for step in steps]
    times = [(directory / f"{p}.index").stat().st_mtime for p in paths]
    tf.compat.v1.train.update_checkpoint_state(
        str(directory),
        paths[-1],
        all_model_checkpoint_paths=paths,
        all_model_checkpoint_timestamps=times,  # without them the manager lists none
        last_preserved_timestamp=min(times) - 1.0,
    )
    log.warning(
        "the checkpoint list in %s was unreadable; rebuilt it from %s",
        directory, ", ".join(paths),
    )  # fmt: skip


@dataclass
class LoopOutcome:
    """Where the loop stopped and what it measured."""

    step: int  # generator steps completed, resumed ones included
    steps_done: int  # completed by this job
    elapsed_s: float
    final_metrics: dict[str, float]  # the last step's train/ metrics and the run/ summary
    nan_step: int | None = None  # set when on_nan=stop ended the run (raise has raised)
    nan_source: str | None = None

    def describe(self) -> str:
        metrics = self.final_metrics
        return (
            f"finished {self.steps_done} steps in {self.elapsed_s:.1f} s "
            f"({metrics[names.STEPS_PER_SEC]:.2f} steps/s); final critic "
            f"{metrics.get(names.CRITIC_LOSS, np.nan):.4f} generator "
            f"{metrics.get(names.metric(names.TRAIN, 'generator_loss'), np.nan):.4f} W "
            f"{metrics.get(names.WASSERSTEIN, np.nan):.4f}"
        )


class HostLoop:
    """Advances the compiled training step to ``trainer.steps`` for one tracked run."""

    def __init__(
        self,
        train_step: TrainStep,
        run: TrackedRun | RefitRun,
        tc: TrainerConfig,
        log_every: int,
        selector: StepSelector | None = None,
        average: GeneratorAverage | None = None,
    ) -> None:
        self.train_step = train_step
        self.selector = selector
        self.average = average
        self.run = run
        self.tc = tc
        self.tracker = run.tracker
        self.state = train_step.checkpoint()
        if average is not None:
            self.state.generator_average = average.model
        if tc.resume:
            recover_checkpoint_list(run.checkpoints.path)
        self.manager = tf.train.CheckpointManager(
            self.state, str(run.checkpoints.path), max_to_keep=tc.keep_checkpoints
        )
        self.history = MetricHistory(log_every)

    def train(self) -> LoopOutcome:
        """Train from the start (or the last checkpoint, resuming) to the configured step."""
        step = first_step = self.start()
        tc = self.tc
        bar = tqdm(total=tc.steps, initial=step, disable=not tc.progress, desc="train", unit="step")
        started = time.perf_counter()
        last: ChunkResult | None = None
        failed: ChunkResult | None = None
        interruption = self.run.interruption
        try:
            with interruption.deferred():  # a signal is handled between calls, below
                while step < tc.steps and not interruption.requested:
                    chunk = min(tc.steps_per_call, self._next_boundary(step) - step)
                    last = self.train_step.advance(chunk)
                    if self.average is not None:
                        self.average.update(last.start_step, last.completed)
                    for point_step, values in self.history.add(last.start_step, last.metrics):
                        self.tracker.log_metrics(values, point_step)
                    step = int(self.train_step.step.numpy())
                    bar.update(last.completed)
                    self._show(bar, last)
                    if self._must_stop(last):
                        failed = last
                        break
                    if self.selector and self.selector.due(step, tc.steps):
                        self.tracker.log_metrics(self.selector.probe_step(step), step)
                    if step % tc.checkpoint_every == 0 or step >= tc.steps:
                        self.checkpoint(step)
                if interruption.requested:
                    self.stop(step)
        finally:
            bar.close()
        outcome = self.finish(step, step - first_step, time.perf_counter() - started, last)
        if failed is not None:
            self.handle_nan(outcome, failed)
        return outcome

    def start(self) -> int:
        """Restore the latest checkpoint when resuming; else start with an empty journal."""
        run, train_step = self.run, self.train_step
        latest = self.restore_newest_intact() if self.tc.resume else None
        if latest is not None:
            restored = int(train_step.step.numpy())
            self.history.restore(run.checkpoints.history_path, restored)
            self.history.skip_through = self.tracker.last_logged_step()
            self.tracker.set_tags({"resumed.from_step": restored})
            if self.selector:
                self.selector.best.restore()
            log.info("resumed from %s at step %d", latest, restored)
        else:
            run.checkpoints.history_path.unlink(missing_ok=True)
            if self.selector:
                self.selector.best.forget()
        return int(train_step.step.numpy())

    def restore_newest_intact(self) -> str | None:
        """Restore the newest checkpoint that reads back whole; a damaged one (a truncated
        file, a torn write) is skipped with a warning and the one before it is used."""
        damaged = []
        for path in reversed(self.manager.checkpoints):
            try:
                self.state.restore(path).assert_existing_objects_matched()
            except Exception as err:  # TensorFlow's readers raise IndexError, OpError, ...
                first = (str(err).splitlines() or [type(err).__name__])[0][:160]
                log.warning("checkpoint %s is damaged (%s); trying the one before", path, first)
                damaged.append(Path(path).name)
                continue
            if damaged:
                self.tracker.set_tags({"resumed.skipped_damaged": ",".join(damaged)})
            return path
        if damaged:
            raise DataError(
                f"no intact checkpoint in {self.run.checkpoints.path} (damaged: "
                f"{', '.join(damaged)}); {fresh_start_advice(self.run.checkpoints.path)}"
            )
        return None

    def stop(self, step: int) -> None:
        """A signal asked the run to stop: keep a checkpoint at ``step`` and say so."""
        interruption = self.run.interruption
        interruption.acknowledge()
        if self.run.record.step != step or not self.manager.latest_checkpoint:
            self.checkpoint(step)
        log.info("interrupted: checkpoint at step %d", step)
        assert interruption.signum is not None  # stop() follows a signal
        raise Interrupted("interrupted", interruption.signum)

    def checkpoint(self, step: int) -> str:
        """Save the weights at ``step``, after the points logged so far and the metrics journal.

        A resumed run logs only the steps after its checkpoint, so a point still queued when
        the process is killed would be lost for good if the checkpoint could get ahead of it.
        """
        if not self.tracker.flush(TRACKING_FLUSH_S):
            log.warning(
                "MLflow calls still queued after %.0f s at the checkpoint of step %d; if the run "
                "dies before they are sent, its curves miss them",
                TRACKING_FLUSH_S, step,
            )  # fmt: skip
        self.history.persist(self.run.checkpoints.history_path)
        if self.selector:
            self.selector.best.persist()
        path = self.save_checkpoint(step)
        self.run.record.step = step
        self.run.checkpoints.write_record(self.run.record)
        return path

    def save_checkpoint(self, step: int) -> str:
        """``manager.save``; a full disk or a read-only folder is one line naming what is kept
        (TensorFlow writes under temporary names and renames, so earlier checkpoints stay)."""
        try:
            return self.manager.save(checkpoint_number=step)
        except (tf.errors.OpError, OSError) as err:
            folder = self.run.checkpoints.path
            for leftover in folder.glob(f"ckpt-{step}[._]*"):
                with contextlib.suppress(OSError):
                    shutil.rmtree(leftover) if leftover.is_dir() else leftover.unlink()
            kept = self.manager.latest_checkpoint
            what = (
                f"{Path(kept).name} is kept; free space or set trainer.checkpoint_dir=..., then "
                "rerun with trainer.resume=true"
                if kept
                else "no earlier checkpoint exists; free space or set trainer.checkpoint_dir=..."
            )
            reason = getattr(err, "message", None) or getattr(err, "strerror", None) or str(err)
            if "No space left" in str(reason) or getattr(err, "errno", None) == errno.ENOSPC:
                reason = "no space left on the device"
            raise FileWriteError(
                f"cannot write the checkpoint of step {step} in {folder} "
                f"({str(reason).splitlines()[0][:160]}); {what}"
            ) from None

    def finish(
        self, step: int, steps_done: int, elapsed: float, last: ChunkResult | None
    ) -> LoopOutcome:
        """Log the last partial window, the curves (CSV and plot) and the run's summary."""
        output_dir, history = self.run.dirs.output, self.history
        point = history.flush()
        if point is not None:
            self.tracker.log_metrics(point[1], point[0])
        if len(history.rows):
            history.save_csv(output_dir / "metrics.csv")
            history.plot(output_dir / "loss_curves.png")
            self.tracker.log_artifact(output_dir / "metrics.csv")
            self.tracker.log_artifact(output_dir / "loss_curves.png")
        summary = {
            "wall_time_s": elapsed,
            "steps_per_sec": steps_done / elapsed if elapsed > 0 else 0.0,
            "skipped_updates": float(last.skipped if last else 0),
            "loss_scale_skips": float(last.scale_skips if last else 0),
        }
        if self.selector:
            summary["quality_s"] = self.selector.seconds
        if (
            self.tc.precision == "mixed_float16"
            and last is not None
            and last.loss_scale is not None
        ):
            summary["loss_scale"] = float(last.loss_scale)
        summary = names.in_section(names.RUN, summary)
        self.tracker.log_metrics(summary, step)
        final = dict(zip(METRICS, history.rows[-1].tolist(), strict=True)) if history.rows else {}
        final = names.in_section(names.TRAIN, final)
        return LoopOutcome(step, steps_done, elapsed, {**final, **summary})

    def handle_nan(self, outcome: LoopOutcome, failed: ChunkResult) -> None:
        """Record the first non-finite quantity and keep the last good weights; then raise
        (``on_nan=raise``) or mark ``outcome`` as stopped (``on_nan=stop``)."""
        step, source = failed.bad_step, failed.bad_source
        good = self.save_checkpoint(outcome.step)  # the guard kept good weights
        report = investigate(self.train_step, step, source)
        report.update(
            {
                "last_good_checkpoint": good,
                "policy": self.tc.on_nan,
                "steps_completed": outcome.step,
            }
        )
        path = write_forensics(report, self.run.dirs.output / "nan_forensics.json")
        self.tracker.set_tags({"nan.step": step, "nan.source": source or "unknown"})
        self.tracker.log_metrics({names.NAN_STEP: float(step)}, outcome.step)
        self.tracker.log_artifact(path)
        message = (
            f"non-finite {source} at generator step {step}; weights kept from step "
            f"{outcome.step} in {good}; forensics in {path}; {report['advice']}"
        )
        if self.train_step.nan_policy.fails_run:
            raise NonFiniteError(message)
        log.error("stopped: %s", message)
        self.tracker.set_tags({"failure.reason": "nan", "failure.message": message})
        outcome.nan_step, outcome.nan_source = step, source

    def _next_boundary(self, step: int) -> int:
        """The next step a call must stop at: a checkpoint, a quality probe or the end."""
        tc = self.tc
        boundary = min(tc.steps, (step // tc.checkpoint_every + 1) * tc.checkpoint_every)
        if self.selector:
            boundary = min(boundary, self.selector.next_boundary(step))
        return boundary

    def _must_stop(self, result: ChunkResult) -> bool:
        """A non-finite update under raise/stop, or too many skipped in a row under skip."""
        return self.train_step.nan_policy.ends_training(result.bad_step, result.consecutive_skips)

    @staticmethod
    def _show(bar: tqdm, result: ChunkResult) -> None:
        last = result.last()
        if last is not None:
            bar.set_postfix(
                critic=f"{last.critic_loss:.3f}",
                gen=f"{last.generator_loss:.3f}",
                w=f"{last.wasserstein_estimate:.3f}",
                refresh=False,
            )
