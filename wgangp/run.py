"""One training run from a config: the orchestration behind ``wgangp.train.train``."""

from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np
from omegaconf import DictConfig, OmegaConf

from wgangp.config import Config, flatten, to_config
from wgangp.data.prepare import PreparedData, check_batch_fits, prepare_data
from wgangp.errors import NonFiniteError, WgangpError
from wgangp.resume import (
    INTERRUPTED,
    CheckpointDir,
    RunRecord,
    config_key,
    open_checkpoint_dir,
)
from wgangp.tracking.outbox import OUTBOX_FILE
from wgangp.tracking.secrets import redact, scrub_secrets
from wgangp.tracking.store import open_tracking_uri
from wgangp.tracking.tracker import Tracker

log = logging.getLogger("wgangp.train")
# TensorFlow's checkpoint writer logs "Sharding callback duration" at INFO through absl.
logging.getLogger("absl").setLevel(logging.WARNING)


@dataclass
class TrainResult:
    run_id: str | None
    output_dir: Path
    steps_completed: int
    status: str  # FINISHED | FAILED
    final_metrics: dict[str, float] = field(default_factory=dict)
    synthesizer_dir: Path | None = None
    nan_step: int | None = None
    nan_source: str | None = None


def _hydra_dirs() -> tuple[Path | None, Path | None, Path | None]:
    """(output dir, launch dir, .hydra dir) when running under Hydra."""
    from hydra.core.hydra_config import HydraConfig

    if not HydraConfig.initialized():
        return None, None, None
    hc = HydraConfig.get()
    out = Path(hc.runtime.output_dir)
    return out, Path(hc.runtime.cwd), out / hc.output_subdir if hc.output_subdir else None


def run_training(
    cfg_in: DictConfig | Config, *, output_dir: Path | None = None, launch_dir: Path | None = None
) -> TrainResult:
    cfg = to_config(cfg_in)
    hydra_out, hydra_launch, hydra_meta = _hydra_dirs()
    launch_dir = Path(launch_dir or hydra_launch or Path.cwd()).resolve()
    if output_dir is None:
        output_dir = hydra_out or launch_dir / "outputs" / datetime.now().strftime(
            "%Y-%m-%d/%H-%M-%S-%f"
        )
    output_dir = Path(output_dir).resolve()
    _check_writable(output_dir)

    tracker = Tracker(
        None, cfg.tracking.experiment, enabled=cfg.tracking.enabled, outbox=output_dir / OUTBOX_FILE
    )
    if cfg.tracking.enabled:
        tracker.uri = open_tracking_uri(
            cfg.tracking.uri, launch_dir, output_dir, required=cfg.tracking.required
        )
        log.info("MLflow tracking URI: %s (experiment %s)", redact(tracker.uri), tracker.experiment)

    checkpoints, previous = open_checkpoint_dir(cfg, launch_dir)
    record = RunRecord(
        tracking_uri=redact(tracker.uri) if tracker.uri else None,
        experiment=tracker.experiment,
        output_dir=str(output_dir),
        config_key=config_key(cfg),
    )
    status = "FAILED"
    nan_failure = False
    try:
        from wgangp.runtime import environment_tags, git_commit

        resume_run_id = _run_to_continue(previous, record)
        tags = {
            "experiment": cfg.name,
            "git.commit": git_commit(Path(__file__).resolve().parent),
            "checkpoint.dir": str(checkpoints.path),
            "output.dir": str(output_dir),
            **environment_tags(),
        }
        tracker.start(cfg.tracking.run_name or cfg.name, tags, run_id=resume_run_id)
        record.run_id = tracker.run_id
        if previous is not None:
            record.step = previous.step
        checkpoints.write_record(record)
        if tracker.run_id:
            log.info("MLflow run %s; checkpoints in %s", tracker.run_id, checkpoints.path)
        try:
            data = prepare_data(cfg.data, seed=cfg.seed, launch_dir=launch_dir)
            log.info("data: %s", data.describe())
            check_batch_fits(data, cfg.trainer.batch_size)
            tracker.set_tags({"data.source": data.source, "data.origin": data.origin})
            result = _train_tracked(
                cfg, data, tracker, output_dir, hydra_meta, checkpoints, record,
                log_params=resume_run_id is None,
            )  # fmt: skip
            status = result.status
            nan_failure = result.nan_step is not None
            return result
        except BaseException as err:
            reason = err.reason if isinstance(err, WgangpError) else type(err).__name__
            if isinstance(err, WgangpError):
                log.debug("run failed", exc_info=True)
            tracker.set_tags({"failure.reason": reason, "failure.message": str(err)[:4000]})
            if isinstance(err, KeyboardInterrupt):
                status = "KILLED"
            nan_failure = isinstance(err, NonFiniteError)
            raise
    finally:
        try:
            tracker.end(status)
        except Exception:
            log.warning("could not close MLflow run %s as %s", tracker.run_id, status)
        record.status = status
        if status == "FAILED" and not nan_failure and previous and previous.status in INTERRUPTED:
            record.status = previous.status  # a failed relaunch leaves the run resumable
        with contextlib.suppress(OSError):
            checkpoints.write_record(record)
        if previous is None and status != "FINISHED":
            checkpoints.discard_if_unused()  # a job that failed early leaves no empty dir
        checkpoints.release()


