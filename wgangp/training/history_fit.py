"""One fit of a history model: the encoding fitted on the training windows, the training step, the
generator weight average, the step selection on the validation entities, the host loop (the row
model's: logging, checkpoints, resume, signals, NaN forensics) to ``trainer.steps``."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import keras

from wgangp.config import Config
from wgangp.data.histories.encoding import HistoryEncoding
from wgangp.data.histories.prepare import HistoryData
from wgangp.serving.histories import HistorySynthesizer
from wgangp.step.history_step import HistoryStep
from wgangp.synthesis.history_export import assemble_histories
from wgangp.synthesis.history_selection import history_selector
from wgangp.synthesis.selection import StepSelector
from wgangp.training.averaging import GeneratorAverage
from wgangp.training.loop import HostLoop, LoopOutcome
from wgangp.training.session import TrackedRun

log = logging.getLogger("wgangp.train")


@dataclass
class HistoryFit:
    """The generator a user gets (its weights the selected step's once selection kept one), what
    ships around it, the step selection and how the loop ended."""

    generator: keras.Model
    synthesizer: HistorySynthesizer
    selector: StepSelector | None
    outcome: LoopOutcome


def fit_histories(cfg: Config, data: HistoryData, run: TrackedRun) -> HistoryFit:
    """Encode the training windows, train to ``trainer.steps`` logging through ``run``."""
    windows = data.windows("train", cfg.history.max_length)
    encoding = HistoryEncoding.fit(windows, data.roles, data.rows.schema, cfg)
    arrays = encoding.arrays(windows)
    log.info(
        "histories: %d training windows of at most %d rows (%d with a rare-class row); attribute "
        "width %d, record width %d",
        windows.count, cfg.history.max_length, int(windows.classes.sum()),
        encoding.attribute_width, encoding.record_width,
    )  # fmt: skip
    step = HistoryStep(cfg, encoding, arrays)
    del arrays
    run.tracker.set_tags({"strategy": "none", "replicas": 1, "history.windows": windows.count})
    decay = cfg.trainer.ema_decay
    average = GeneratorAverage(step.generator, decay) if decay > 0 else None
    generator = average.model if average else step.generator
    synthesizer = assemble_histories(generator, encoding, data, windows, cfg)
    selector = history_selector(generator, synthesizer, data, run.checkpoints.path, cfg)
    loop = HostLoop(step, run, cfg.trainer, cfg.tracking.log_every, selector, average)
    return HistoryFit(generator, synthesizer, selector, loop.train())
