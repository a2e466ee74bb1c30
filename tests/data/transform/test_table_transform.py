"""TableTransform: each column kind into the networks' space and back, gaps flagged, bounds held,
a saved file checked, bad rows refused in one line, and both shared tables round-trip."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from wgangp.data.schema.inference import infer_schema
from wgangp.data.schema.table_schema import ColumnSchema, TableSchema
from wgangp.data.transform.layout import Block, draw_discrete, gap_share
from wgangp.data.transform.table_transform import TableTransform
from wgangp.errors import ConfigError, DataError, NonFiniteError

TABLES = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "tables"
LEVELS = ("blue", "green", "red")


def _frame(rows: int = 60, seed: int = 0) -> pd.DataFrame:
    """One column of each kind, gaps in three of them, a label with a rarer class."""
    rng = np.random.default_rng(seed)
    amount = np.round(rng.lognormal(3, 1, rows), 2)
    amount[rng.random(rows) < 0.2] = np.nan
    colour = rng.choice(np.array(LEVELS, dtype=object), rows)
    colour[rng.random(rows) < 0.1] = None
    when = pd.Series(pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 365, rows), "D"))
    when[rng.random(rows) < 0.15] = pd.NaT
    return pd.DataFrame(
        {
            "amount": amount,
            "count": rng.integers(-3, 40, rows),
            "label": np.where(np.arange(rows) % 3 == 0, "bad", "good"),
            "colour": colour,
            "when": when,
            "score": rng.normal(0, 1, rows),
        }
    )


def observed_bounds(schema: TableSchema, frame: pd.DataFrame) -> TableSchema:
    """``schema`` with each number and datetime column's bounds widened to the rows' min and max,
    as a user's edited schema may: an inferred one keeps bounds that name no row
    (docs/privacy.md), and a round trip of the extreme rows is then clipped to them."""
    columns = []
    for column in schema.columns:
        if column.kind in ("continuous", "integer"):
            values = frame[column.name].dropna()
            cast = int if column.kind == "integer" else float
            column = replace(column, bounds=(cast(values.min()), cast(values.max())))
        elif column.kind == "datetime":
            values = pd.to_datetime(frame[column.name].dropna())
            column = replace(column, bounds=(values.min().isoformat(), values.max().isoformat()))
        columns.append(column)
    return replace(schema, columns=tuple(columns))


def _classes(frame: pd.DataFrame) -> np.ndarray:
    """Each row's class: 1 for the rarer label value "bad"."""
    return (frame["label"] == "bad").to_numpy().astype(np.int64)


def _features(frame: pd.DataFrame) -> list[str]:
    return [name for name in frame.columns if name != "label"]


def _fitted(frame: pd.DataFrame | None = None, **options) -> tuple[TableTransform, pd.DataFrame]:
    frame = _frame() if frame is None else frame
    schema = observed_bounds(infer_schema(frame, label="label"), frame)
    return TableTransform.fit(frame, schema, _classes(frame), **options), frame


def _round_trip(transform: TableTransform, frame: pd.DataFrame) -> pd.DataFrame:
    classes = _classes(frame)
    return transform.inverse(transform.transform(frame, classes), classes)


def _one_line(err: pytest.ExceptionInfo) -> str:
    text = str(err.value)
    assert "\n" not in text and "Traceback" not in text
    return text


def test_the_layout_follows_the_schema() -> None:
    transform, _ = _fitted()
    assert transform.layout == (
        Block("amount", "continuous", 0, 1),
        Block("amount", "missing", 1, 1),
        Block("count", "integer", 2, 1),
        Block("colour", "categorical", 3, 3),
        Block("colour", "missing", 6, 1),
        Block("when", "datetime", 7, 1),
        Block("when", "missing", 8, 1),
        Block("score", "continuous", 9, 1),
    )
    assert transform.width == 10


