"""Rare conditions through resample-move over the noise (:mod:`wgangp.serving.latent_moves`): the
rows follow the model's conditional distribution (checked against the exact one on a model whose
answer is an integral, and against filtered unconditional rows of a real generator), cost a few
generated rows each instead of 1 / share, and equal rejection's rows where conditions are common."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats
from scipy.special import expit
from support.synthesizers import fraud_team_synthesizer

from wgangp.data.transform.layout import Block
from wgangp.serving.conditions import Condition, sample_where
from wgangp.serving.latent_moves import MOVES, effective_size, sample_conditioned


class OneNumberOneLevel:
    """A model whose conditional distributions are integrals: z ~ N(0, 1) puts out x = z and a
    level ``b`` with probability sigmoid(3 z - 10) (about 1 row in 400), ``a`` otherwise."""

    latent_dim = 1
    layout = (Block("x", "continuous", 0, 1), Block("c", "categorical", 1, 2))
    levels = {"c": ["a", "b"]}

    def __init__(self) -> None:
        self.decoded = 0

    def decode(self, z: np.ndarray) -> np.ndarray:
        self.decoded += len(z)
        x = z[:, 0].astype(np.float64)
        b = expit(3 * x - 10)
        return np.stack([x, 1 - b, b], axis=1).astype(np.float32)

    def rows(self, x: np.ndarray) -> pd.DataFrame:
        return pd.DataFrame({"x": x[:, 0].astype(float), "c": np.where(x[:, 2] > 0.5, "b", "a")})


LEVEL_B = Condition("c", "categorical", levels=("b",), text="c in [b]")


def _b_density(t: float) -> float:
    return stats.norm.pdf(t) * expit(3 * t - 10)


def test_a_rare_level_follows_the_exact_conditional_distribution() -> None:
    """x given c = b has density proportional to N(x) sigmoid(3 x - 10): the rows' x passes a KS
    test against that law's CDF (integrated), at a cost far below rejection's n / share."""
    model = OneNumberOneLevel()
    share = integrate.quad(_b_density, -10, 10)[0]
    assert share < 1 / MOVES / 10  # rare enough that moving, not rejection, draws the rows
    rows = sample_conditioned(model, 2000, (LEVEL_B,), seed=0)
    assert len(rows) == 2000 and (rows["c"] == "b").all()

    def cdf(t: np.ndarray) -> np.ndarray:
        return np.array([integrate.quad(_b_density, -10, v)[0] / share for v in np.ravel(t)])

    assert stats.kstest(rows["x"], cdf).pvalue > 1e-3
    assert model.decoded < 0.1 * 2000 / share
    assert rows["x"].nunique() > 0.99 * len(rows)  # the resampled copies moved apart


def test_a_rare_range_is_the_truncated_law() -> None:
    model = OneNumberOneLevel()
    above = Condition("x", "continuous", low=2.5, high=None, text="x in [2.5, null]")
    rows = sample_conditioned(model, 2000, (above,), seed=1)
    assert (rows["x"] >= 2.5).all()
    assert stats.kstest(rows["x"], stats.truncnorm(2.5, np.inf).cdf).pvalue > 1e-3


def test_common_conditions_are_rejections_rows() -> None:
    """Where every condition is met by a fair share, the rows are the unconditional rows that
    meet them, in order: what rejection over the same draws returns."""
    model = fraud_team_synthesizer()
    where = {"amount": [float(model.sample(5000, seed=2)["amount"].median()), None]}
    conditions = model.conditions(where)
    moved = model.sample(300, where=where, seed=7)
    draw = lambda rows, seed: model.sample_class(rows, 1, seed)  # noqa: E731
    pd.testing.assert_frame_equal(moved, sample_where(draw, 300, conditions, seed=7))


@pytest.fixture(scope="module")
def model():
    return fraud_team_synthesizer()


def test_a_rare_window_of_a_real_generator_reads_as_its_filtered_rows(model) -> None:
    """The top 0.5% of amounts among days of the first half: the other columns of 3,000 moved
    rows against the same window filtered out of 600,000 unconditional rows."""
    unconditional = model.sample(600_000, seed=12)
    high = float(unconditional["amount"].quantile(0.995))
    day = unconditional["day"].median()
    met = (unconditional["amount"] >= high) & (unconditional["day"] <= day)
    filtered = unconditional[met]
    where = {"amount": [high, None], "day": [None, day.isoformat()]}
    rows = model.sample(3000, where=where, seed=3)
    assert (rows["amount"] >= high).all() and (rows["day"] <= day).all()
    for column in ("amount", "count", "day"):
        a, b = rows[column].dropna(), filtered[column].dropna()
        if column == "day":
            a, b = a.astype("int64"), b.astype("int64")
        assert stats.ks_2samp(a, b).pvalue > 1e-3, column


def test_effective_size() -> None:
    assert effective_size(np.ones(10)) == pytest.approx(10)
    assert effective_size(np.array([1.0, 0.0, 0.0])) == pytest.approx(1)
    assert effective_size(np.zeros(3)) == 0


def test_many_rows_cost_a_bounded_number_of_generated_rows_each(model) -> None:
    """More rows than the search budget allows rejection: a condition a quarter of the rows meet
    still answers by rejection (at most MOVES rows a row), a 3% one by moves; either way no more
    than about MOVES generated rows per row returned."""
    drawn = model.sample(20_000, seed=2)["amount"]
    decoded = []
    original = model.generate_from

    def counted(z, *args, **kwargs):
        decoded.append(len(z))
        return original(z, *args, **kwargs)

    model.generate_from = counted
    try:
        for share, n in ((0.25, 100_000), (0.03, 30_000)):
            low = float(drawn.quantile(1 - share))
            decoded.clear()
            rows = model.sample(n, where={"amount": [low, None]}, seed=5)
            assert len(rows) == n and (rows["amount"] >= low).all()
            assert sum(decoded) < (MOVES + 2) * n, share
    finally:
        model.generate_from = original
