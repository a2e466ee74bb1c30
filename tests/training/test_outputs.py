"""What a finished run exports: nothing at all from a generator whose rows are not finite."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.stats import ks_2samp
from support.configs import TINY, compose

from wgangp.config import to_config
from wgangp.data.prepare import PreparedData
from wgangp.data.schema import FEATURES, FRAUD, LABEL
from wgangp.data.simulated import simulate_creditcard
from wgangp.data.transform import TabularTransformer
from wgangp.model.networks import build_generator
from wgangp.serving.synthesizer import NonFiniteSamplesError, Synthesizer
from wgangp.training.outputs import export, quality_loop


class RecordingTracker:
    run_id = "r1"

    def __init__(self) -> None:
        self.calls: list[str] = []

    def log_artifact(self, path: Path, artifact_path: str | None = None) -> None:
        self.calls.append(f"artifact {Path(path).name}")

    def log_model(self, spec: dict) -> None:
        self.calls.append("model")


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
    run = SimpleNamespace(dirs=SimpleNamespace(output=tmp_path), tracker=RecordingTracker())
    bundle = export(_synthesizer(broken=False), run, cfg, None)
    assert (bundle / "synthesizer.json").is_file()
    written = tmp_path / "fraud_samples.csv"
    assert written.is_file() == bool(sample_rows)
    if sample_rows:
        assert len(written.read_text().splitlines()) == sample_rows + 1
    assert run.tracker.calls[:2] == ["artifact synthesizer", "model"]


def test_a_generator_putting_out_nan_exports_nothing(tmp_path) -> None:
    cfg = to_config(compose(TINY))
    run = SimpleNamespace(dirs=SimpleNamespace(output=tmp_path), tracker=RecordingTracker())
    with pytest.raises(NonFiniteSamplesError, match="the generator returned NaN or inf"):
        export(_synthesizer(broken=True), run, cfg, None)
    assert list(tmp_path.iterdir()) == [] and run.tracker.calls == []


@pytest.mark.parametrize("calibrate", [True, False])
def test_the_quality_loop_probes_the_rows_the_run_exports(tmp_path, calibrate: bool) -> None:
    """Calibrated runs are scored calibrated: the probe's frauds follow the training frauds'
    marginals (fitted afresh on the current generator), an uncalibrated run's do not."""
    train = simulate_creditcard(60_000, seed=0)
    data = PreparedData("simulated", "simulated", train, simulate_creditcard(20_000, seed=1), train)
    cfg = to_config(compose([*TINY, "evaluate.every=2", f"model.calibrate_marginals={calibrate}"]))
    synthesizer = _synthesizer(broken=False)
    run = SimpleNamespace(checkpoints=SimpleNamespace(path=tmp_path))
    loop = quality_loop(synthesizer.generator, synthesizer.transformer, data, run, cfg)
    rows = loop.sample(2000, 3)
    frauds = train[train[LABEL] == FRAUD]
    worst = max(ks_2samp(rows[c], frauds[c]).statistic for c in FEATURES)
    assert (worst < 0.15) == calibrate  # an untrained generator is far off uncalibrated


def test_the_quality_loop_probes_the_copulas_share_of_rows_too(tmp_path) -> None:
    """With ``model.copula_share`` the probe scores the mixed rows a user would get: about that
    share of its frauds are the copula's, the others the generator's."""
    train = simulate_creditcard(60_000, seed=0)
    data = PreparedData("simulated", "simulated", train, simulate_creditcard(20_000, seed=1), train)
    overrides = [*TINY, "evaluate.every=2", "model.calibrate_marginals=false"]
    cfg = to_config(compose([*overrides, "model.copula_share=0.5"]))
    synthesizer = _synthesizer(broken=False)
    run = SimpleNamespace(checkpoints=SimpleNamespace(path=tmp_path))
    loop = quality_loop(synthesizer.generator, synthesizer.transformer, data, run, cfg)
    rows = loop.sample(2000, 3)[list(FEATURES)]
    generated = synthesizer.sample(2000, label=FRAUD, seed=3)[list(FEATURES)]
    assert abs((~np.isclose(rows, generated).all(axis=1)).mean() - 0.5) < 0.05
