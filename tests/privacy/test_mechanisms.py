"""The entity-level DP mechanisms: one entity moves what is noised by L2 <= 1, the answers stay
accurate with many entities, and a level fewer than k entities hold never ships."""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from scipy.stats import norm

from wgangp.privacy import mechanisms as mech

GRID = mech.DEFAULT_GRID
K = 5


def table(seed: int, entities: int = 300) -> tuple[np.ndarray, np.ndarray]:
    """Signed log-normal values held by ``entities`` entities of 1 to 6 rows, a few gaps."""
    rng = np.random.default_rng(seed)
    owners = np.repeat(np.arange(entities), rng.integers(1, 7, entities))
    values = rng.lognormal(3, 2, len(owners)) * np.where(rng.random(len(owners)) < 0.3, -1, 1)
    values[rng.random(len(owners)) < 0.05] = np.nan
    return values, owners


def with_entity(values: np.ndarray, owners: np.ndarray, rows: np.ndarray):
    """The table plus one more entity holding ``rows``."""
    return np.concatenate([values, rows]), np.concatenate([owners, np.full(len(rows), -7)])


def level_vector(values: np.ndarray, owners: np.ndarray, max_levels: int) -> dict:
    levels, counts, _ = mech.entity_level_counts(values, owners, max_levels)
    return dict(zip(levels.tolist(), counts.tolist(), strict=True))


