"""The copula mixture: its share of a draw replaced by whole copula rows, prefix-stable draws."""

from __future__ import annotations

import numpy as np
import pytest
from support.creditcard import FEATURES

from wgangp.serving.copula import GaussianCopula
from wgangp.serving.mixture import CopulaMixture

WIDTH = len(FEATURES)


def _training_rows() -> dict[int, np.ndarray]:
    rng = np.random.default_rng(0)
    return {label: rng.exponential(2.0, (400, WIDTH)) - 5.0 * label for label in (0, 1)}


def test_mix_replaces_about_its_share_of_the_rows_and_keeps_the_others() -> None:
    mixture = CopulaMixture(GaussianCopula.fit(_training_rows()), 0.3)
    generated = np.full((4000, WIDTH), 99.0)
    mixed = mixture.mix(generated, label=0, seed=5)
    kept = (mixed == 99.0).all(axis=1)
    assert abs((~kept).mean() - 0.3) < 0.03
    assert not (mixed[~kept] == 99.0).any()  # a replaced row is a whole copula row


def test_the_first_rows_of_a_larger_draw_are_the_smaller_draw() -> None:
    mixture = CopulaMixture(GaussianCopula.fit(_training_rows()), 0.5)
    generated = np.random.default_rng(1).standard_normal((1000, WIDTH))
    np.testing.assert_array_equal(
        mixture.mix(generated, label=1, seed=7)[:100], mixture.mix(generated[:100], 1, seed=7)
    )
    assert not np.array_equal(
        mixture.mix(generated, label=1, seed=7), mixture.mix(generated, label=1, seed=8)
    )


@pytest.mark.parametrize("share", [0.0, 1.0, -0.1, float("nan")])
def test_a_share_outside_0_1_is_refused(share: float) -> None:
    with pytest.raises(ValueError, match="not in \\(0, 1\\)"):
        CopulaMixture(GaussianCopula.fit(_training_rows()), share)
