"""What ships is assembled once: the probe scores the rows the export saves."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import ks_2samp
from support.configs import TINY, compose
from support.creditcard import FEATURES, FRAUD, LABEL, SCHEMA
from support.synthesizers import creditcard_transform

from wgangp.config import ShipConfig, to_config
from wgangp.data.builtin.simulated import simulate_creditcard
from wgangp.data.prepare import PreparedData
from wgangp.model.networks import build_generator
from wgangp.synthesis.assemble import assemble
from wgangp.synthesis.selection import step_selector


@pytest.fixture(scope="module")
def train():
    return simulate_creditcard(60_000, seed=0)


@pytest.fixture(scope="module")
def networks(train):
    return build_generator(8, 30, [16]), creditcard_transform(train)


def _selector(tmp_path, train, networks, overrides: list[str]):
    val = simulate_creditcard(20_000, seed=1)
    data = PreparedData("simulated", "simulated", "simulated", SCHEMA, train, val, train)
    cfg = to_config(compose([*TINY, "select.every=2", *overrides]))
    generator, transformer = networks
    return step_selector(generator, transformer, data, tmp_path, cfg), cfg


@pytest.mark.parametrize("calibrate", [True, False])
def test_the_probe_scores_calibrated_rows_when_the_run_ships_them(
    tmp_path, train, networks, calibrate: bool
) -> None:
    """Calibrated runs are scored calibrated: the probe's frauds follow the training frauds'
    marginals (fitted afresh on the current generator), an uncalibrated run's do not."""
    overrides = [f"ship.calibrate_marginals={calibrate}", "ship.copula_share=0"]
    selector, _ = _selector(tmp_path, train, networks, overrides)
    rows = selector.sample(2000, 3)
    frauds = train[train[LABEL] == FRAUD]
    worst = max(ks_2samp(rows[c], frauds[c]).statistic for c in FEATURES)
    assert (worst < 0.15) == calibrate  # an untrained generator is far off uncalibrated


@pytest.mark.parametrize(
    "ship", [ShipConfig(True, 0.5), ShipConfig(False, 0.5), ShipConfig(True, 0.0)]
)
def test_the_probe_draws_exactly_the_rows_the_export_ships(tmp_path, train, networks, ship) -> None:
    """The probe assembles the rare class alone; the export assembles both classes. Each class
    is fitted on its own, so both give the same rows of the rare class, copula rows included."""
    overrides = [
        f"ship.calibrate_marginals={ship.calibrate_marginals}",
        f"ship.copula_share={ship.copula_share}",
    ]
    selector, cfg = _selector(tmp_path, train, networks, overrides)
    generator, transformer = networks
    shipped = assemble(generator, transformer, 8, SCHEMA, train, cfg.ship, cfg.seed)
    probed = selector.sample(500, 3)
    np.testing.assert_array_equal(
        probed[list(FEATURES)].to_numpy(), shipped.sample(500, FRAUD, 3)[list(FEATURES)].to_numpy()
    )
    assert (shipped.mixture is not None) == bool(ship.copula_share)
    assert (shipped.calibration is not None) == ship.calibrate_marginals


def test_the_copulas_share_of_rows_differs_from_the_generators(train, networks) -> None:
    """About ``copula_share`` of the shipped rows are the copula's, the others the generator's."""
    generator, transformer = networks
    alone = assemble(generator, transformer, 8, SCHEMA, train, ShipConfig(False, 0.0), seed=0)
    mixed = assemble(generator, transformer, 8, SCHEMA, train, ShipConfig(False, 0.5), seed=0)
    rows = mixed.sample(2000, FRAUD, seed=3)[list(FEATURES)]
    generated = alone.sample(2000, FRAUD, seed=3)[list(FEATURES)]
    assert abs((~np.isclose(rows, generated).all(axis=1)).mean() - 0.5) < 0.05


def test_nothing_is_fitted_when_nothing_ships_beside_the_generator(train, networks) -> None:
    generator, transformer = networks
    plain = assemble(generator, transformer, 8, SCHEMA, train, ShipConfig(False, 0.0), seed=0)
    assert plain.calibration is None and plain.mixture is None
    assert plain.generator is generator
