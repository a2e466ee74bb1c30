"""``Synthesizer.sample(where=...)``: rows that meet every condition, drawn from the model's own
conditional distribution (a column not conditioned on is distributed as in unconditional rows
filtered by the same conditions), and one line for a condition the model cannot meet."""

from __future__ import annotations

import re
import time

import numpy as np
import pandas as pd
import pytest
from scipy.stats import ks_2samp
from support.docs import documented, one_line
from support.synthesizers import creditcard_synthesizer, fraud_team_synthesizer

from wgangp.serving.conditions import MAX_DRAWN, Condition, ConditionError, sample_where


@pytest.fixture(scope="module")
def model():
    return fraud_team_synthesizer()


def test_every_row_meets_every_condition(model) -> None:
    """Conditions on a level, a number and a date, each met by a fair share of what the
    untrained model makes (read off an unconditional draw)."""
    drawn = model.sample(20_000, seed=9)
    merchants = list(drawn["merchant"].value_counts().index[:2])
    amount = float(drawn["amount"].quantile(0.3))
    day = drawn["day"].quantile(0.3).isoformat()
    where = {"merchant": merchants, "amount": [amount, None], "day": [day, None]}
    rows = model.sample(500, where=where, seed=4)
    assert len(rows) == 500
    assert set(rows["merchant"]) <= set(merchants)
    assert (rows["amount"] >= amount).all()
    assert (rows["day"] >= pd.Timestamp(day)).all()
    assert (rows["is_fraud"] == "yes").all()
    counts = model.sample(2000, label="no", seed=4)["count"]
    low, high = int(counts.quantile(0.2)), int(counts.quantile(0.8))
    rest = model.sample(50, label="no", where={"count": [low, high]}, seed=4)
    assert (rest["is_fraud"] == "no").all() and rest["count"].between(low, high).all()


def test_a_column_not_conditioned_on_keeps_its_conditional_distribution(model) -> None:
    """Rejection, not overwriting: the conditioned rows' amounts and counts are distributed as
    the unconditional rows' among those that meet the conditions (two independent draws). The
    conditions are the commonest merchant and the earlier half of the days, whatever the
    untrained model makes."""
    unconditional = model.sample(60_000, seed=12)
    merchant = unconditional["merchant"].value_counts().index[0]
    day = unconditional["day"].median().isoformat()
    conditioned = model.sample(3000, where={"merchant": [merchant], "day": [None, day]}, seed=11)
    met = unconditional["merchant"].eq(merchant) & (unconditional["day"] <= pd.Timestamp(day))
    filtered = unconditional[met]
    assert len(filtered) > 2000
    assert (conditioned["merchant"] == merchant).all()
    for column in ("amount", "count"):
        a, b = conditioned[column].dropna(), filtered[column].dropna()
        assert ks_2samp(a, b).pvalue > 1e-3, column
    gaps = conditioned["amount"].isna().mean() - filtered["amount"].isna().mean()
    assert abs(gaps) < 0.03


def test_no_condition_returns_the_unconditional_rows(model) -> None:
    plain = model.sample(200, seed=5)
    pd.testing.assert_frame_equal(model.sample(200, seed=5, where={}), plain)
    pd.testing.assert_frame_equal(plain, model.sample_class(200, 1, seed=5))
    assert len(model.sample(200, seed=5, where={"count": [None, None]})) == 200
    empty = model.sample(0, seed=5, where={"merchant": ["online"]})
    assert len(empty) == 0 and list(empty.columns) == list(plain.columns)


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ({"merchnt": ["online"]}, "where: 'merchnt' is not a column of the samples; did you mean "
         "'merchant'?"),
        ({"merchant": ["bakery"]}, "where: bakery is not a level of merchant the model makes; "
         "its levels are grocery, online, travel"),
        ({"merchant": []}, "where: merchant lists no level; give at least one"),
        ({"amount": [5000, None]}, "where: amount in [5000, null] lies outside the values the "
         "model makes (1.588 to 1824.908)"),
        ({"amount": [10, 5]}, "where: amount's range [10, 5] is empty (low > high)"),
        ({"amount": 300}, "where: amount is a continuous column: give a range [low, high] (null "
         "for an open end), got 300"),
        ({"amount": ["cheap", None]}, "where: amount is a number column: give finite numbers or "
         "null, got cheap"),
        ({"day": ["last week", None]}, "where: day is a datetime column: give ISO dates "
         "(2024-03-01 or 2024-03-01T23:00), got last week"),
        ({"day": ["2030-01-01", None]}, "where: day in [2030-01-01, null] lies outside the "
         "values the model makes (2024-01-01T00:00:00 to 2024-03-30T00:00:00)"),
        ({"is_fraud": ["yes"]}, "where: is_fraud is the label; ask for its class with label= "
         "(one class a call)"),
        (["merchant"], "where must map columns to levels or [low, high] ranges, got "
         "['merchant']; e.g. where={merchant: [online], amount: [500, null]}"),
    ],
)  # fmt: skip
def test_a_condition_the_schema_refuses_is_one_line(model, where, expected) -> None:
    with pytest.raises(ConditionError) as err:
        model.sample(10, where=where, seed=0)
    assert one_line(err) == expected
    if not isinstance(where, list):
        documented(expected)