def _check_writable(output_dir: Path) -> None:
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
        probe = output_dir / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as err:
        raise WgangpError(
            f"output directory {output_dir} is not writable ({err.strerror}); "
            "run from a writable directory or set hydra.run.dir=..."
        ) from None


def _run_to_continue(previous: RunRecord | None, record: RunRecord) -> str | None:
    """The MLflow run a resumed job logs into: the recorded one, if it is in the same store."""
    if previous is None or not previous.run_id or record.tracking_uri is None:
        return None
    if previous.tracking_uri != record.tracking_uri:
        log.warning(
            "resuming, but the run was tracked in %s and this job tracks to %s: starting a new "
            "MLflow run", previous.tracking_uri, record.tracking_uri,
        )  # fmt: skip
        return None
    return previous.run_id


def _train_tracked(
    cfg: Config,
    data: PreparedData,
    tracker: Tracker,
    output_dir: Path,
    hydra_meta: Path | None,
    checkpoints: CheckpointDir,
    record: RunRecord,
    log_params: bool = True,
) -> TrainResult:
    import tensorflow as tf
    from tqdm.auto import tqdm

    from wgangp.data.schema import LABEL
    from wgangp.data.transform import TabularTransformer
    from wgangp.distributed import make_trainer
    from wgangp.forensics import investigate, write_forensics
    from wgangp.history import MetricHistory
    from wgangp.runtime import training_runtime
    from wgangp.sampler import ClassBalancedSampler
    from wgangp.serving.bundle import BUNDLE
    from wgangp.serving.pyfunc import model_spec
    from wgangp.serving.synthesizer import Synthesizer

    resolved = OmegaConf.structured(cfg)
    (output_dir / "config_resolved.yaml").write_text(redact(OmegaConf.to_yaml(resolved)))
    if log_params:  # a resumed run keeps the params of its first launch
        tracker.log_params(flatten(cfg))
    tracker.log_artifact(output_dir / "config_resolved.yaml", "config")
    if hydra_meta is not None and hydra_meta.is_dir():
        scrub_secrets(hydra_meta)  # Hydra wrote the overrides as typed, passwords included
        tracker.log_artifact(hydra_meta, "config/hydra")

    tc = cfg.trainer
    with training_runtime(tc, cfg.seed) as device:
        tracker.set_tags({"device": device})
        transformer = TabularTransformer(
            scaling=cfg.preprocess.scaling, log_amount=cfg.preprocess.log_amount
        ).fit(data.train)
        x_train = transformer.transform(data.train)
        fraud_share = 0.5 if tc.label_sampling == "balanced" else None
        sampler = ClassBalancedSampler(x_train, data.train[LABEL].to_numpy(), fraud_share)
        trainer = make_trainer(cfg, sampler)
        replicas = str(getattr(trainer, "replicas", 1))
        tracker.set_tags({"strategy": tc.strategy, "replicas": replicas})

        manager = tf.train.CheckpointManager(
            trainer.checkpoint(), str(checkpoints.path), max_to_keep=tc.keep_checkpoints
        )
        history = MetricHistory(cfg.tracking.log_every)
        if tc.resume and manager.latest_checkpoint:
            trainer.checkpoint().restore(
                manager.latest_checkpoint
            ).assert_existing_objects_matched()
            restored = int(trainer.step.numpy())
            history.restore(checkpoints.history_path, restored)
            history.skip_through = tracker.last_logged_step()
            tracker.set_tags({"resumed.from_step": restored})
            log.info("resumed from %s at step %d", manager.latest_checkpoint, restored)
        else:
            checkpoints.history_path.unlink(missing_ok=True)

        step = int(trainer.step.numpy())
        bar = tqdm(total=tc.steps, initial=step, disable=not tc.progress, desc="train", unit="step")
        started = time.perf_counter()
        first_step = step
        nan_step: int | None = None
        nan_source: str | None = None
        last = None
        try:
            while step < tc.steps:
                boundary = (step // tc.checkpoint_every + 1) * tc.checkpoint_every
                chunk = min(tc.steps_per_call, tc.steps - step, boundary - step)
                last = trainer.run(chunk)
                for point_step, values in history.add(last.start_step, last.metrics):
                    tracker.log_metrics(values, point_step)
                step = int(trainer.step.numpy())
                bar.update(last.completed)
                if len(last.metrics):
                    row = last.metrics[-1]
                    bar.set_postfix(
                        critic=f"{row[0]:.3f}",
                        gen=f"{row[1]:.3f}",
                        w=f"{row[3]:.3f}",
                        refresh=False,
                    )
                if last.bad_step >= 0 and (
                    tc.on_nan != "skip" or last.consecutive_skips >= tc.max_consecutive_skips
                ):
                    nan_step, nan_source = last.bad_step, last.bad_source
                    break
                if step % tc.checkpoint_every == 0 or step >= tc.steps:
                    history.persist(checkpoints.history_path)  # rows first: no gap on resume
                    manager.save(checkpoint_number=step)
                    record.step = step
                    checkpoints.write_record(record)
        finally:
            bar.close()
        elapsed = time.perf_counter() - started
        point = history.flush()
        if point is not None:
            tracker.log_metrics(point[1], point[0])
        if len(history.rows):
            history.save_csv(output_dir / "metrics.csv")
            history.plot(output_dir / "loss_curves.png")
            tracker.log_artifact(output_dir / "metrics.csv")
            tracker.log_artifact(output_dir / "loss_curves.png")
        steps_done = step - first_step
        summary = {
            "train.wall_time_s": elapsed,
            "train.steps_per_sec": steps_done / elapsed if elapsed > 0 else 0.0,
            "train.skipped_updates": float(last.skipped if last else 0),
            "train.loss_scale_skips": float(last.scale_skips if last else 0),
        }
        if tc.precision == "mixed_float16" and last is not None:
            summary["train.loss_scale"] = float(last.loss_scale)
        tracker.log_metrics(summary, step)
        final = (
            dict(zip(_metric_names(), history.rows[-1].tolist(), strict=True))
            if history.rows
            else {}
        )
        final.update(summary)

        if nan_step is not None:
            return _handle_nan(
                cfg, trainer, manager, tracker, output_dir, nan_step, nan_source, step, final,
                investigate, write_forensics,
            )  # fmt: skip

        synthesizer = Synthesizer(trainer.generator, transformer, cfg.model.latent_dim)
        synth_dir = synthesizer.save(output_dir / BUNDLE)
        if cfg.tracking.log_model and tracker.run_id:
            tracker.log_artifact(synth_dir, BUNDLE)
            tracker.log_model(model_spec(synth_dir))  # queued after the bundle; tags model.uri
        if tc.sample_rows:
            samples = synthesizer.sample(tc.sample_rows, label=1, seed=cfg.seed)
            samples.to_csv(output_dir / "fraud_samples.csv", index=False)
            tracker.log_artifact(output_dir / "fraud_samples.csv")
        if cfg.evaluate.enabled:
            final.update(_evaluate(cfg, data, synthesizer, tracker, output_dir, step))
        log.info(
            "finished %d steps in %.1f s (%.2f steps/s); final critic %.4f generator %.4f W %.4f; "
            "outputs in %s",
            steps_done, elapsed, summary["train.steps_per_sec"], final.get("critic_loss", np.nan),
            final.get("generator_loss", np.nan), final.get("wasserstein_estimate", np.nan),
            output_dir,
        )  # fmt: skip
        return TrainResult(
            run_id=tracker.run_id,
            output_dir=output_dir,
            steps_completed=step,
            status="FINISHED",
            final_metrics=final,
            synthesizer_dir=synth_dir,
        )


def _metric_names() -> tuple[str, ...]:
    from wgangp.trainer import METRICS

    return METRICS


def _handle_nan(
    cfg, trainer, manager, tracker, output_dir, nan_step, nan_source, step, final, investigate,
    write_forensics,
) -> TrainResult:  # fmt: skip
    """Record the first non-finite quantity; keep the last good weights; raise or stop."""
    good = manager.save(checkpoint_number=step)  # weights are the last good ones: never overwritten
    report = investigate(trainer, nan_step, nan_source)
    report.update(
        {"last_good_checkpoint": good, "policy": cfg.trainer.on_nan, "steps_completed": step}
    )
    path = write_forensics(report, output_dir / "nan_forensics.json")
    tracker.set_tags({"nan.step": nan_step, "nan.source": nan_source or "unknown"})
    tracker.log_metrics({"nan.step": float(nan_step)}, step)
    tracker.log_artifact(path)
    message = (
        f"non-finite {nan_source} at generator step {nan_step}; weights kept from step {step} "
        f"in {good}; forensics in {path}; use the default gp.norm=safe_sqrt with gp.dtype=float32"
    )
    if cfg.trainer.on_nan == "stop":
        log.error("stopped: %s", message)
        tracker.set_tags({"failure.reason": "nan", "failure.message": message})
        return TrainResult(
            run_id=tracker.run_id,
            output_dir=output_dir,
            steps_completed=step,
            status="FAILED",
            final_metrics=final,
            nan_step=nan_step,
            nan_source=nan_source,
        )
    raise NonFiniteError(message)


def _evaluate(cfg, data, synthesizer, tracker, output_dir, step) -> dict[str, float]:
    from wgangp.evaluation.run import run_evaluation

    started = time.perf_counter()
    result = run_evaluation(
        data.train,
        data.test,
        lambda n, seed: synthesizer.sample(n, label=1, seed=seed),
        cfg.evaluate,
        seed=cfg.seed,
    )
    eval_dir = output_dir / "evaluation"
    result.write(eval_dir)
    tracker.log_metrics(result.metrics, step)
    tracker.log_artifact(eval_dir, "evaluation")
    log.info("evaluation took %.1f s", time.perf_counter() - started)
    return dict(result.metrics)
