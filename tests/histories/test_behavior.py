"""Behavioral measures on tables whose answers are worked out by hand, and the degradation ratios'
ends: a real half against itself reads 1.0, rows dealt to customers at random read far above."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scripts.histories_benchmark.simulator import simulated_transactions
from wgangp.histories.behavior import (
    HistoryColumns,
    behavior_measures,
    behavioral_fidelity,
    degradation_ratio,
    geometric_mean,
    history_detection,
    history_features,
    real_halves,
)
from wgangp.histories.history_features import row_features
from wgangp.histories.timelines import Timeline, wall_seconds

COLS = HistoryColumns("c", "t", "y", 1, "amount", ("term",))


def burst_table() -> pd.DataFrame:
    """A: 3 rows within 20 minutes, then 3 apart; B: 3 rows over 3,601 s (no hour holds 3);
    C: 3 rows within exactly one hour. Rows listed out of order on purpose."""
    rows = [
        ("A", 0, 0, 10.0, "x"), ("A", 600, 1, 10.0, "y"), ("A", 1200, 1, 10.0, "z"),
        ("A", 10_000, 1, 100.0, "x"), ("A", 20_000, 0, 10.0, "y"), ("A", 20_100, 0, 10.0, "z"),
        ("B", 0, 0, 5.0, "x"), ("B", 3600, 0, 5.0, "y"), ("B", 3601, 1, 5.0, "x"),
        ("C", 0, 1, 1.0, "x"), ("C", 3600, 0, 1.0, "y"), ("C", 3600, 0, 1.0, "z"),
    ]  # fmt: skip
    frame = pd.DataFrame(rows, columns=["c", "t", "y", "amount", "term"])
    return frame.sample(frac=1.0, random_state=3).reset_index(drop=True)


def test_bursts_and_velocity_windows_by_hand() -> None:
    timeline = Timeline.of(burst_table(), COLS)
    assert timeline.in_burst().astype(int).tolist() == [1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1]
    assert timeline.backward_counts(3600).tolist() == [1, 2, 3, 1, 1, 2, 1, 2, 2, 1, 3, 3]
    assert timeline.longest_fraud_run().tolist() == [3, 1, 1]


def test_burst_share_of_fraud_rows_by_hand() -> None:
    # Fraud rows: A at 600 and 1200 (burst), A at 10000 (not), B at 3601 (not), C at 0 (burst).
    values, rate = behavior_measures(burst_table(), COLS)["P2.fraud_burst_share"]
    assert rate and values.mean() == pytest.approx(3 / 5)


def test_rules_and_degrees_by_hand() -> None:
    found = behavior_measures(burst_table(), COLS)
    # 3 in an hour: among fraud rows only A's row at 1200; among the rest C's two rows at 3600.
    assert found["P4.rule_3_in_1h.fraud"][0].sum() == 1
    assert found["P4.rule_3_in_1h.other"][0].sum() == 2
    # A's sixth row is its sixth within 24 h; A's 100.0 is over 3x its median 10.0.
    assert found["P4.rule_6_in_24h.other"][0].sum() == 1
    assert found["P4.rule_amount_3x_median.fraud"][0].sum() == 1
    # Fraud rows on x: A, B, C (3 customers); on y: A; on z: A.
    degrees = np.sort(np.exp(found["P3.log_degree.term"][0]))
    assert degrees.tolist() == pytest.approx([1.0, 1.0, 3.0])
    # P1: every gap is in a fraud-touched history here.
    assert len(found["P1.gaps_fraud_touched"][0]) == 9 and len(found["P1.gaps_other"][0]) == 0


def test_gap_autocorrelation_by_hand() -> None:
    # Log gaps 1,2,1,2: deviations -+-+ of 0.5, so (-0.25 * 3) / (0.25 * 4) = -0.75;
    # log gaps 1,1,2,2: (0.25 - 0.25 + 0.25) / 1.0 = 0.25.
    def history(name: str, logs: list[float]) -> pd.DataFrame:
        times = np.concatenate([[0.0], np.cumsum(np.expm1(logs))])
        return pd.DataFrame({"c": name, "t": times, "y": 0, "amount": 1.0, "term": "x"})

    frame = pd.concat([history("P", [1, 2, 1, 2]), history("Q", [1, 1, 2, 2])])
    assert Timeline.of(frame, COLS).gap_autocorrelation() == pytest.approx([-0.75, 0.25])
    short = history("R", [1, 2])  # two gaps: too few to say
    assert np.isnan(Timeline.of(short, COLS).gap_autocorrelation()[0])


def test_history_features_by_hand() -> None:
    features = history_features(burst_table(), COLS)
    assert features.index.tolist() == ["A", "B", "C"]
    a = features.loc["A"]
    assert a["rows"] == 6 and a["fraud_rows"] == 3 and a["fraud_episode"] == 3
    assert a["burst_share"] == pytest.approx(0.5)
    assert a["gap_min"] == pytest.approx(np.log1p(100))
    assert a["gap_max"] == pytest.approx(np.log1p(10_000))
    assert a["fraud_span_log"] == pytest.approx(np.log1p(9400))
    assert features.loc["C", "gap_min"] == 0.0  # two rows at the same second
    assert features.loc["A", "term_distinct_share"] == pytest.approx(0.5)


def test_zoned_datetimes_read_on_their_wall_clock() -> None:
    times = pd.Series(pd.to_datetime(["2024-01-06 23:30"]).tz_localize("Europe/Paris"))
    frame = pd.DataFrame({"c": "A", "t": times, "y": 0})
    timeline = Timeline.of(frame, HistoryColumns("c", "t", "y", 1))
    assert timeline.hours_of_day()[0] == pytest.approx(23.5)
    assert timeline.weekdays()[0] == 5  # a Saturday
    assert wall_seconds(pd.Series([1.5, 2.0])).tolist() == [1.5, 2.0]


def test_row_features_keep_the_frames_order() -> None:
    frame = burst_table()
    rows = row_features(frame, COLS)
    assert rows.index.equals(frame.index)
    assert (rows["fraud"].to_numpy() == frame["y"].to_numpy()).all()
    at = frame.index[(frame["c"] == "C") & (frame["t"] == 3600)]
    assert rows.loc[at, "count_1h"].tolist() == [3.0, 3.0]


def test_degradation_ratio_by_hand() -> None:
    a = np.array([0.0, 1.0, 2.0, 3.0])
    assert degradation_ratio(a, a + 0.5, a + 2.0, rate=False) == pytest.approx(4.0)
    rate = degradation_ratio(np.array([1, 1, 0, 0.0]), np.array([1, 0, 0, 0.0]), np.zeros(4), True)
    assert rate == pytest.approx(2.0)
    # Equal halves (a zero floor): both distances raised to 1/n = 0.1.
    zeros = np.zeros(10)
    two = np.array([1.0, 1.0] + [0.0] * 8)
    assert degradation_ratio(zeros, zeros, two, rate=True) == pytest.approx(2.0)
    assert degradation_ratio(zeros, zeros, zeros, rate=True) == pytest.approx(1.0)
    assert degradation_ratio(a, a + 0.5, np.array([]), rate=False) == np.inf
    assert np.isnan(degradation_ratio(np.array([]), a, a, rate=False))
    assert geometric_mean([2.0, 8.0, float("nan")]) == pytest.approx(4.0)


@pytest.fixture(scope="module")
def simulated() -> pd.DataFrame:
    return simulated_transactions(customers=600, terminals=300, days=21, seed=1)


SIM = HistoryColumns("customer_id", "ts", "is_fraud", 1, "amount", ("terminal_id",))


def test_a_real_half_against_itself_reads_one(simulated: pd.DataFrame) -> None:
    a, b = real_halves(simulated, SIM, seed=0)
    assert set(a["customer_id"]).isdisjoint(b["customer_id"])
    touched = [half.groupby("customer_id")["is_fraud"].max().sum() for half in (a, b)]
    assert abs(touched[0] - touched[1]) <= 1  # fraud-touched customers split evenly
    figures = behavioral_fidelity(a, b, b, SIM)
    ratios = {k: v for k, v in figures.items() if k.startswith("P") and np.isfinite(v)}
    assert len(ratios) >= 12 and all(v == pytest.approx(1.0) for v in ratios.values())
    assert figures["geometric_mean"] == pytest.approx(1.0)


def test_rows_dealt_at_random_lose_the_behavior(simulated: pd.DataFrame) -> None:
    a, b = real_halves(simulated, SIM, seed=0)
    dealt = b.copy()
    rng = np.random.default_rng(0)
    dealt["customer_id"] = rng.choice(b["customer_id"].unique(), len(b))
    figures = behavioral_fidelity(a, b, dealt, SIM)
    assert figures["P2.fraud_burst_share"] > 3.0
    assert figures["P4.rule_3_in_1h.fraud"] > 3.0
    assert figures["geometric_mean"] > 3.0


def test_the_synthetic_side_is_cut_to_a_halfs_entities(simulated: pd.DataFrame) -> None:
    a, b = real_halves(simulated, SIM, seed=0)
    twice = pd.concat([b, b.assign(customer_id=b["customer_id"] + "-copy")])
    figures = behavioral_fidelity(a, b, twice, SIM, seed=2)
    assert figures["entities_synthetic"] == figures["entities_b"]


def test_history_detection_tells_scaled_gaps_and_not_another_half(
    simulated: pd.DataFrame,
) -> None:
    a, b = real_halves(simulated, SIM, seed=0)
    same = history_detection(a, b, SIM, seed=0, repeats=3, max_iter=50)
    assert 0.35 < same < 0.65
    slowed = b.assign(ts=b["ts"].min() + (b["ts"] - b["ts"].min()) * 20)
    assert history_detection(a, slowed, SIM, seed=0, repeats=3, max_iter=50) > 0.9
