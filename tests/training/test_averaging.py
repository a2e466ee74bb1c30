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


def test_the_average_is_the_normalized_decayed_mean_of_the_steps_weights() -> None:
    """Steps 1-3 end at w+1, steps 4-5 at w+2; decay 0.9 weighs step s by 0.9**(5-s):
    0.6561, 0.729, 0.81 (sum 2.1951) and 0.9, 1 (sum 1.9), of 4.0951 in all."""
    from wgangp.training.averaging import GeneratorAverage

    generator = build_generator(4, 30, [8])
    start = [np.array(w) for w in generator.get_weights()]
    average = GeneratorAverage(generator, decay=0.9)
    generator.set_weights([w + 1.0 for w in start])
    average.update(0, 3)  # the first steps: nothing of the initial weights is kept
    for before, now in zip(start, average.model.get_weights(), strict=True):
        np.testing.assert_allclose(now, before + 1.0, rtol=1e-6, atol=1e-6)
    generator.set_weights([w + 2.0 for w in start])
    average.update(3, 2)
    expected = (2.1951 * 1.0 + 1.9 * 2.0) / 4.0951
    for before, now in zip(start, average.model.get_weights(), strict=True):
        np.testing.assert_allclose(now, before + expected, rtol=1e-5, atol=1e-5)
    average.update(5, 0)
    for before, now in zip(start, average.model.get_weights(), strict=True):
        np.testing.assert_allclose(now, before + expected, rtol=1e-5, atol=1e-5)


def test_one_call_of_many_steps_keeps_what_the_steps_one_by_one_keep() -> None:
    from wgangp.training.averaging import GeneratorAverage

    average = GeneratorAverage(build_generator(4, 30, [8]), decay=0.999)
    one_by_one = np.prod([average.keep(s, 1) for s in range(250, 260)])
    assert average.keep(250, 10) == pytest.approx(one_by_one, rel=1e-9)
    assert average.keep(0, 10) == 0.0
    assert average.keep(10**6, 10) == pytest.approx(0.999**10, rel=1e-9)  # no bias left


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
