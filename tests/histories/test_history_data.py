"""A table as customers over time (data.time): the columns' roles, windows, the split by entity,
the encoding, and every mistake a user can make with them as one line."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from support.docs import documented, one_line
from support.histories import customer_transactions, history_config, prepared_histories

from wgangp.config import DataConfig
from wgangp.data.histories.encoding import HistoryEncoding
from wgangp.data.histories.roles import attribute_columns, free_prefix, shared_columns
from wgangp.data.histories.windows import (
    WEEK,
    cut_windows,
    from_wall_seconds,
    wall_seconds,
    week_phases,
)
from wgangp.data.schema.inference import infer_table
from wgangp.data.schema.table_schema import ColumnSchema
from wgangp.errors import ConfigError, DataError

ORIGIN = "DataFrame(1931 rows)"


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return customer_transactions(80, 14)


def test_roles_are_found_by_content(table: pd.DataFrame) -> None:
    _, data = prepared_histories(table)
    roles = data.roles
    assert (roles.entity, roles.time, roles.label) == ("card_id", "ts", "is_fraud")
    assert roles.attributes == ("home", "card")  # constant within every card
    assert roles.records == ("amount", "merchant")
    assert roles.shared == ("terminal",)  # codes shared by many cards: never a feature
    assert roles.order == tuple(table.columns)
    assert "terminal" not in data.rows.schema.names and "card_id" not in data.rows.schema.names
    # The shared column rejoins the rows as codes: no real terminal travels with them.
    assert data.rows.train["terminal"].dtype == np.int64


def test_a_terminal_the_row_schema_drops_as_an_identifier_stays_a_shared_id(
    table: pd.DataFrame,
) -> None:
    """Issue 67's rules drop a terminal most of whose values fewer than k cards use (as rows, it
    is an identifier); with data.time it is infrastructure the customers share (P3), set aside
    before the schema is inferred and sampled as new pseudonyms."""
    rows = infer_table(table, "is_fraud", None, source="t", entity="card_id")
    assert "terminal" in {found.column for found in rows.identifiers}
    _, data = prepared_histories(table)
    assert data.roles.shared == ("terminal",)
    assert data.rows.train["terminal"].nunique() > 50


def test_a_shared_column_is_detected_only_when_shared_and_id_like() -> None:
    owners = np.repeat(np.arange(40), 5)
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "terminal_id": rng.integers(0, 60, 200),  # whole numbers under an id-like name
            "quantity": rng.integers(0, 60, 200),  # whole numbers, no id-like name
            "device": [f"D{v:03d}" for v in rng.integers(0, 50, 200)],  # text codes
            "own_code": [f"X{o:03d}-{i}" for i, o in enumerate(owners)],  # one owner each
            "zip": [f"Z{o:03d}" for o in owners],  # constant within an owner: an attribute
        }
    )
    assert shared_columns(frame, owners, (), None) == ("terminal_id", "device")
    assert shared_columns(frame, owners, (), ["quantity"]) == ("quantity",)
    assert attribute_columns(frame, owners, list(frame.columns)) == ("zip",)


def test_no_real_value_starts_with_a_chosen_prefix() -> None:
    values = pd.Series(["syn-card-1", "syn-cardx-2", "C1"])
    prefix = free_prefix(values, "syn-card-")
    assert not values.str.startswith(prefix).any()


def test_windows_keep_each_entity_in_time_order_with_ties_as_given() -> None:
    frame = pd.DataFrame(
        {
            "card_id": [1, 0, 1, 1, 0, 1, 1],
            "ts": pd.to_datetime(
                [
                    "2024-01-01 10:00",
                    "2024-01-02 00:00",
                    "2024-01-01 09:00",
                    "2024-01-01 10:00",
                    "2024-01-01 00:00",
                    "2024-01-03 00:00",
                    "2024-01-04 00:00",
                ]
            ),  # fmt: skip
            "order": range(7),
        }
    )
    classes = np.array([0, 0, 1, 0, 0, 0, 0])
    column = ColumnSchema("ts", "datetime")
    w = cut_windows(frame, entity="card_id", time_column=column, row_classes=classes, max_length=3)
    assert w.rows["order"].tolist() == [4, 1, 2, 0, 3, 5, 6]  # ties keep the table's order
    assert w.lengths.tolist() == [2, 3, 2]  # the card of 5 rows is two windows
    assert w.owners.tolist() == [0, 1, 1] and w.classes.tolist() == [0, 1, 0]
    assert w.gaps.tolist() == [0.0, 86_400.0, 0.0, 3600.0, 0.0, 0.0, 86_400.0]
    assert w.position.tolist() == [0, 1, 0, 1, 2, 0, 1]


def test_wall_clock_time_comes_back_in_its_zone_never_decreasing() -> None:
    # Around the night clocks go back in Paris (2024-10-27), and forward (2024-03-31).
    times = pd.Series(pd.to_datetime(
        ["2024-10-27 01:30", "2024-10-27 02:30", "2024-10-27 03:10", "2024-03-31 01:59",
         "2024-03-31 03:01"]
    )).dt.tz_localize("Europe/Paris", ambiguous=True, nonexistent="shift_forward")  # fmt: skip
    column = ColumnSchema("ts", "datetime", zone="Europe/Paris")
    seconds = wall_seconds(times, column)
    assert np.all(np.diff(seconds[:3]) > 0)  # wall clock: 01:30, 02:30, 03:10
    back = from_wall_seconds(np.sort(seconds), column)
    assert str(back.dt.tz) == "Europe/Paris"
    assert back.dt.strftime("%H:%M").tolist() == ["01:59", "03:01", "01:30", "02:30", "03:10"]
    assert back.is_monotonic_increasing  # instants in the order of the wall clock


def test_week_phases_are_the_day_and_the_week() -> None:
    monday_noon = wall_seconds(pd.Series(pd.to_datetime(["2024-03-04 12:00"])),
                               ColumnSchema("ts", "datetime"))  # fmt: skip
    a, b = week_phases(monday_noon), week_phases(monday_noon + WEEK)
    np.testing.assert_allclose(a, b, atol=1e-9)
    day = week_phases(monday_noon + 86_400.0)
    np.testing.assert_allclose(day[:, 2:], a[:, 2:], atol=1e-9)  # same time of day
    assert not np.allclose(day[:, :2], a[:, :2])  # another day of the week


def test_every_split_holds_whole_entities(table: pd.DataFrame) -> None:
    _, data = prepared_histories(table)
    parts = [set(getattr(data.rows, p)["card_id"]) for p in ("train", "val", "test")]
    assert not (parts[0] & parts[1]) and not (parts[0] & parts[2]) and not (parts[1] & parts[2])
    assert sum(len(p) for p in parts) == table["card_id"].nunique()


def test_the_encoding_maps_windows_and_reads_back(table: pd.DataFrame) -> None:
    cfg, data = prepared_histories(table)
    windows = data.windows("train", cfg.history.max_length)
    encoding = HistoryEncoding.fit(windows, data.roles, data.rows.schema, cfg)
    arrays = encoding.arrays(windows)
    n, t = windows.count, cfg.history.max_length
    assert arrays.records.shape == (n, t, encoding.record_width)
    assert arrays.attributes.shape == (n, encoding.attribute_width)
    np.testing.assert_array_equal(arrays.mask.sum(1), windows.lengths)
    assert np.isfinite(arrays.records).all() and np.isfinite(arrays.attributes).all()
    assert (arrays.records[:, 0, 0] == 0).all()  # a first record has no gap
    days = np.round(encoding.days.inverse(arrays.records[windows.window, windows.position, 0]))
    later = windows.position > 0
    bound = np.expm1(encoding.days.high)  # the mean of the 5 longest customers' skips
    inside = later & (windows.days <= bound)
    np.testing.assert_array_equal(days[inside], windows.days[inside])
    assert bound < windows.days.max()
    # Whole days, then forward to the row's time of day: every gap, exactly.
    tod = np.mod(windows.seconds, 86_400.0)
    previous = np.r_[tod[:1], tod[:-1]]
    wrap = np.mod(tod - previous, 86_400.0)
    np.testing.assert_allclose((windows.days * 86_400.0 + wrap)[later], windows.gaps[later])
    again = HistoryEncoding.from_dict(encoding.to_dict(), "test")
    np.testing.assert_array_equal(again.arrays(windows).records, arrays.records)


def test_a_rare_customers_value_is_not_stored(table: pd.DataFrame) -> None:
    """A home city one customer holds is no level of the model: it reads as ``other``."""
    table = table.copy()
    table.loc[table["card_id"] == "C00003", "home"] = "tiny-village"
    cfg, data = prepared_histories(table)
    levels = data.rows.schema.column("home").levels
    assert "tiny-village" not in levels and "other" in levels
    encoding = HistoryEncoding.fit(data.windows("train", 16), data.roles, data.rows.schema, cfg)
    assert "tiny-village" not in str(encoding.to_dict())
    assert "C00003" not in str(encoding.to_dict())


# -- one line for each mistake ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "line"),
    [
        (["data.time=ts"], "invalid config value data.time: 'ts' orders each customer's rows: set "
         "data.entity=<the customer, card or account column> too"),
        (["data.time=ts", "data.entity=card_id", "privacy.epsilon=3"],
         "invalid config value data.time: 'ts' is not supported under privacy.epsilon; "
         "differential privacy for histories is not built yet: set privacy.epsilon=null, or drop "
         "data.time to train on rows"),
        (["data.time=card_id", "data.entity=card_id"],
         "invalid config value data.time: 'card_id' is data.entity; name the time column"),
        (["data.shared=[terminal]"], "invalid config value data.shared: names columns customers "
         "share over time: set data.time=<column> too"),
        (["data.time=ts", "data.entity=card_id", "trainer.refit=true"],
         "invalid config value trainer.refit: true is not supported with data.time (a history "
         "model); set trainer.refit=false"),
    ],
)  # fmt: skip
def test_config_mistakes_are_one_line(overrides: list[str], line: str) -> None:
    from support.configs import compose

    from wgangp.config import to_config

    with pytest.raises(ConfigError) as err:
        to_config(compose(["data.label=is_fraud", *overrides]))
    assert one_line(err) == documented(line)


def _prepare(table: pd.DataFrame, **data: object) -> None:
    from pathlib import Path

    from wgangp.data.histories.prepare import prepare_histories

    cfg = history_config()
    settings = {"label": "is_fraud", "entity": "card_id", "time": "ts", "path": None, **data}
    prepare_histories(DataConfig(**settings), seed=cfg.seed, launch_dir=Path("."), frame=table)


def test_a_missing_time_column_is_one_line(table: pd.DataFrame) -> None:
    with pytest.raises(DataError) as err:
        _prepare(table, time="tss")
    line = f"{ORIGIN}: data.time=tss: column 'tss' is not in the table; did you mean 'ts'?"
    assert one_line(err) == line
    documented(line.replace(ORIGIN, "<path>"))


def test_an_empty_time_cell_is_one_line(table: pd.DataFrame) -> None:
    table = table.astype({"ts": object})
    table.loc[6, "ts"] = None
    with pytest.raises(DataError) as err:
        _prepare(table)
    line = (
        f"{ORIGIN}: data.time column ts has 1 empty cell(s) (first at data row 7); every row "
        "needs its time: fill or drop those rows"
    )
    assert one_line(err) == line
    documented(line.replace(ORIGIN, "<path>"))


def test_a_time_column_of_text_is_one_line(table: pd.DataFrame) -> None:
    table = table.assign(ts=np.where(np.arange(len(table)) % 2, "soon", "later"))
    with pytest.raises(DataError) as err:
        _prepare(table)
    line = (
        f"{ORIGIN}: data.time column ts holds text that is no date or time (e.g. 'later'), so "
        "its rows cannot be put in order; write its cells as 2024-03-01 12:30:00, or set its "
        "format: in data.schema"
    )
    assert one_line(err) == line
    documented(line.replace(ORIGIN, "<path>"))


def test_a_missing_entity_column_is_one_line(table: pd.DataFrame) -> None:
    with pytest.raises(DataError) as err:
        _prepare(table, entity="cardid")
    assert one_line(err) == (
        f"{ORIGIN}: data.entity=cardid: column 'cardid' is not in the table; did you mean "
        "'card_id' or 'card'?"
    )  # the row model's line (docs/errors.md, data.entity)


def test_a_shared_column_not_in_the_table_is_one_line(table: pd.DataFrame) -> None:
    with pytest.raises(DataError) as err:
        _prepare(table, shared=["terminl"])
    line = "data.shared=terminl: column 'terminl' is not in the table; did you mean 'terminal'?"
    assert one_line(err) == documented(line)