def test_an_integer_through_its_quantiles_stays_integral_and_in_bounds() -> None:
    """Quantile tables hold means of groups of rows, never a row's own value (docs/privacy.md):
    the extremes come back inside the column's range, not exactly."""
    transform, frame = _fitted(quantile_columns=["count"])
    back = _round_trip(transform, frame)
    assert back["count"].dtype == np.int64
    assert back["count"].between(frame["count"].min(), frame["count"].max()).all()
    assert (back["count"] == frame["count"]).mean() > 0.8


@pytest.mark.parametrize("scaling", ["standard", "quantile", "gmm", "none"])
def test_each_kind_round_trips(scaling: str) -> None:
    transform, frame = _fitted(scaling=scaling)
    back = _round_trip(transform, frame)
    assert list(back.columns) == _features(frame)
    # categoricals, integers, dates and every gap: exact; continuous: close
    assert back["colour"].isna().equals(frame["colour"].isna())
    assert back["colour"].dropna().tolist() == frame["colour"].dropna().tolist()
    assert back["count"].dtype == np.int64
    assert back["when"].dtype.kind == "M" and back["when"].isna().equals(frame["when"].isna())
    for name in ("amount", "score"):
        assert back[name].dtype == np.float64
        assert back[name].isna().equals(frame[name].isna())
    if scaling == "quantile":  # quantile tables hold group means: in range, not exact at the ends
        for name in ("count", "when", "amount", "score"):
            assert back[name].dropna().between(frame[name].min(), frame[name].max()).all()
        return
    assert back["count"].tolist() == frame["count"].tolist()
    assert (back["when"].dropna() == frame["when"].dropna()).all()
    for name in ("amount", "score"):
        np.testing.assert_allclose(back[name].dropna(), frame[name].dropna(), rtol=1e-4, atol=1e-4)


def test_integers_with_gaps_come_back_as_nullable_integers() -> None:
    frame = _frame()
    frame["count"] = frame["count"].astype(np.float64).where(frame.index % 5 != 0)
    transform, _ = _fitted(frame)
    back = _round_trip(transform, frame)
    assert str(back["count"].dtype) == "Int64"
    assert back["count"].isna().equals(frame["count"].isna())
    assert back["count"].dropna().astype(float).tolist() == frame["count"].dropna().tolist()


def test_the_networks_only_see_finite_values_and_flagged_gaps() -> None:
    transform, frame = _fitted()
    x = transform.transform(frame, _classes(frame))
    assert x.dtype == np.float32 and np.isfinite(x).all()
    flags = [block for block in transform.layout if block.kind == "missing"]
    for block in flags:
        gaps = frame[block.column].isna().to_numpy(np.float32)
        np.testing.assert_array_equal(x[:, block.start], gaps)
    colour = x[:, 3:6]
    np.testing.assert_array_equal(colour.sum(axis=1), 1.0)  # a gap is one-hot too: its fill
    gap = frame["colour"].isna().to_numpy()
    fill = LEVELS.index(transform.columns[2].fill)
    assert (colour[gap].argmax(axis=1) == fill).all()


def test_random_network_outputs_come_back_inside_the_schema() -> None:
    transform, frame = _fitted()
    rng = np.random.default_rng(3)
    x = rng.normal(0, 30, (2000, transform.width))  # far beyond anything trained on
    back = transform.inverse(x, rng.integers(0, 2, len(x)))
    assert set(back["colour"].dropna()) <= set(LEVELS)
    assert back["count"].dtype == np.int64
    assert back["count"].between(frame["count"].min(), frame["count"].max()).all()
    amount = back["amount"].dropna()
    assert (amount >= frame["amount"].min()).all() and (amount <= frame["amount"].max()).all()
    assert back["when"].dropna().between(frame["when"].min(), frame["when"].max()).all()
    assert (back["when"].dropna() == back["when"].dropna().dt.normalize()).all()  # dates


