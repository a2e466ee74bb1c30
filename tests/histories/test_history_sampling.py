"""What sample_histories promises, on a history model assembled as training assembles one (its
networks untrained: the contract holds whatever the weights)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support.docs import documented, one_line
from support.histories import customer_transactions, untrained_history_synthesizer

from wgangp.serving.conditions import ConditionError
from wgangp.serving.histories import HistorySynthesizer, load_bundle

ZONE = "Europe/Paris"


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    # Three weeks over the night Paris clocks go forward (2024-03-31): wall times it skips.
    return customer_transactions(80, 28, zone=ZONE)


@pytest.fixture(scope="module")
def model(table: pd.DataFrame) -> HistorySynthesizer:
    return untrained_history_synthesizer(table)


@pytest.fixture(scope="module")
def sample(model: HistorySynthesizer) -> pd.DataFrame:
    return model.sample_histories(60, seed=0)


def test_histories_come_back_in_the_tables_columns(
    model: HistorySynthesizer, sample: pd.DataFrame, table: pd.DataFrame
) -> None:
    assert list(sample.columns) == list(table.columns)
    assert sample["card_id"].nunique() == 60
    assert str(sample["ts"].dt.tz) == ZONE
    assert set(sample["is_fraud"]) <= {0, 1}
    assert set(sample["merchant"]) <= set(table["merchant"])


def test_timestamps_never_decrease_within_a_history(sample: pd.DataFrame) -> None:
    for _, rows in sample.groupby("card_id", sort=False):
        assert rows["ts"].is_monotonic_increasing


def test_histories_have_variable_lengths_within_the_window(
    model: HistorySynthesizer, sample: pd.DataFrame
) -> None:
    lengths = sample.groupby("card_id").size()
    assert lengths.min() >= 1 and lengths.max() <= model.encoding.max_length
    assert lengths.nunique() > 1


def test_attributes_are_one_value_per_history(sample: pd.DataFrame) -> None:
    assert (sample.groupby("card_id")[["home", "card"]].nunique() == 1).all().all()


def test_no_real_customer_or_shared_id_comes_back(
    sample: pd.DataFrame, table: pd.DataFrame
) -> None:
    assert not set(sample["card_id"]) & set(table["card_id"])
    assert not set(sample["terminal"].dropna()) & set(table["terminal"])
    assert sample["terminal"].notna().all()
    assert sample["terminal"].str.startswith("syn-terminal-").all()  # new pseudonyms


def test_label_asks_for_histories_with_or_without_a_rare_row(model: HistorySynthesizer) -> None:
    frauds = model.sample_histories(30, label=1, seed=1)
    assert (frauds.groupby("card_id")["is_fraud"].max() == 1).all()
    rest = model.sample_histories(30, label=0, seed=1)
    assert (rest["is_fraud"] == 0).all()


def test_the_same_seed_draws_the_same_histories(model: HistorySynthesizer) -> None:
    a, b = model.sample_histories(8, seed=5), model.sample_histories(8, seed=5)
    pd.testing.assert_frame_equal(a, b)
    c = model.sample_histories(8, seed=6)
    assert not set(a["card_id"]) & set(c["card_id"])  # two samples share no id


def test_where_conditions_the_attributes(model: HistorySynthesizer) -> None:
    rows = model.sample_histories(10, seed=2, where={"home": ["paris", "lyon"]})
    assert rows["card_id"].nunique() == 10
    assert set(rows["home"]) <= {"paris", "lyon"}


def test_where_on_a_record_column_is_one_line(model: HistorySynthesizer) -> None:
    with pytest.raises(ConditionError) as err:
        model.sample_histories(5, where={"amount": [10, None]})
    line = (
        "where: amount changes within a history; conditions take the attributes, one value per "
        "history (home, card)"
    )
    assert one_line(err) == documented(line)


def test_rows_of_a_history_model_are_refused_in_one_line(model: HistorySynthesizer) -> None:
    with pytest.raises(Exception) as err:
        model.sample(10)
    line = (
        "this model draws histories (it was trained with data.time): call "
        "sample_histories(n, label=..., seed=...), or python -m wgangp.sample histories=n"
    )
    assert one_line(err) == documented(line)


def test_the_bundle_saves_and_loads_as_a_unit(model: HistorySynthesizer, tmp_path: Path) -> None:
    folder = model.save(tmp_path / "synthesizer")
    loaded = load_bundle(folder)
    assert isinstance(loaded, HistorySynthesizer)
    pd.testing.assert_frame_equal(
        loaded.sample_histories(6, seed=3), model.sample_histories(6, seed=3)
    )
    stored = " ".join(p.read_text(errors="ignore") for p in folder.glob("*.json"))
    assert "C000" not in stored and "T0" not in stored  # no real card or terminal id


def test_too_rare_a_condition_is_one_line(
    model: HistorySynthesizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from wgangp.serving import histories

    monkeypatch.setattr(histories, "MAX_DRAWN", 2000)
    with pytest.raises(ConditionError) as err:
        model.sample_histories(1500, seed=0, where={"home": ["nantes"], "card": ["credit"]})
    assert re.fullmatch(
        r"where: \d+ of 2,000 generated histories met every condition and 1500 are asked for; "
        r"the rarest is (home in \[nantes\]|card in \[credit\]): the model rarely makes such "
        r"customers; widen the conditions or ask for fewer histories",
        one_line(err),
    )


def test_no_one_customers_rare_value_comes_back(table: pd.DataFrame) -> None:
    """A city and a merchant one customer holds are no level of the model: samples never show
    them (they read as the level standing for rare values)."""
    table = table.copy()
    one = table["card_id"] == table["card_id"].iloc[0]
    table.loc[one, "home"] = "tiny-village"
    table.loc[one & (np.arange(len(table)) % 2 == 0), "merchant"] = "one-shop"
    rows = untrained_history_synthesizer(table).sample_histories(200, seed=0)
    assert "tiny-village" not in set(rows["home"]) and "one-shop" not in set(rows["merchant"])


def test_more_histories_than_the_memory_holds_is_one_line_before_drawing(
    model: HistorySynthesizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``sample_histories(10**7)`` allocated until the kernel killed the notebook; it is counted
    per history (every slot of the window as a row) and refused before any noise is drawn."""
    from wgangp.serving import memory
    from wgangp.serving.memory import DrawTooLargeError

    monkeypatch.setattr(memory, "available_memory", lambda: 2_000_000_000)
    monkeypatch.setattr(type(model), "_generate", lambda *a, **k: pytest.fail("drew histories"))
    with pytest.raises(DrawTooLargeError) as err:
        model.sample_histories(10**7, seed=0)
    line = one_line(err)
    assert re.fullmatch(
        r"10,000,000 histories need about [\d.]+ GB of memory \([\d,]+ bytes a history of up to "
        rf"{model.encoding.max_length} rows for this model: latent \d+, width \d+, 8 columns\) "
        r"and 2\.0 GB are available; ask for at most about [\d,]+ histories a call and draw "
        r"several \(seed=\.\.\.\)",
        line,
    )
    documented(line)
