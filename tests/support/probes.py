"""A quality loop whose probe reads scripted scores, and the generator weights at each probe."""

from __future__ import annotations

import numpy as np
import pytest

from support.configs import TINY_NETWORKS
from wgangp.training.quality import QualityLoop, ValidationProbe

#: A table with validation frauds enough for the quality loop (at least 6): 30% of the rows.
LOOP_DATA = ["data=simulated", "data.simulated_rows=20000", "data.val_fraction=0.3"]

#: A tiny run of 8 steps whose quality loop probes every 2 steps; add ``tracking.uri``.
PROBED_RUN = [
    *LOOP_DATA,
    *TINY_NETWORKS,
    "trainer.batch_size=32",
    "trainer.steps=8",
    "trainer.steps_per_call=3",
    "trainer.checkpoint_every=4",
    "trainer.progress=false",
    "trainer.sample_rows=20",
    "evaluate.enabled=false",
    "evaluate.every=2",
    "evaluate.select_smoothing=0",
]


def script_probes(
    monkeypatch: pytest.MonkeyPatch, scores: dict[int, float]
) -> dict[int, list[np.ndarray]]:
    """The probe at step s reads ``scores[s]`` (after drawing a few rows); returns the dict
    that fills with the generator's weights at each probed step."""
    monkeypatch.setattr(
        ValidationProbe,
        "score",
        lambda self, sample, step: {
            "val.c2st_auc_gbm": scores[step],
            "val.ks_mean": 0.1,
            "len": float(len(sample(10, step))),
        },
    )
    probed: dict[int, list[np.ndarray]] = {}
    original_run = QualityLoop.run

    def recording_run(self, step):
        probed[step] = [np.array(w) for w in self.best.generator.get_weights()]
        return original_run(self, step)

    monkeypatch.setattr(QualityLoop, "run", recording_run)
    return probed