def test_schema_bounds_are_the_limits_even_beyond_the_rows() -> None:
    frame = _frame()
    schema = infer_schema(frame, label="label")
    columns = tuple(
        ColumnSchema(c.name, c.kind, bounds=(0, 5), nullable=c.nullable) if c.name == "count" else c
        for c in schema.columns
    )
    schema = TableSchema(columns=columns, label="label", positive="bad")
    transform = TableTransform.fit(
        frame, schema, _classes(frame), scaling="standard", per_class=False
    )
    back = transform.inverse(np.random.default_rng(0).normal(0, 9, (500, transform.width)))
    assert back["count"].between(0, 5).all() and "label" not in back


def test_the_share_of_gaps_is_reproduced_when_indicators_are_drawn() -> None:
    transform, frame = _fitted(_frame(rows=3000, seed=1))
    real = {name: float(frame[name].isna().mean()) for name in ("amount", "colour", "when")}
    probabilities = transform.transform(frame, _classes(frame)).astype(np.float64)
    for block in transform.layout:
        if block.kind == "missing":  # the heads' sigmoid at the real share, in every row
            probabilities[:, block.start] = real[block.column]
    colour = [b for b in transform.layout if b.column == "colour" and b.kind == "categorical"][0]
    probabilities[:, colour.start : colour.stop] = [0.2, 0.3, 0.5]
    drawn = draw_discrete(probabilities, transform.layout, np.random.default_rng(5))
    back = transform.inverse(drawn, _classes(frame))
    n = len(frame)
    for name, share in real.items():
        assert abs(back[name].isna().mean() - share) < 4 * np.sqrt(share * (1 - share) / n)
    assert gap_share(drawn, transform.layout).keys() == real.keys()
    shares = back["colour"].value_counts(normalize=True, dropna=True)
    np.testing.assert_allclose(shares[list(LEVELS)], [0.2, 0.3, 0.5], atol=0.04)
    thresholded = transform.inverse(probabilities, _classes(frame))  # argmax / > 0.5 alone
    assert thresholded["amount"].isna().sum() == 0 and set(thresholded["colour"]) == {"red"}


def test_per_class_scales_and_labels() -> None:
    transform, frame = _fitted()
    scales = transform.columns[0].scales
    assert set(scales) == {"all", "0", "1"}
    few = _frame()
    few["label"] = np.where(np.arange(len(few)) < 4, "bad", "good")  # 4 bad rows: too few
    rare, _ = _fitted(few)
    assert set(rare.columns[0].scales) == {"all", "0"}
    with pytest.raises(ValueError, match="needs the rows' classes"):
        transform.inverse(np.zeros((2, transform.width)))
    with pytest.raises(ValueError, match="classes must be 0 or 1"):
        transform.inverse(np.zeros((2, transform.width)), np.array([0, 2]))
    plain, _ = _fitted(per_class=False)
    assert set(plain.columns[0].scales) == {"all"}
    assert plain.transform(frame.drop(columns="label")).shape == (len(frame), 10)


def test_json_round_trip() -> None:
    transform, frame = _fitted(scaling="quantile")
    text = transform.to_json()
    loaded = TableTransform.from_json(text)
    assert loaded.layout == transform.layout and loaded.to_json() == text
    classes = _classes(frame)
    np.testing.assert_array_equal(
        loaded.transform(frame, classes), transform.transform(frame, classes)
    )
    x = np.random.default_rng(0).normal(size=(50, transform.width))
    labels = np.array([1, 0] * 25)
    pd.testing.assert_frame_equal(loaded.inverse(x, labels), transform.inverse(x, labels))