def weighted(values: np.ndarray, owners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The exact entity-weighted distribution (each row 1/m, gaps left out): sorted values and
    their cumulative shares."""
    present = ~np.isnan(values)
    values, owners = values[present], owners[present]
    _, codes, rows = np.unique(owners, return_inverse=True, return_counts=True)
    order = np.argsort(values)
    cdf = np.cumsum(1.0 / rows[codes][order])
    return values[order], cdf / cdf[-1]


def weighted_quantiles(values: np.ndarray, owners: np.ndarray, probabilities) -> np.ndarray:
    ordered, cdf = weighted(values, owners)
    return ordered[np.minimum(np.searchsorted(cdf, probabilities), len(cdf) - 1)]


def test_the_grid_is_public_symmetric_and_geometric() -> None:
    assert len(GRID) == 2 * 24 * 40 + 3 and not GRID.flags.writeable
    positive = GRID[GRID > 0]
    np.testing.assert_array_equal(GRID[GRID < 0], -positive[::-1])
    assert GRID[len(GRID) // 2] == 0
    np.testing.assert_allclose(positive[[0, -1]], [1e-9, 1e15])
    np.testing.assert_allclose(positive[1:] / positive[:-1], 10 ** (1 / 40))
    edges = np.array([-1e300, -np.inf, 1e300, np.inf, -3.0, 0.0, 2e-12])
    bins = mech.bin_index(edges, GRID)
    assert bins.tolist()[:4] == [0, 0, len(GRID) - 2, len(GRID) - 2]
    assert GRID[bins[4]] <= -3.0 < GRID[bins[4] + 1] and GRID[bins[5]] == 0 == GRID[bins[6]]


@pytest.mark.parametrize("seed", range(4))
def test_one_entity_of_many_rows_moves_the_histogram_and_the_tree_by_at_most_one(
    seed: int,
) -> None:
    values, owners = table(seed)
    rng = np.random.default_rng(100 + seed)
    spread = rng.choice([-1, 1], 1000) * 10 ** rng.uniform(-12, 18, 1000)  # past both grid ends
    spread[:50] = np.nan  # its gaps do not count
    for rows in (spread, np.full(1000, 12.5), spread[48:52]):  # the last: 2 gaps, 2 values
        bigger = with_entity(values, owners, rows)
        moved = mech.entity_histogram(*bigger, GRID) - mech.entity_histogram(values, owners, GRID)
        assert np.abs(moved).sum() == pytest.approx(1.0) and (moved >= -1e-12).all()
        assert np.linalg.norm(moved) <= 1 + 1e-12
        tree = mech.entity_tree(*bigger) - mech.entity_tree(values, owners)
        assert np.linalg.norm(tree) <= 1 + 1e-12
    assert np.linalg.norm(moved) > 0.7  # two rows in two bins: 1/sqrt(2)
    single = with_entity(values, owners, np.array([12.5]))
    moved = mech.entity_histogram(*single, GRID) - mech.entity_histogram(values, owners, GRID)
    assert np.linalg.norm(moved) == pytest.approx(1.0)
    tree = mech.entity_tree(*single) - mech.entity_tree(values, owners)
    assert np.linalg.norm(tree) == pytest.approx(1.0)


@pytest.mark.parametrize("max_levels", [1, 3, 50])
@pytest.mark.parametrize("seed", range(3))
def test_one_entity_of_many_rows_moves_the_level_counts_by_at_most_one(
    seed: int, max_levels: int
) -> None:
    rng = np.random.default_rng(seed)
    owners = rng.integers(0, 200, 2000)
    values = rng.choice(np.array([f"m{i}" for i in range(40)], object), 2000)
    rows = rng.choice(np.array([f"m{i}" for i in range(30, 90)], object), 1000)  # new levels too
    before = level_vector(values, owners, max_levels)
    after = level_vector(*with_entity(values, owners, rows), max_levels)
    moved = np.array([after.get(level, 0) - before.get(level, 0) for level in after | before])
    assert np.abs(moved).sum() == pytest.approx(1.0) and np.linalg.norm(moved) <= 1 + 1e-12
    assert np.count_nonzero(moved) == max_levels  # the entity's max_levels levels, no more
    single = level_vector(*with_entity(values, owners, np.array(["m3"], object)), max_levels)
    assert single["m3"] - before["m3"] == pytest.approx(1.0)
    assert {level: single[level] for level in before} == {**before, "m3": single["m3"]}


def test_gaps_are_left_out_and_do_not_dilute_their_entity() -> None:
    values, owners = table(7)
    gappy = with_entity(values, owners, np.array([np.nan, np.nan, 3.0]))
    plain = with_entity(values, owners, np.array([3.0]))
    np.testing.assert_array_equal(
        mech.entity_histogram(*gappy, GRID), mech.entity_histogram(*plain, GRID)
    )
    levels, counts, holders = mech.entity_level_counts(
        np.array(["a", None, np.nan, "a", "b"], object), np.array([0, 0, 0, 1, 1])
    )
    assert levels.tolist() == ["a", "b"] and counts.tolist() == [2.0, 0.0]  # a tie: the smaller
    assert holders.tolist() == [2, 0]


def test_quantiles_of_many_entities_are_within_two_bins_and_bounds_bracket_the_data() -> None:
    rng = np.random.default_rng(0)
    owners = np.repeat(np.arange(20_000), rng.integers(1, 4, 20_000))
    values = rng.lognormal(4, 1.5, len(owners)) * np.where(rng.random(len(owners)) < 0.2, -1, 1)
    probabilities = np.array([0.01, 0.05, 0.1, 0.3, 0.5, 0.8, 0.95, 0.99])
    exact = weighted_quantiles(values, owners, probabilities)
    every = np.linspace(0.005, 0.995, 199)  # near 0 (at 0.2) bins are sparse: count ranks there
    ordered, cdf = weighted(values, owners)
    for seed in range(3):
        found, event = mech.dp_quantiles(
            values, owners, probabilities, 1.0, np.random.default_rng(seed)
        )
        assert event == dp_accounting.GaussianDpEvent(1.0)
        off = np.abs(mech.bin_index(found, GRID) - mech.bin_index(exact, GRID))
        assert off.max() <= 2, (found, exact)
        found, _ = mech.dp_quantiles(values, owners, every, 1.0, np.random.default_rng(seed))
        ranks = cdf[np.searchsorted(ordered, found, side="right") - 1]
        assert np.abs(ranks - every).max() < 0.002  # 40 of 20,000 entities
        (low, high), _ = mech.dp_bounds(values, owners, 1.0, np.random.default_rng(seed))
        assert low in GRID and high in GRID
        outside = (values < low) | (values > high)
        assert 0 < outside.mean() < 0.005  # 0.1% a side, a little more where tails are pulled in
        assert low > 10 * values.min() and high < 10 * values.max()
    unnoised, _ = mech.dp_quantiles(values, owners, probabilities, 0.0, np.random.default_rng(0))
    assert (mech.bin_index(unnoised, GRID) == mech.bin_index(exact, GRID)).all()


def test_bounds_of_few_entities_never_wander_into_the_empty_grid() -> None:
    """500 entities, noise 2: tails of a few entities are noise-sized, and no bound of 40 draws
    lands a decade past the data (spreading weak evidence by its noisy counts did, 1 in 5)."""
    for seed in range(40):
        rng = np.random.default_rng(seed)
        values = rng.lognormal(3, 1.5, 500) * np.where(rng.random(500) < 0.2, -1, 1)
        (low, high), _ = mech.dp_bounds(values, np.arange(500), 2.0, rng)
        assert 10 * values.min() < low < high < 10 * values.max()


def test_values_far_outside_the_grid_land_in_the_end_bins() -> None:
    values = np.array([-1e300, -np.inf, 1e200, np.inf, 1e16] * 40)
    found, _ = mech.dp_quantiles(
        values, np.arange(200), [0.0, 0.1, 0.5, 0.9, 1.0], 0.5, np.random.default_rng(1)
    )
    assert np.isfinite(found).all() and (np.diff(found) >= 0).all()
    assert found[1] < GRID[1] and found[3] > GRID[-2]
    (low, high), _ = mech.dp_bounds(values, np.arange(200), 0.5, np.random.default_rng(1))
    assert (low, high) == (GRID[0], GRID[-1])


def test_quantiles_never_decrease_and_keep_the_order_they_were_asked_in() -> None:
    values, owners = table(3)
    probabilities = np.random.default_rng(0).random(50)
    found, _ = mech.dp_quantiles(values, owners, probabilities, 3.0, np.random.default_rng(0))
    order = np.argsort(probabilities)
    assert (np.diff(found[order]) >= 0).all() and len(set(found.tolist())) > 10
    with pytest.raises(ValueError, match="probabilities"):
        mech.dp_quantiles(values, owners, [0.5, 1.5], 1.0, np.random.default_rng(0))


def test_no_data_or_only_noise_still_answers_within_the_grid() -> None:
    empty = np.array([], float), np.array([], np.int64)
    found, _ = mech.dp_quantiles(*empty, [0, 0.5, 1], 1.0, np.random.default_rng(0))
    assert (GRID[0] <= found).all() and (found <= GRID[-1]).all() and (np.diff(found) >= 0).all()
    assert mech.noisy_count(empty[1], 0.0, np.random.default_rng(0))[0] == 0


def test_a_level_fewer_than_k_entities_hold_never_ships_whatever_its_rows() -> None:
    few = ["rare"] * 5_000 * (K - 1)  # k - 1 entities of 5,000 rows each
    owners = np.repeat(np.arange(K - 1), 5_000)
    common = [f"m{i % 3}" for i in range(600)]
    values = np.array(few + common + ["solo"] * 50, object)
    owners = np.concatenate([owners, 100 + np.arange(600), np.full(50, 999)])
    kept, event, _ = mech.dp_levels(
        values, owners, 0.0, float(K), np.random.default_rng(0), min_entities=K
    )
    assert set(kept) == {"m0", "m1", "m2"} and event == dp_accounting.GaussianDpEvent(0.0)
    for seed in range(50):  # noise 10 would pass a count of 4 or 1 against K half the time
        kept, _, _ = mech.dp_levels(
            values, owners, 10.0, float(K), np.random.default_rng(seed), min_entities=K
        )
        assert set(kept) == {"m0", "m1", "m2"}
    counts = dict(zip(*mech.entity_level_counts(values, owners)[:2], strict=True))
    assert counts["rare"] == K - 1 and counts["solo"] == 1  # what the noise alone would pass
    one_more = np.concatenate([values, ["rare"]]), np.concatenate([owners, [5000]])
    kept, _, _ = mech.dp_levels(*one_more, 0.0, float(K), np.random.default_rng(0), min_entities=K)
    assert "rare" in kept and kept["rare"] == K


def test_only_the_entitys_most_held_levels_count_towards_k() -> None:
    """An entity's other levels neither weigh nor make it a holder (max_levels = 1)."""
    owners = np.repeat(np.arange(K), 10)
    values = np.array((["a"] * 9 + ["b"]) * K, object)
    levels, counts, holders = mech.entity_level_counts(values, owners)
    assert levels.tolist() == ["a", "b"] and counts.tolist() == [K, 0]
    assert holders.tolist() == [K, 0]
    kept, _, _ = mech.dp_levels(values, owners, 0.0, K, np.random.default_rng(0), min_entities=K)
    assert kept == {"a": K}
    kept, _, _ = mech.dp_levels(
        values, owners, 0.0, 0.5 + K, np.random.default_rng(0), min_entities=K, max_levels=2
    )
    assert kept == {} and mech.entity_level_counts(values, owners, 2)[2].tolist() == [K, K]


def test_a_common_level_is_kept_under_noise() -> None:
    rng = np.random.default_rng(3)
    owners = rng.integers(0, 3000, 9000)
    values = rng.choice(np.array(["grocery", "fuel", "travel"], object), 9000, p=[0.6, 0.35, 0.05])
    threshold = mech.threshold_for(1.0, 1e-9, min_entities=K)
    kept, _, delta = mech.dp_levels(values, owners, 1.0, threshold, rng, min_entities=K)
    assert set(kept) == {"grocery", "fuel", "travel"} and delta == pytest.approx(1e-9, rel=1e-6)
    exact = dict(zip(*mech.entity_level_counts(values, owners)[:2], strict=True))
    assert all(abs(kept[level] - exact[level]) < 5 for level in kept)  # noise 1
    assert exact["travel"] > 20 and sum(exact.values()) == pytest.approx(len(np.unique(owners)))


@pytest.mark.parametrize(
    ("sigma", "threshold", "max_levels"), [(1, 11, 1), (3.5, 30, 4), (0.2, 5, 2)]
)
def test_the_selection_delta_is_the_normal_tail_and_threshold_for_inverts_it(
    sigma: float, threshold: float, max_levels: int
) -> None:
    delta = mech.selection_delta_for(sigma, threshold, min_entities=K, max_levels=max_levels)
    expected = norm.sf((threshold - K) / sigma) + (max_levels - 1) * norm.sf(
        (threshold - K + 1) / sigma
    )
    assert delta == pytest.approx(min(expected, 1.0), rel=1e-9)
    if delta < 1:
        found = mech.threshold_for(sigma, delta, min_entities=K, max_levels=max_levels)
        assert found == pytest.approx(threshold, rel=1e-7)
    target = 1e-7
    found = mech.threshold_for(sigma, target, min_entities=K, max_levels=max_levels)
    assert mech.selection_delta_for(sigma, found, min_entities=K, max_levels=max_levels) <= target
    below = mech.selection_delta_for(sigma, found - 1e-3, min_entities=K, max_levels=max_levels)
    assert below > target
    with pytest.raises(ValueError, match="below min_entities"):
        mech.selection_delta_for(sigma, K - 0.5, min_entities=K)


def test_the_entity_that_completes_k_holders_passes_as_often_as_the_delta_says() -> None:
    """The worst case of the delta, simulated: k - 1 single-row entities hold a level and one
    more single-row entity makes it k; the level is released as often as selection_delta."""
    sigma = 1.0
    threshold = mech.threshold_for(sigma, 0.05, min_entities=K)
    values = np.array(["x"] * K + ["y"] * 20 * K, object)
    owners = np.arange(21 * K)
    rng = np.random.default_rng(11)
    passed = [
        "x" in mech.dp_levels(values, owners, sigma, threshold, rng, min_entities=K)[0]
        for _ in range(4000)
    ]
    assert np.mean(passed) == pytest.approx(0.05, abs=0.012)  # 3.5 standard errors
    assert math.isclose(threshold, K + norm.isf(0.05), rel_tol=1e-6)


def test_counts_and_shares() -> None:
    owners = np.array([0, 0, 0, 0, 1, 2, 2])
    gaps = np.array([True, False, False, False, True, False, False])
    share, event = mech.noisy_share(gaps, owners, 0.0, np.random.default_rng(0))
    assert share == pytest.approx((0.25 + 1 + 0) / 3) and event.noise_multiplier == 0
    assert mech.noisy_count(owners, 0.0, np.random.default_rng(0))[0] == 3
    counts = [mech.noisy_count(owners, 2.0, np.random.default_rng(s))[0] for s in range(2000)]
    assert np.mean(counts) == pytest.approx(3, abs=0.2) and np.std(counts) == pytest.approx(2, 0.1)


def test_a_seeded_generator_gives_the_same_answers_and_events() -> None:
    values, owners = table(5)
    levels = np.array([f"l{v % 9}" for v in owners], object)
    mask = np.isnan(values)

    def run(seed: int) -> list:
        rng = np.random.default_rng(seed)
        return [
            mech.noisy_histogram(values, owners, GRID[::40], 2.0, rng),
            mech.dp_quantiles(values, owners, [0.1, 0.5, 0.9], 2.0, rng),
            mech.dp_bounds(values, owners, 2.0, rng),
            mech.noisy_count(owners, 2.0, rng),
            mech.noisy_share(mask, owners, 2.0, rng),
            mech.dp_levels(levels, owners, 2.0, 20.0, rng, min_entities=K)[:2],
        ]

    first, again, other = run(4), run(4), run(5)
    for (a, event), (b, _), (c, _) in zip(first, again, other, strict=True):
        assert event == dp_accounting.GaussianDpEvent(2.0)
        assert repr(a) == repr(b) and repr(a) != repr(c)