def test_a_condition_too_rare_fails_in_one_line_within_the_budget() -> None:
    """Kaggle's 31 columns: a window of Time between two whole seconds (which no row of an
    integer-rounded Time meets) beside two conditions every row meets. The search stops once the
    share met cannot reach n within MAX_DRAWN rows, and names the rarest."""
    model = creditcard_synthesizer()
    where = {"Amount": [0, None], "Time": [80_000.2, 80_000.4], "V1": [None, None]}
    started = time.perf_counter()
    with pytest.raises(ConditionError) as err:
        model.sample(1000, where=where, seed=0)
    elapsed = time.perf_counter() - started
    line = one_line(err)
    assert re.match(r"where: \d+ of [\d,]+ generated rows \([\d.]+%\) met every condition", line)
    assert "and 1000 are asked for; the rarest is Time in [80000.2, 80000.4] (" in line
    assert elapsed < 60  # bounded: well under MAX_DRAWN rows' time on a slow machine


def test_the_rounds_stop_at_the_budget_and_name_the_share() -> None:
    """A fake draw where 1 row in 1,000 meets the condition: 50 rows are found, 10,000 cannot
    be within the budget, and the line gives the share met."""
    drawn = []

    def draw(rows: int, seed: int) -> pd.DataFrame:
        drawn.append(rows)
        values = np.random.default_rng(seed).random(rows)
        return pd.DataFrame({"x": values})

    condition = Condition("x", "continuous", low=None, high=0.001, text="x in [null, 0.001]")
    rows = sample_where(draw, 50, (condition,), seed=1)
    assert len(rows) == 50 and (rows["x"] <= 0.001).all()
    drawn.clear()
    with pytest.raises(ConditionError) as err:
        sample_where(draw, 10_000, (condition,), seed=1)
    assert sum(drawn) <= MAX_DRAWN
    assert "met every condition and 10000 are asked for; the rarest is x in [null, 0.001]" in str(
        err.value
    )
    assert re.match(r"where: \d+ of 20,000 generated rows \(0\.0\d+%\) met", str(err.value))
    documented(one_line(err))


@pytest.fixture(scope="module")
def timed_model():
    """An untrained synthesizer of a table with an ``other`` level (merchants too few rows hold,
    grouped) and a timestamp of seconds (``ts``), as inference gives them."""
    from support.synthesizers import untrained_generator
    from support.tables import fraud_team_table

    from wgangp.data.schema.inference import infer_schema
    from wgangp.data.schema.validation import validate_table
    from wgangp.data.transform.table_transform import TableTransform
    from wgangp.serving.synthesizer import Synthesizer

    frame = fraud_team_table(2000, frauds=400, seed=3)
    rng = np.random.default_rng(3)
    frame.loc[:39, "merchant"] = [f"shop_{i}" for i in range(40)]  # each held by one row
    start = pd.Timestamp("2024-05-01")
    frame["ts"] = (start + pd.to_timedelta(rng.integers(0, 60 * 86400, 2000), "s")).astype(str)
    schema = infer_schema(frame, "is_fraud")
    assert schema.column("merchant").other == "other"
    table = validate_table(frame, schema, source="timed table", min_rows_per_class=1)
    transformer = TableTransform.fit(table, schema, schema.classes(table[schema.label]))
    return Synthesizer(untrained_generator(4, transformer.width), transformer, 4, schema)


