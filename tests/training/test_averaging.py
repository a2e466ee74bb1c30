"""Generator weight averaging: the average moves by ``decay ** steps`` per call."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from support.configs import TINY, compose

from wgangp.config import to_config
from wgangp.model.networks import build_generator
from wgangp.serving.synthesizer import Synthesizer
from wgangp.train import train


def test_the_average_moves_by_decay_to_the_power_of_the_steps() -> None:
    from wgangp.training.averaging import GeneratorAverage

    generator = build_generator(4, 30, [8])
    start = [np.array(w) for w in generator.get_weights()]
    average = GeneratorAverage(generator, decay=0.9)
    generator.set_weights([w + 1.0 for w in start])
    average.update(3)  # keep 0.9**3 = 0.729 of the old weights
    for before, now in zip(start, average.model.get_weights(), strict=True):
        np.testing.assert_allclose(now, before + (1 - 0.729), rtol=1e-6, atol=1e-6)
    average.update(0)
    for before, now in zip(start, average.model.get_weights(), strict=True):
        np.testing.assert_allclose(now, before + 0.271, rtol=1e-6, atol=1e-6)


@pytest.mark.slow
def test_a_run_with_averaging_exports_the_average_and_resumes_it(tmp_path: Path) -> None:
    overrides = [*TINY, "trainer.ema_decay=0.5", f"tracking.uri=sqlite:///{tmp_path / 'm.db'}"]
    result = train(to_config(compose(overrides)), output_dir=tmp_path / "a", launch_dir=tmp_path)
    assert result.status == "FINISHED"
    exported = Synthesizer.load(result.synthesizer_dir)
    rows = exported.sample(20, label=1, seed=0)
    assert np.isfinite(rows.to_numpy(np.float64)).all()
    again = train(
        to_config(compose([*overrides, "trainer.steps=9", "trainer.resume=true"])),
        output_dir=tmp_path / "b",
        launch_dir=tmp_path,
    )
    assert again.status == "FINISHED" and again.steps_completed == 9


def test_the_decay_is_checked() -> None:
    from wgangp.errors import ConfigError

    with pytest.raises(ConfigError, match=r"trainer.ema_decay: must be in \[0, 1\)"):
        to_config(compose([*TINY, "trainer.ema_decay=1.0"]))
