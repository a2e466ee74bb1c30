"""What a history run ships: the generator, its encoding and the pseudonym structure, assembled in
one place (the step selection samples what this builds), saved as the bundle, logged with its
pyfunc model (registered with ``tracking.register_as``), a sample of histories with a rare-class
row beside it."""

from __future__ import annotations

import logging
from pathlib import Path

import keras
import numpy as np

from wgangp.config import Config
from wgangp.data.histories.encoding import HistoryEncoding
from wgangp.data.histories.prepare import HistoryData
from wgangp.data.histories.windows import Windows
from wgangp.data.schema.table_schema import RARE
from wgangp.files import write_with
from wgangp.serving.bundle import BUNDLE
from wgangp.serving.histories import HistorySynthesizer
from wgangp.serving.history_pyfunc import history_model_spec
from wgangp.serving.pseudonyms import SharedIds
from wgangp.synthesis.selection import Selection
from wgangp.tracking.tracker import Tracker

log = logging.getLogger("wgangp.train")

#: The sampled histories written beside the bundle (each with a rare-class row): one history per
#: this many of ``trainer.sample_rows``, at least 10.
SAMPLES_FILE = "samples.csv"
SAMPLE_ROWS_PER_HISTORY = 20


def assemble_histories(
    generator: keras.Model,
    encoding: HistoryEncoding,
    data: HistoryData,
    windows: Windows,
    cfg: Config,
) -> HistorySynthesizer:
    """The shipped model around ``generator`` (whose weights may still change: the selection
    samples through this), its pseudonyms fitted on the training ``windows``."""
    roles, train = data.roles, windows.rows
    shared = tuple(
        SharedIds.fit(
            name,
            data.prefixes[name],
            train[name].to_numpy(np.int64),
            train[roles.entity].to_numpy(np.int64),
            windows.row_classes,
            windows.count,
            cfg.ship.min_atom_rows,
        )
        for name in roles.shared
    )
    return HistorySynthesizer(
        generator=generator,
        encoding=encoding,
        schema=data.rows.schema,
        shared=shared,
        entity_prefix=data.prefixes[roles.entity],
        rare_share=float(windows.classes.mean()),
        latent_dim=cfg.history.latent_dim,
        records_per_cell=cfg.history.records_per_cell,
    )


def export_histories(
    synthesizer: HistorySynthesizer,
    output_dir: Path,
    tracker: Tracker,
    cfg: Config,
    selection: Selection | None,
) -> Path:
    """Save and log the bundle; its directory. Histories of both classes are drawn first: a
    generator that puts out NaN fails the run here, before a broken model is saved."""
    synthesizer.draw(16, 0, cfg.seed)
    frauds = synthesizer.draw(max(10, cfg.trainer.sample_rows // SAMPLE_ROWS_PER_HISTORY), RARE,
                              cfg.seed)  # fmt: skip
    bundle = synthesizer.save(output_dir / BUNDLE)
    tracker.set_tags({"model.kind": "histories"})
    if cfg.tracking.log_model and tracker.run_id:
        tracker.log_artifact(bundle, BUNDLE)
        tracker.log_model(history_model_spec(bundle))
        if cfg.tracking.register_as:
            tracker.register_model(
                cfg.tracking.register_as,
                score=selection.score if selection else None,
                step=selection.step if selection else None,
                metric=cfg.select.by if selection else None,
            )
    if cfg.trainer.sample_rows:
        write_with(output_dir / SAMPLES_FILE, lambda tmp: frauds.to_csv(tmp, index=False))
        tracker.log_artifact(output_dir / SAMPLES_FILE)
    log.info("exported the history model to %s", bundle)
    return bundle