def _edited(path: list, value: object) -> dict:
    raw = json.loads(_fitted()[0].to_json())
    target = raw
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return raw


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        (["format"], "wgangp.table_transform/1", "is not a wgangp.table_transform/2 document"),
        (["scaling"], "log", "has scaling 'log'"),
        (["label"], "Status", "has unknown key(s) ['label']"),
        (["columns", 0, "schema", "kind"], "float", "unknown kind 'float'"),
        (["columns", 0, "scales"], KeyError, "has keys ['fill', 'schema']"),
        (["columns", 0, "scales", "nobody"], {"mean": [0.0], "std": [1.0]}, "has scales for"),
        (["columns", 0, "scales", "all"], {"mean": [0.0, 1.0], "std": [1.0]}, "-1 columns wide"),
        (["columns", 0, "scales", "all", "std"], ["x"], "not numbers"),
        (
            ["columns", 0, "scales", "all", "std"],
            [0.0],
            "column amount: its scale of all makes no sense (std 0, not in (0, 1e+16])",
        ),
        (
            ["columns", 4, "scales", "0", "mean"],
            [-1e300],
            "column score: its scale of 0 makes no sense (mean -1e+300 beyond 1e+16)",
        ),
        (["columns", 0, "schema", "bounds"], [500.0, 1.0], "bounds are reversed (500.0 > 1.0)"),
        (["columns", 0, "fill"], 1e9, "outside its bounds"),
        (["columns", 1, "fill"], 2.5, "is integer but fills gaps with 2.5"),
        (["columns", 2, "fill"], "purple", "not one of its levels"),
        (["columns", 3, "step"], -1, "has step -1"),
        (["quantile_columns"], ["colour"], "not numeric columns"),
    ],
)
def test_a_bad_saved_transform_is_one_line(path: list, value: object, expected: str) -> None:
    with pytest.raises(DataError) as err:
        TableTransform.from_dict(_edited(path, value), source="t.json")
    text = _one_line(err)
    assert text.startswith("t.json") and expected in text, text
    with pytest.raises(DataError, match="not valid JSON"):
        TableTransform.from_json("{", source="t.json")


@pytest.mark.parametrize(
    ("column", "value", "expected"),
    [
        ("score", np.inf, "score has 1 infinite value(s) (first at data row 3)"),
        ("score", 1e16, "score has 1 value(s) larger than 1e+15"),
        ("score", None, "score has 1 missing value(s) (first at data row 3) but its schema"),
        ("score", "n/a", "score has 1 non-numeric value(s)"),
        ("count", 2.5, "count is integer but has 1 non-whole value(s)"),
        ("colour", "purple", "colour has 1 value(s) outside its levels (e.g. purple)"),
        ("when", "soon", "when is datetime but not every cell is a date"),
    ],
)
def test_bad_rows_are_refused_in_one_line(column: str, value: object, expected: str) -> None:
    transform, frame = _fitted()
    frame = frame.astype({column: object})
    frame.loc[2, column] = value
    with pytest.raises(DataError) as err:
        transform.transform(frame, _classes(frame), source="test rows")
    text = _one_line(err)
    assert text.startswith("test rows: ") and expected in text, text


def test_fit_refuses_what_it_cannot_use_in_one_line() -> None:
    frame = _frame()
    schema = infer_schema(frame, label="label")
    cases = [
        (frame.drop(columns="score"), {}, DataError, "column score of the schema is not in"),
        (frame.assign(amount=np.nan), {}, DataError, "amount has no value in the 60 training"),
        (frame, {"scaling": "log"}, ConfigError, "scaling 'log' is unknown"),
        (frame, {"quantile_columns": ["colour"]}, ConfigError, "'colour' is not a number column"),
    ]
    for rows, options, error, expected in cases:
        with pytest.raises(error) as err:
            TableTransform.fit(rows, schema, _classes(frame), **options)
        assert expected in _one_line(err)


def test_a_diverged_generator_is_one_line_not_nan_rows() -> None:
    transform, _ = _fitted()
    x = np.zeros((4, transform.width))
    x[2, 4] = np.nan
    with pytest.raises(NonFiniteError) as err:
        transform.inverse(x, 1)
    assert "1 of 4 generated row(s) hold non-finite values (first in column colour)" in _one_line(
        err
    )
    with pytest.raises(ValueError, match="width 10"):
        transform.inverse(np.zeros((4, 3)), 1)


