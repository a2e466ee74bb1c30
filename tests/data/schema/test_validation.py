"""validate_table on Kaggle's shipped schema: clean tables pass and come out typed; every defect
is one precise line that names what the file needs."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
import support.creditcard as schema

from wgangp.data.builtin.creditcard import HEADER
from wgangp.data.builtin.simulated import simulate_creditcard
from wgangp.data.schema.validation import validate_table
from wgangp.errors import DataError


def validate_frame(
    frame: pd.DataFrame, *, min_rows_per_class: int = 2, source: str = "data"
) -> pd.DataFrame:
    return validate_table(
        frame, schema.SCHEMA, source=source, min_rows_per_class=min_rows_per_class, header=HEADER
    )


@pytest.fixture
def frame() -> pd.DataFrame:
    return simulate_creditcard(n_rows=50, fraud_rate=0.1, seed=0)


def test_clean_frame_passes_unchanged(frame: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(validate_frame(frame), frame)


def test_reorders_columns_and_fixes_dtypes(frame: pd.DataFrame) -> None:
    shuffled = frame[list(reversed(schema.COLUMNS))].copy()
    shuffled[schema.TIME] = shuffled[schema.TIME].astype(np.int64)
    shuffled[schema.LABEL] = shuffled[schema.LABEL].astype(np.float64)
    shuffled["V3"] = shuffled["V3"].map(repr)  # numbers stored as text, e.g. from a quoted file
    shuffled.index = shuffled.index + 100

    clean = validate_frame(shuffled)

    assert tuple(clean.columns) == schema.COLUMNS
    assert (clean[list(schema.FEATURES)].dtypes == np.float64).all()
    assert clean[schema.LABEL].dtype == np.int64
    assert isinstance(clean.index, pd.RangeIndex)
    pd.testing.assert_frame_equal(clean, frame)


def test_does_not_modify_its_input(frame: pd.DataFrame) -> None:
    before = frame.copy()
    frame.loc[0, "V1"] = np.nan
    with pytest.raises(DataError):
        validate_frame(frame)
    frame.loc[0, "V1"] = before.loc[0, "V1"]
    pd.testing.assert_frame_equal(frame, before)


def _set(column: str, row: int, value: object) -> Callable[[pd.DataFrame], pd.DataFrame]:
    def mutate(df: pd.DataFrame) -> pd.DataFrame:
        df = df.astype({column: object}) if isinstance(value, str) else df.copy()
        df.loc[row, column] = value
        return df

    return mutate


def _set_many(column: str, rows: list[int], value: float) -> Callable[[pd.DataFrame], pd.DataFrame]:
    def mutate(df: pd.DataFrame) -> pd.DataFrame:
        df = df.astype({column: np.float64})
        df.loc[rows, column] = value
        return df

    return mutate


CASES = {
    "missing column": (lambda df: df.drop(columns=["V7"]), ["V7", "not in the table"]),
    "renamed header": (
        lambda df: df.rename(columns={"Amount": "amount"}),
        ["column(s) Amount of the schema", "(renamed? the table has amount)", "31 columns"],
    ),
    "duplicate column": (
        lambda df: pd.concat([df, df[["V2"]]], axis=1),
        ["V2", "more than once"],
    ),
    "text cell": (_set("V5", 3, "12,5 EUR"), ["V5", "1 non-numeric", "row 4", "'12,5 EUR'"]),
    "long multi-line text cell": (_set("V5", 0, "x\n" * 200), ["V5", "non-numeric", "..."]),
    "NaN": (_set_many("V9", [2, 5, 6], np.nan), ["V9", "3 missing value(s)", "row 3"]),
    "empty text cell": (_set("V9", 1, " "), ["V9", "1 missing value(s)"]),
    "+inf": (_set_many("V10", [1, 4], np.inf), ["V10", "2 infinite"]),
    "-inf": (_set("Time", 0, -np.inf), ["Time", "1 infinite"]),
    "NaN in Class": (_set_many("Class", [0], np.nan), ["Class", "1 missing value(s)"]),
    "Class out of range": (
        _set_many("Class", [1, 2], 2.0),
        ["Class", "2 value(s) outside its levels", "e.g. 2", "its values are 0, 1"],
    ),
    "Class fraction": (_set_many("Class", [3], 0.5), ["Class", "1 value(s)", "0.5"]),
    "negative Amount": (_set_many("Amount", [0, 7], -3.5), ["Amount", "2 negative", "-3.5"]),
    "huge V3": (
        _set_many("V3", [1], 1e200),
        ["column V3 has 1 value(s) larger than 1e+15 in magnitude (first at data row 2: 1e+200)"],
    ),
    "1e308 in every 10th Time": (
        _set_many("Time", [0, 10, 20, 30, 40], 1e308),
        ["column Time has 5 value(s) larger than 1e+15", "(first at data row 1: 1e+308)"],
    ),
    "-1e308 Amount": (
        _set_many("Amount", [3], -1e308),
        ["column Amount has 1 value(s) larger than 1e+15", "row 4: -1e+308)"],
    ),
    "netCDF fill value": (_set_many("V12", [2], 9.969209968386869e36), ["V12", ": 9.96921e+36)"]),
    "just past the limit": (_set_many("V28", [2], -1.5e15), ["V28", ": -1.5e+15)"]),
    "huge in two columns": (
        lambda df: _set_many("V4", [1], 1e20)(_set_many("V1", [2], 1e20)(df)),
        ["column V1 has 1 value(s) larger"],
    ),
    "huge negative Amount below the limit": (
        _set_many("Amount", [3], -1e10),
        ["Amount", "1 negative", "(min -1e+10)"],
    ),
    "huge Class": (_set_many("Class", [3], 1e308), ["Class", "e.g. 1e+308"]),
}


@pytest.mark.parametrize("case", CASES)
def test_each_defect_is_one_line_naming_column_and_count(frame: pd.DataFrame, case: str) -> None:
    mutate, expected = CASES[case]
    with pytest.raises(DataError) as err:
        validate_frame(mutate(frame), source="cards.csv")
    message = str(err.value)
    assert "\n" not in message and len(message) < 300  # values shown shortly, never 309 digits
    assert message.startswith("cards.csv: ")
    for fragment in expected:
        assert fragment in message, (fragment, message)


def test_large_but_plausible_values_pass(frame: pd.DataFrame) -> None:
    """The limit refuses only what no real row has: Unix times in ms and big amounts pass."""
    big = frame.astype({schema.TIME: np.float64})
    big.loc[0, schema.TIME] = 1.7e12
    big.loc[1, schema.AMOUNT] = 9.9e14
    big.loc[2, "V5"] = -schema.MAX_ABS_VALUE
    pd.testing.assert_frame_equal(validate_frame(big), big)


def test_the_first_affected_column_is_named(frame: pd.DataFrame) -> None:
    broken = frame.copy()
    broken.loc[0, ["V1", "V2", "V3"]] = np.nan
    with pytest.raises(DataError, match=r"column V1 has 1 missing value"):
        validate_frame(broken)


def test_a_column_the_schema_does_not_list_is_dropped(frame: pd.DataFrame, caplog) -> None:
    with caplog.at_level("INFO", logger="wgangp.data"):
        clean = validate_frame(frame.assign(note=1.0), source="cards.csv")
    assert tuple(clean.columns) == schema.COLUMNS
    assert "cards.csv: column(s) not in the schema, dropped: note" in caplog.text


def test_too_few_rows_of_a_class(frame: pd.DataFrame) -> None:
    one_fraud = frame[frame[schema.LABEL] == 0].copy()
    one_fraud.iloc[0, -1] = 1
    with pytest.raises(DataError) as err:
        validate_frame(one_fraud, min_rows_per_class=2)
    assert "only 1 row(s) with Class=1" in str(err.value)
    assert "at least 2" in str(err.value)
    assert len(validate_frame(one_fraud, min_rows_per_class=1)) == len(one_fraud)


def test_no_normal_rows(frame: pd.DataFrame) -> None:
    with pytest.raises(DataError, match=r"only 0 row\(s\) with Class!=1"):
        validate_frame(frame[frame[schema.LABEL] == 1])


@pytest.mark.parametrize(
    "empty", [pd.DataFrame(), pd.DataFrame(columns=list(schema.COLUMNS))], ids=["bare", "header"]
)
def test_empty_frame(empty: pd.DataFrame) -> None:
    with pytest.raises(DataError, match="no rows") as err:
        validate_frame(empty, source="empty.csv")
    assert "empty.csv" in str(err.value)
