"""Quantile knots of training rows: means of groups of >= k rows, atoms kept, no rare value."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest
from support.creditcard import SCHEMA

from wgangp.data.builtin.simulated import simulate_creditcard
from wgangp.data.entities import identical_row_groups
from wgangp.data.knots import (
    extreme_mean,
    grouped_knots,
    no_ones_value,
    point_masses,
    private_range,
)
from wgangp.data.transform.scales import QuantileScale
from wgangp.data.transform.table_transform import TableTransform

K = 5


def _column(n: int, seed: int) -> np.ndarray:
    """Amount-like: cents, a third at exactly 1.00, a tenth at 0.00, a long tail."""
    rng = np.random.default_rng(seed)
    values = np.round(rng.lognormal(3.0, 1.5, n), 2)
    values[: n // 3] = 1.0
    values[n // 3 : n // 3 + n // 10] = 0.0
    return values


def _rare(values: np.ndarray) -> np.ndarray:
    distinct, counts = np.unique(values, return_counts=True)
    return distinct[counts < K]


def _hits(values: np.ndarray, stored: np.ndarray) -> np.ndarray:
    """The ``values`` some stored number equals (within a float round trip's rounding)."""
    stored = np.asarray(stored, np.float64).ravel()
    close = (
        np.abs(values[:, None] - stored[None, :]) <= 1e-9 * np.maximum(1, np.abs(values))[:, None]
    )
    return values[close.any(axis=1)]


@pytest.mark.parametrize("n", [10, 11, 207, 5000])
def test_no_knot_is_a_value_fewer_than_k_rows_hold(n: int) -> None:
    rows = np.column_stack([_column(n, 0), np.arange(n, dtype=float), _column(n, 1) * 3.7])
    references, quantiles = grouped_knots(rows, K, 1000)
    assert np.all(np.diff(references) > 0) and references[0] == 0 and references[-1] == 1
    assert np.all(np.diff(quantiles, axis=0) >= 0)
    atoms = 0
    for column in range(rows.shape[1]):
        assert not len(_hits(_rare(rows[:, column]), quantiles[:, column]))
        atoms += len(np.unique(rows[:, column])) - len(_rare(rows[:, column]))
    assert len(references) <= min(998, max(2, n // K)) + 2 + 2 * atoms  # groups, ends, atoms' edges


def test_one_knot_per_row_is_what_it_replaces() -> None:
    """The scikit-learn fit the bundle used to ship stores every row (the reason for this)."""
    values = _column(207, 0)[:, None]
    rare = _rare(values[:, 0])
    assert len(_hits(rare, np.asarray(QuantileScale.fit(values).quantiles))) == len(rare)


def test_atoms_come_back_at_their_share() -> None:
    values = _column(600, 2)[:, None]
    scale = QuantileScale.fit_grouped(values, K)
    draws = scale.inverse(np.random.default_rng(0).standard_normal((40_000, 1)))[:, 0]
    assert np.mean(draws == 1.0) == pytest.approx(1 / 3, abs=0.01)
    assert np.mean(draws == 0.0) == pytest.approx(1 / 10, abs=0.01)
    assert not len(_hits(_rare(values[:, 0]), np.unique(draws)))


def test_few_rows_get_two_knots_and_the_transform_warns_once(caplog) -> None:
    rows = np.random.default_rng(0).normal(size=(7, 3))
    references, quantiles = grouped_knots(rows, K, 1000)
    assert list(references) == [0.0, 1.0] and quantiles.shape == (2, 3)
    assert not len(_hits(rows.ravel(), quantiles))
    frame = simulate_creditcard(n_rows=400, fraud_rate=0.02, seed=0)  # 8 frauds
    with caplog.at_level(logging.WARNING, logger="wgangp.data"):
        TableTransform.fit(frame, SCHEMA, SCHEMA.classes(frame["Class"]), source="rows")
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warned == [
        "rows: 8 row(s) of class Class=1 are fewer than 2 x 5: its quantile tables are its mean "
        "-/+ sqrt(3) sd, which so few rows can reveal"
    ]


def test_bounds_are_means_of_the_k_most_extreme_rows_and_no_ones_value() -> None:
    values = np.arange(100.0)
    top, bottom = extreme_mean(values, K, largest=True), extreme_mean(values, K, largest=False)
    assert 95 < top < 99 and 0 < bottom < 4
    assert top not in set(values) and bottom not in set(values)
    assert extreme_mean(np.r_[np.zeros(6), values], K, largest=False) == 0.0  # an atom stays


# --- entities, not rows (docs/privacy.md) --------------------------------------------------------


def _customers(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Amounts of 60 customers with one row each, and one customer with 8 rows of 777.77 (the
    table's largest), as (values, owners)."""
    rng = np.random.default_rng(seed)
    values = np.r_[np.round(rng.lognormal(4.0, 0.5, 60), 2), np.full(8, 777.77)]
    owners = np.r_[np.arange(60), np.full(8, 60)]
    return values, owners


def test_a_value_one_customer_holds_in_many_rows_is_no_atom_and_no_knot() -> None:
    values, owners = _customers()
    _, quantiles = grouped_knots(values[:, None], K, 1000)
    assert 777.77 in quantiles  # counted in rows, the customer's 8 rows make it an atom
    _, quantiles = grouped_knots(values[:, None], K, 1000, owners)
    assert not len(_hits(np.array([777.77]), quantiles))
    assert point_masses(values, K) == pytest.approx([777.77])
    assert not len(point_masses(values, K, owners=owners))


def test_every_group_spans_k_customers_however_many_rows_one_holds() -> None:
    """One customer's 300 rows (three amounts, 100 rows each) fill whole groups of rows: counted
    in rows they would be atoms; merged until each group spans k customers, none is stored."""
    rng = np.random.default_rng(1)
    values = np.r_[rng.normal(0, 1, 300), np.repeat([10.0, 11.0, 12.0], 100)]
    owners = np.r_[np.arange(300), np.full(300, 300)]
    _, by_rows = grouped_knots(values[:, None], K, 1000)
    assert len(_hits(np.array([10.0, 11.0, 12.0]), by_rows)) == 3
    _, quantiles = grouped_knots(values[:, None], K, 1000, owners)
    assert np.all(np.diff(quantiles[:, 0]) >= 0)
    assert not len(_hits(np.array([10.0, 11.0, 12.0]), quantiles))


def test_bounds_count_each_customer_once_at_their_extreme() -> None:
    values, owners = _customers()
    assert extreme_mean(values, K, largest=True) == 777.77  # five of one customer's rows
    top = extreme_mean(values, K, largest=True, owners=owners)
    others = np.sort(values[owners < 60])[-4:]
    assert top == pytest.approx(np.mean(np.r_[others, 777.77]))
    low, high = private_range(values, K, whole=False, owners=owners)
    assert high == top and low < high


def test_an_exact_duplicate_row_counts_once() -> None:
    """A row repeated five times is one entity: its value is rare, and so is the bound."""
    values = np.r_[np.arange(50.0), np.full(5, 99.5)]
    owners = identical_row_groups(pd.DataFrame({"x": values}))
    assert extreme_mean(values, K, largest=True) == 99.5
    assert extreme_mean(values, K, largest=True, owners=owners) != 99.5
    assert no_ones_value(99.5, values, K, whole=False, up=False, owners=owners) != 99.5
