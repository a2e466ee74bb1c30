"""The export: save what ships as the bundle, log it and its pyfunc model (registered with
``tracking.register_as``), write ``trainer.sample_rows`` sampled rows of the rare class."""

from __future__ import annotations

import logging
from pathlib import Path

from wgangp.config import Config
from wgangp.data.schema.table_schema import RARE, REST
from wgangp.files import write_with
from wgangp.serving.bundle import BUNDLE
from wgangp.serving.pyfunc import model_spec
from wgangp.serving.synthesizer import Synthesizer
from wgangp.synthesis.selection import Selection
from wgangp.tracking.tracker import Tracker

log = logging.getLogger("wgangp.train")

#: Rows of each class drawn before anything is saved, to refuse a generator that puts out NaN.
PROBE_ROWS = 64
#: The sampled rare-class rows written beside the bundle.
SAMPLES_FILE = "samples.csv"


def export(
    synthesizer: Synthesizer,
    output_dir: Path,
    tracker: Tracker,
    cfg: Config,
    selection: Selection | None,
) -> Path:
    """Save and log the bundle; the bundle's directory.

    Both classes are drawn first: a generator whose rows are not finite fails the run here
    (``Synthesizer.generate`` refuses them) before a broken model is saved, logged or served.
    The rest is drawn in the networks' space only: a label of more than two values has no one
    value to sample it as.
    """
    _tag_what_ships(synthesizer, tracker)
    synthesizer.generate(PROBE_ROWS, klass=REST, seed=cfg.seed)
    rare = synthesizer.sample_class(max(cfg.trainer.sample_rows, PROBE_ROWS), RARE, seed=cfg.seed)
    bundle = synthesizer.save(output_dir / BUNDLE)
    if cfg.tracking.log_model and tracker.run_id:
        tracker.log_artifact(bundle, BUNDLE)
        tracker.log_model(model_spec(bundle))  # queued after the bundle; tags model.uri
        if cfg.tracking.register_as:
            tracker.register_model(
                cfg.tracking.register_as,
                score=selection.score if selection else None,
                step=selection.step if selection else None,
                metric=cfg.select.by if selection else None,
            )
    if cfg.trainer.sample_rows:
        # The first rows of a larger draw are the rows of the smaller one (same noise stream).
        rows = rare.head(cfg.trainer.sample_rows)
        write_with(output_dir / SAMPLES_FILE, lambda tmp: rows.to_csv(tmp, index=False))
        tracker.log_artifact(output_dir / SAMPLES_FILE)
    return bundle


def _tag_what_ships(synthesizer: Synthesizer, tracker: Tracker) -> None:
    """Tags and log lines for the parts beside the generator (``ship.*``)."""
    if synthesizer.calibration is not None:
        tracker.set_tags({"calibration": "marginals"})
        log.info("calibrated each generated column onto the training rows' quantiles")
    if synthesizer.mixture is not None:
        share = synthesizer.mixture.share
        tracker.set_tags({"copula.share": share})
        log.info(
            "%.0f%% of the sampled rows come from a Gaussian copula of the training rows",
            100 * share,
        )