# --- the shared tables ---------------------------------------------------------------------


def _shared(name: str) -> pd.DataFrame:
    path = TABLES / name
    if not path.exists():
        pytest.skip(f"shared table not found at {path} (../shared/data/tables beside the repo)")
    return pd.read_csv(path)


@pytest.mark.parametrize(
    ("name", "label"),
    [("default_islr.csv.gz", "default"), ("credit_data_modeldata.csv.gz", "Status")],
)
def test_the_shared_tables_round_trip(name: str, label: str) -> None:
    frame = _shared(name)
    schema = observed_bounds(infer_schema(frame, label=label), frame)
    classes = schema.classes(frame[label])
    # Without point masses every number goes through its scale alone, which round-trips
    # exactly; quantile tables hold group means (docs/privacy.md).
    transform = TableTransform.fit(frame, schema, classes, point_masses=False)
    x = transform.transform(frame, classes)
    assert np.isfinite(x).all()
    back = TableTransform.from_json(transform.to_json()).inverse(x, classes)
    assert list(back.columns) == [c.name for c in schema.features]
    for column in schema.features:
        real, made = frame[column.name], back[column.name]
        assert made.isna().equals(real.isna()), column.name
        if column.kind == "continuous":  # float32 in the networks' space: 1e-6 of the range
            top = real.abs().max()
            np.testing.assert_allclose(made.dropna(), real.dropna(), rtol=1e-5, atol=1e-6 * top)
        elif column.kind == "integer":
            whole = made.dropna().astype(np.int64)
            assert whole.tolist() == real.dropna().astype(np.int64).tolist(), column.name
        else:
            assert made.dropna().tolist() == real.dropna().tolist(), column.name


@pytest.mark.parametrize("name", ["default_islr.csv.gz", "credit_data_modeldata.csv.gz"])
def test_inferred_bounds_and_fills_name_no_row(name: str) -> None:
    """What ships (the schema's bounds, the transform's fills) is no value fewer than 5 rows
    hold: a column's min and max are usually one customer's values."""
    frame = _shared(name)
    label = "default" if name.startswith("default") else "Status"
    schema = infer_schema(frame, label=label)
    transform = TableTransform.fit(frame, schema, schema.classes(frame[label]))
    for column, fitted in zip(schema.features, transform.columns, strict=True):
        if column.kind not in ("continuous", "integer"):
            continue
        values = frame[column.name].dropna()
        counts = values.value_counts()
        rare = set(counts[counts < 5].index)
        low, high = column.bounds
        assert values.min() <= low <= high <= values.max(), column.name
        assert not {low, high, fitted.fill} & rare, column.name


def test_a_nullable_boolean_column_comes_back_as_pandas_boolean() -> None:
    """A ``boolean`` column with gaps comes back ``boolean`` (True, False, <NA>), not objects."""
    from wgangp.data.schema.validation import validate_table

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "flag": pd.array([True, False, None, True] * 100, dtype="boolean"),
            "amount": rng.gamma(2.0, 10.0, 400).round(2),
            "y": np.where(rng.random(400) < 0.3, "bad", "good"),
        }
    )
    schema = infer_schema(frame, "y")
    table = validate_table(frame, schema, source="frame", min_rows_per_class=1)
    classes = schema.classes(table["y"])
    fitted = TableTransform.fit(table, schema, classes)
    back = fitted.inverse(fitted.transform(table, classes), classes)
    assert back["flag"].dtype == "boolean"
    assert back["flag"].isna().sum() == 100 and set(back["flag"].dropna()) == {True, False}
    whole = frame.assign(flag=frame["flag"].fillna(False))
    schema = infer_schema(whole, "y")
    table = validate_table(whole, schema, source="frame", min_rows_per_class=1)
    fitted = TableTransform.fit(table, schema, classes)
    assert fitted.inverse(fitted.transform(table, classes), classes)["flag"].dtype == bool
