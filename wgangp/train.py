"""``python -m wgangp.train``: a thin Hydra entry over :func:`train`, which tests call directly.

User errors end as one line on stderr and a non-zero exit; see docs/errors.md.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import hydra
from omegaconf import DictConfig

from wgangp.cli import quiet_tensorflow
from wgangp.config import CONF_DIR, Config, register_configs, to_config
from wgangp.errors import WgangpError, report_error
from wgangp.overrides import check_no_credentials, check_output_dir, check_overrides
from wgangp.tracking import names
from wgangp.tracking.quiet import quiet_mlflow
from wgangp.training.interrupts import Interrupted
from wgangp.training.sweep_outcomes import SweepFailed, close_ledger, open_ledger, record_job

if TYPE_CHECKING:
    import pandas as pd

    from wgangp.training.loop import LoopOutcome
    from wgangp.training.session import TrackedRun, TrainResult

log = logging.getLogger("wgangp.train")
register_configs()
#: The final metric a Hydra sweep minimizes: the score the run selected its step by.
SELECTION_SCORE = names.SELECTION_SCORE


def train(
    cfg: DictConfig | Config,
    *,
    output_dir: Path | None = None,
    launch_dir: Path | None = None,
    frame: pd.DataFrame | None = None,
    embedded: bool = False,
) -> TrainResult:
    """Train a conditional WGAN-GP as configured; returns the run's id, outputs and metrics.

    ``output_dir`` defaults to Hydra's run directory (or a fresh ``outputs/`` folder outside Hydra);
    ``launch_dir``, against which relative paths resolve, to the user's directory; ``frame``: a
    DataFrame given in Python (:func:`wgangp.fit`) instead of ``data.path``; ``embedded``: called
    from Python, where a signal ends the run and never the process. Data flows one
    way, for every table: load -> schema -> validate -> split -> (``privacy.epsilon``: release the
    schema, the transform and the counts under the budget) -> fit the transform on the training
    split -> train -> select a step -> (``trainer.refit``: train again on training + validation rows
    for that many steps) -> assemble what ships (calibrated marginals; ``ship.copula_share``, a
    copula's share of rows) -> export it -> evaluate it on the test split, all logged to one MLflow
    run.
    """
    cfg = to_config(cfg)  # a bad value fails here, in one line, before any import below
    if cfg.data.time is not None:  # customers over time: a history model (docs/histories.md)
        return train_histories(cfg, output_dir, launch_dir, frame, embedded)
    # TensorFlow takes seconds to import: main() has checked the command line by now.
    from wgangp.data.prepare import check_batch_fits, prepare_data
    from wgangp.files import write_text
    from wgangp.privacy.randomness import noise_source
    from wgangp.synthesis.assemble import assemble
    from wgangp.synthesis.export import export
    from wgangp.synthesis.held_out import evaluate_on_test
    from wgangp.synthesis.selection import keep_selected
    from wgangp.tracking.note import headline
    from wgangp.training.fit import fit_networks, refit_networks
    from wgangp.training.phases import PHASES_FILE, PhaseClock
    from wgangp.training.private_fit import private_reading, release
    from wgangp.training.refit import refit_metrics
    from wgangp.training.run_dirs import RunDirs
    from wgangp.training.run_record import trained_on
    from wgangp.training.runtime import training_runtime
    from wgangp.training.session import TrackedRun

    clock = PhaseClock()
    with TrackedRun(cfg, RunDirs.resolve(output_dir, launch_dir), embedded) as run:
        # privacy.epsilon: every DP draw from a secret key, never the seed.
        noise = noise_source() if cfg.privacy.enabled else None
        with clock.phase("read"):
            data = prepare_data(
                cfg.data,
                seed=cfg.seed,
                launch_dir=run.dirs.launch,
                frame=frame,
                reading=private_reading(cfg, noise),
            )
        log.info("data: %s", data.describe())
        check_batch_fits(data, cfg.trainer.batch_size)
        released = None
        if noise is not None:  # from here on the schema is the released one
            with clock.phase("release"):
                released = release(cfg, data, noise)
            data = released.data
        run.log_data(data)
        run.log_config()
        tracker, output = run.tracker, run.dirs.output
        with training_runtime(cfg.trainer, cfg.seed) as runtime:
            tracker.set_tags({"device": runtime.device, "precision.resolved": runtime.precision})
            # From here on the trainer sees the precision in force, never "auto".
            cfg = replace(cfg, trainer=replace(cfg.trainer, precision=runtime.precision))
            with clock.phase("train"):
                fit = fit_networks(cfg, data, run, run, released)
            outcome = fit.outcome
            if outcome.nan_step is not None:  # on_nan=stop: recorded, the run ends FAILED
                return _stopped(run, outcome)
            with clock.phase("select"):
                selection = keep_selected(fit.selector, tracker, outcome.step)
            if selection is not None:
                outcome.final_metrics[SELECTION_SCORE] = selection.score
            refit = None
            if cfg.trainer.refit:
                steps = selection.step if selection else outcome.step
                with clock.phase("refit"):
                    data, fit = refit_networks(cfg, data, run, steps)
                if fit.outcome.nan_step is not None:
                    return _stopped(run, fit.outcome, fit_steps=outcome.step)
                outcome.final_metrics.update(refit_metrics(fit.outcome.final_metrics))
                refit = trained_on(data, fit.outcome.step)
            with clock.phase("assemble"):
                synthesizer = assemble(
                    fit.generator,
                    fit.transformer,
                    cfg.model.latent_dim,
                    data.schema,
                    data.fit_rows.train,
                    cfg.ship,
                    cfg.seed,
                    entities=released.entities if released else data.entities(data.fit_rows.train),
                    dp=released.statistics if released else None,
                )
            if released is not None:
                synthesizer = replace(synthesizer, privacy=released.summary())
                tracker.log_params(released.plan.params())
                tracker.log_metrics(released.plan.metrics(), outcome.step)
                outcome.final_metrics.update(released.plan.metrics())
            with clock.phase("export"):
                bundle = export(synthesizer, output, tracker, cfg, selection)
            evaluation_names: set[str] = set()
            if cfg.evaluate.enabled:
                with clock.phase("evaluate"):
                    evaluation = evaluate_on_test(
                        synthesizer,
                        data,
                        output,
                        run.records,
                        cfg.evaluate,
                        seed=cfg.seed,
                        step=outcome.step,
                    )
                outcome.final_metrics.update(evaluation)
                evaluation_names = set(evaluation)
        log.info("phases: %s", clock.describe())
        run.records.log_metrics(clock.metrics(), outcome.step)
        write_text(output / PHASES_FILE, clock.to_json())
        step, score = (selection.step, selection.score) if selection else (None, None)
        figures = outcome.final_metrics
        if released is not None:  # the held-out figures read rows: the team report's alone
            shared = {k: v for k, v in figures.items() if k not in evaluation_names}
            run.describe_end(
                outcome.step, headline(step, score, shared), refit, headline(step, score, figures)
            )
        else:
            run.describe_end(outcome.step, headline(step, score, figures), refit)
        log.info("%s; outputs in %s", outcome.describe(), output)
        return run.result("FINISHED", outcome.step, outcome.final_metrics, synthesizer_dir=bundle)


def train_histories(
    cfg: Config,
    output_dir: Path | None = None,
    launch_dir: Path | None = None,
    frame: pd.DataFrame | None = None,
    embedded: bool = False,
) -> TrainResult:
    """``data.time``: train a history model; its flow, for every table: load (every entity with a
    rare-class row, at most ``data.max_entities`` others) -> shared ids aside -> schema ->
    validate -> split by entity -> windows -> fit the encoding on the training windows -> train
    the sequence WGAN-GP, scoring on the validation entities -> select a step -> assemble (the
    pseudonyms) -> export -> evaluate on the test entities, all logged to one MLflow run."""
    from wgangp.data.histories.prepare import prepare_histories
    from wgangp.files import write_text
    from wgangp.synthesis.history_export import export_histories
    from wgangp.synthesis.history_selection import evaluate_histories
    from wgangp.synthesis.selection import keep_selected
    from wgangp.tracking.note import headline
    from wgangp.training.history_fit import fit_histories
    from wgangp.training.phases import PHASES_FILE, PhaseClock
    from wgangp.training.run_dirs import RunDirs
    from wgangp.training.runtime import training_runtime
    from wgangp.training.session import TrackedRun

    clock = PhaseClock()
    with TrackedRun(cfg, RunDirs.resolve(output_dir, launch_dir), embedded) as run:
        with clock.phase("read"):
            data = prepare_histories(
                cfg.data, seed=cfg.seed, launch_dir=run.dirs.launch, frame=frame
            )
        log.info("data: %s", data.describe())
        run.log_data(data.rows)
        run.log_config()
        tracker, output = run.tracker, run.dirs.output
        with training_runtime(cfg.trainer, cfg.seed) as runtime:
            tracker.set_tags({"device": runtime.device, "precision.resolved": runtime.precision})
            with clock.phase("train"):
                fit = fit_histories(cfg, data, run)
            outcome = fit.outcome
            if outcome.nan_step is not None:  # on_nan=stop: recorded, the run ends FAILED
                return _stopped(run, outcome)
            with clock.phase("select"):
                selection = keep_selected(fit.selector, tracker, outcome.step)
            if selection is not None:
                outcome.final_metrics[SELECTION_SCORE] = selection.score
            with clock.phase("export"):
                bundle = export_histories(fit.synthesizer, output, tracker, cfg, selection)
            if cfg.evaluate.enabled:
                with clock.phase("evaluate"):
                    evaluation = evaluate_histories(
                        fit.synthesizer, data, output, tracker, cfg, outcome.step
                    )
                outcome.final_metrics.update(evaluation)
        log.info("phases: %s", clock.describe())
        tracker.log_metrics(clock.metrics(), outcome.step)
        write_text(output / PHASES_FILE, clock.to_json())
        step, score = (selection.step, selection.score) if selection else (None, None)
        run.describe_end(outcome.step, headline(step, score, outcome.final_metrics))
        log.info("%s; outputs in %s", outcome.describe(), output)
        return run.result("FINISHED", outcome.step, outcome.final_metrics, synthesizer_dir=bundle)


def _stopped(run: TrackedRun, outcome: LoopOutcome, fit_steps: int | None = None) -> TrainResult:
    """on_nan=stop ended a fit (the refit, when ``fit_steps`` gives the first fit's steps): the
    run ends FAILED, with where and what."""
    fit = "the refit" if fit_steps is not None else "training"
    stopped = (
        f"**Stopped** {fit} (trainer.on_nan=stop): non-finite {outcome.nan_source or 'value'} "
        f"at step {outcome.nan_step}."
    )
    run.describe_end(outcome.step if fit_steps is None else fit_steps, stopped)
    return run.result(
        "FAILED", outcome.step, outcome.final_metrics,
        nan_step=outcome.nan_step, nan_source=outcome.nan_source,
    )  # fmt: skip


def _scrub_job_files() -> None:
    """Hydra wrote the overrides as typed before the job started: a job that failed before its
    run opened (a bad value) leaves them redacted too, as every run does when it opens."""
    from wgangp.training.run_dirs import RunDirs

    with contextlib.suppress(WgangpError):
        RunDirs.resolve(None, None).scrub()


@hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name="config")
def _hydra_entry(cfg: DictConfig) -> float | None:
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    hydra_cfg = HydraConfig.get()
    sweeping = hydra_cfg.mode == RunMode.MULTIRUN
    job = (str(hydra_cfg.job.num), list(hydra_cfg.overrides.task)) if sweeping else ("", [])
    try:
        result = train(cfg)
    except WgangpError as err:
        _scrub_job_files()
        report_error(err, debug=bool(cfg.get("debug", False)))
        if sweeping and not isinstance(err, Interrupted):
            record_job(*job, failure=str(err))
            return None  # one job's failure is recorded in MLflow; the sweep goes on
        sys.exit(err.exit_code)  # a signal stops the whole sweep, not just this job
    except Exception as err:
        if not sweeping:
            raise
        log.exception("sweep job %s crashed (a bug: please report the traceback)", job[0])
        record_job(*job, failure=f"{type(err).__name__}: {err}")
        return None
    if sweeping:  # trainer.on_nan=stop ended FAILED by choice: a measured outcome, no error
        record_job(*job, failure=None)
    # A sweep's objective: the selected step's validation score, lower is better (None when the
    # run selects no step: select.every=0 or too few validation rows).
    return result.final_metrics.get(SELECTION_SCORE)


def main() -> None:
    """Console entry: check override keys against the schema first (one clear line), then run."""
    quiet_tensorflow()  # before anything imports TensorFlow
    quiet_mlflow()
    try:
        check_no_credentials(sys.argv[1:])
        check_overrides(sys.argv[1:])
        check_output_dir(sys.argv[1:])
    except WgangpError as err:
        report_error(err)
        sys.exit(err.exit_code)
    ledger = open_ledger()
    try:
        _hydra_entry()
        close_ledger(ledger)
    except SweepFailed as err:
        report_error(err)
        sys.exit(err.exit_code)
    finally:
        ledger.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
