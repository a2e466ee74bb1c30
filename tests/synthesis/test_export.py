"""What a finished run exports: the bundle and sampled rows; nothing from a generator whose rows
are not finite."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from support.configs import TINY, compose
from support.creditcard import COLUMNS, FRAUD, LABEL
from support.synthesizers import creditcard_synthesizer, simulated_rows

from wgangp.config import to_config
from wgangp.serving.synthesizer import NonFiniteSamplesError, Synthesizer
from wgangp.synthesis.export import SAMPLES_FILE, export


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
    return creditcard_synthesizer(
        "nan" if broken else "random", train=simulated_rows(4000), latent=8, hidden=(16,)
    )


@pytest.mark.parametrize("sample_rows", [0, 10, 100])
def test_export_writes_and_logs_the_bundle_and_the_requested_rows(tmp_path, sample_rows) -> None:
    cfg = to_config(compose([*TINY, f"trainer.sample_rows={sample_rows}"]))
    tracker = RecordingTracker()
    bundle = export(_synthesizer(broken=False), tmp_path, tracker, cfg, None)
    assert (bundle / "synthesizer.json").is_file()
    written = tmp_path / SAMPLES_FILE
    assert SAMPLES_FILE == "samples.csv"
    assert written.is_file() == bool(sample_rows)
    if sample_rows:
        rows = pd.read_csv(written)
        assert len(rows) == sample_rows and list(rows.columns) == list(COLUMNS)
        assert (rows[LABEL] == FRAUD).all()  # the rare class, in the label's own value
    assert tracker.calls[:2] == ["artifact synthesizer", "model"]


def test_a_generator_putting_out_nan_exports_nothing(tmp_path) -> None:
    cfg = to_config(compose(TINY))
    tracker = RecordingTracker()
    with pytest.raises(NonFiniteSamplesError, match="the generator returned NaN or inf"):
        export(_synthesizer(broken=True), tmp_path, tracker, cfg, None)
    assert list(tmp_path.iterdir()) == [] and tracker.calls == []
