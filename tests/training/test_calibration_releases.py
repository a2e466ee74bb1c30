"""The DP calibration's releases have one count: what ``release`` sizes the statistics' noise
for is what the shipped calibration releases after training, on a table with numbers,
categoricals and gaps (issue 69: a second source of the count would let them drift apart, and
the run would spend more than its budget without saying so)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support.configs import TINY, compose
from support.synthesizers import untrained_generator

from wgangp.config import to_config
from wgangp.data.prepare import prepare_data
from wgangp.privacy.randomness import REPLAYABLE_ENV, noise_source
from wgangp.synthesis.assemble import assemble
from wgangp.training import private_fit


def _table(rows: int = 1200, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    income = rng.integers(800, 9000, rows).astype(float)
    income[rng.random(rows) < 0.1] = np.nan  # a gap block too
    return pd.DataFrame(
        {
            "channel": rng.choice(["web", "app", "branch"], rows),
            "income": income,
            "score": np.round(rng.normal(600, 50, rows), 3),
            "status": np.where(rng.random(rows) < 0.2, "bad", "good"),
        }
    )


def test_the_calibration_releases_what_the_noise_was_sized_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(REPLAYABLE_ENV, "7")  # a test key: the same draws on every machine
    path = tmp_path / "table.csv"
    _table().to_csv(path, index=False)
    overrides = [o for o in TINY if not o.startswith("data")]
    cfg = to_config(
        compose(
            [
                *overrides,
                f"data.path={path}",
                "data.label=status",
                "data.positive=bad",
                "privacy.epsilon=3",
            ]
        )
    )
    counted: list[int] = []
    real = private_fit.gaussian_event

    def counting(noise_multiplier: float, count: int = 1):
        counted.append(count)
        return real(noise_multiplier, count)

    monkeypatch.setattr(private_fit, "gaussian_event", counting)
    noise = noise_source()
    reading = private_fit.private_reading(cfg, noise)
    data = prepare_data(cfg.data, seed=cfg.seed, launch_dir=tmp_path, reading=reading)
    private = private_fit.release(cfg, data, noise)
    assert counted and counted[0] > 1  # the calibration's releases, accounted before training
    transformer = private.transformer
    generator = untrained_generator(cfg.model.latent_dim, transformer.width)
    assemble(
        generator,
        transformer,
        cfg.model.latent_dim,
        private.data.schema,
        private.data.fit_rows.train,
        cfg.ship,
        cfg.seed,
        entities=private.entities,
        dp=private.statistics,
    )
    kinds = {block.kind for block in transformer.layout}
    assert len(kinds) >= 3, kinds  # numbers, levels and gaps each release their own
    assert counted == [len(private.statistics.events)]
