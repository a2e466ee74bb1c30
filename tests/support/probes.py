"""A step selection whose probe reads scripted scores, and the generator weights at each probe."""

from __future__ import annotations

import numpy as np
import pytest

from support.configs import TINY_NETWORKS
from wgangp.synthesis.selection import StepSelector, ValidationProbe

#: A table with validation frauds enough for the step selection (at least 6): 30% of the rows.
LOOP_DATA = ["data=simulated", "data.simulated_rows=20000", "data.val_fraction=0.3"]

#: A tiny run of 8 steps whose step selection probes every 2 steps; add ``tracking.uri``.
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
    "select.every=2",
    "select.smoothing=0",
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
            "val/c2st_auc_gbm": scores[step],
            "val/ks_mean": 0.1,
            "len": float(len(sample(10, step))),
        },
    )
    probed: dict[int, list[np.ndarray]] = {}
    original_probe = StepSelector.probe_step

    def recording_probe(self, step):
        probed[step] = [np.array(w) for w in self.best.generator.get_weights()]
        return original_probe(self, step)

    monkeypatch.setattr(StepSelector, "probe_step", recording_probe)
    return probed
