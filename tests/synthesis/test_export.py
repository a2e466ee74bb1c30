"""What a finished run exports: the bundle and sampled rows; nothing from a generator whose rows
are not finite."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from support.configs import TINY, compose

from wgangp.config import to_config
from wgangp.data.simulated import simulate_creditcard
from wgangp.data.transform import TabularTransformer
from wgangp.model.networks import build_generator
from wgangp.serving.synthesizer import NonFiniteSamplesError, Synthesizer
from wgangp.synthesis.export import export


class RecordingTracker:
    run_id = "r1"

    def __init__(self) -> None:
        self.calls: list[str] = []

    def log_artifact(self, path: Path, artifact_path: str | None = None) -> None:
        self.calls.append(f"artifact {Path(path).name}")

    def log_model(self, spec: dict) -> None:
        self.calls.append("model")

    def set_tags(self, tags: dict) -> None:
        self.calls.append("tags " + ",".join(sorted(tags)))


def _synthesizer(broken: bool) -> Synthesizer:
    generator = build_generator(8, 30, [16])
    if broken:
        weights = generator.get_layer("generator_out").get_weights()
        generator.get_layer("generator_out").set_weights(
            [np.full_like(weights[0], np.nan)] + weights[1:]
        )
    transformer = TabularTransformer().fit(simulate_creditcard(4000, seed=0))
    return Synthesizer(generator, transformer, latent_dim=8)


@pytest.mark.parametrize("sample_rows", [0, 10, 100])
def test_export_writes_and_logs_the_bundle_and_the_requested_rows(tmp_path, sample_rows) -> None:
    cfg = to_config(compose([*TINY, f"trainer.sample_rows={sample_rows}"]))
    tracker = RecordingTracker()
    bundle = export(_synthesizer(broken=False), tmp_path, tracker, cfg, None)
    assert (bundle / "synthesizer.json").is_file()
    written = tmp_path / "fraud_samples.csv"
    assert written.is_file() == bool(sample_rows)
    if sample_rows:
        assert len(written.read_text().splitlines()) == sample_rows + 1
    assert tracker.calls[:2] == ["artifact synthesizer", "model"]


def test_a_generator_putting_out_nan_exports_nothing(tmp_path) -> None:
    cfg = to_config(compose(TINY))
    tracker = RecordingTracker()
    with pytest.raises(NonFiniteSamplesError, match="the generator returned NaN or inf"):
        export(_synthesizer(broken=True), tmp_path, tracker, cfg, None)
    assert list(tmp_path.iterdir()) == [] and tracker.calls == []