def test_the_other_level_the_model_makes_can_be_asked_for(timed_model) -> None:
    """Unconditional rows hold ``other`` (the merchants too few rows hold): ``where`` may ask
    for it like any level."""
    assert (timed_model.sample(3000, seed=1)["merchant"] == "other").sum() > 30
    rows = timed_model.sample(40, where={"merchant": ["other"]}, seed=2)
    assert len(rows) == 40 and (rows["merchant"] == "other").all()


@pytest.mark.parametrize(
    "day", ["2024-06-01", __import__("datetime").date(2024, 6, 1)], ids=["text", "date"]
)
def test_a_day_as_both_ends_is_that_whole_day(timed_model, day) -> None:
    """``["2024-06-01", "2024-06-01"]`` on a timestamp of seconds: the day, not the instant of
    its midnight (which no row of a column of seconds meets)."""
    rows = timed_model.sample(30, where={"ts": [day, day]}, seed=3)
    assert len(rows) == 30
    assert rows["ts"].between(pd.Timestamp("2024-06-01"), pd.Timestamp("2024-06-02")).all()
    assert (rows["ts"] < pd.Timestamp("2024-06-02")).all() and rows["ts"].dt.hour.nunique() > 3
    later = timed_model.sample(20, where={"ts": ["2024-06-01T12:00", "2024-06-02"]}, seed=4)
    assert later["ts"].between(pd.Timestamp("2024-06-01 12:00"), pd.Timestamp("2024-06-03")).all()
    assert (later["ts"] >= pd.Timestamp("2024-06-01 12:00")).all()


@pytest.mark.parametrize("n", [2.5, "5", True, -1, None])
def test_a_number_of_rows_that_is_no_whole_number_is_one_line(n) -> None:
    from wgangp.errors import WgangpError

    model = creditcard_synthesizer()
    with pytest.raises(WgangpError) as err:
        model.sample(n)
    expected = f"n must be a whole number of rows >= 0, got {n!r}; e.g. synthesizer.sample(500)"
    assert one_line(err) == expected
    if n == 2.5:
        documented(expected)
    assert len(model.sample(5.0, seed=0)) == 5
    assert len(model.sample(__import__("numpy").int64(3), seed=0)) == 3


def test_a_draw_larger_than_the_memory_is_one_line_before_any_work(monkeypatch) -> None:
    """``sample(10**9)`` was a raw numpy MemoryError; the line counts the model's own width."""
    from wgangp.serving import memory
    from wgangp.serving.memory import DrawTooLargeError, draw_bytes_per_row

    model = creditcard_synthesizer()
    monkeypatch.setattr(memory, "available_memory", lambda: 2_000_000_000)
    monkeypatch.setattr(type(model), "sample_class", lambda *a, **k: pytest.fail("drew rows"))
    with pytest.raises(DrawTooLargeError) as err:
        model.sample(10**9)
    per_row = draw_bytes_per_row(model.latent_dim, model.width, len(model.columns))
    line = one_line(err)
    assert line.startswith(
        f"1,000,000,000 rows need about {10**9 * per_row / 1e9:.1f} GB of memory ({per_row:,} "
        f"bytes a row for this model: latent 4, width {model.width}, 31 columns) and 2.0 GB"
    )
    documented(line)


def test_a_memory_error_while_drawing_is_the_same_line(monkeypatch) -> None:
    from wgangp.serving import memory
    from wgangp.serving.memory import DrawTooLargeError

    model = creditcard_synthesizer()
    monkeypatch.setattr(memory, "available_memory", lambda: None)

    def out_of_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(type(model), "sample_class", out_of_memory)
    with pytest.raises(DrawTooLargeError) as err:
        model.sample(1000)
    assert one_line(err).startswith("1,000 rows need about ")
