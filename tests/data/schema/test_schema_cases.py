"""One rule per concept, every check linear (issue 58): repeated names, levels, label values, and
dates in seconds and back in their zone."""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import pandas as pd
import pytest
from support.docs import documented

from wgangp.data.schema.cells import label_value, repeated_names
from wgangp.data.schema.column_codes import column_codes, to_seconds
from wgangp.data.schema.inference import infer_table
from wgangp.data.schema.table_schema import RARE, REST, ColumnSchema, TableSchema
from wgangp.data.schema.validation import label_counts, match_table, validate_table
from wgangp.data.transform.table_transform import TableTransform
from wgangp.errors import ConfigError, DataError
from wgangp.evaluation.encoding import TableEncoding, seconds
from wgangp.serving.labels import label_class

PARIS = "Europe/Paris"
#: Seconds a linear pass over these inputs stays under even on a loaded 2-core machine, where
#: the quadratic walks they replaced took minutes or hours: a guard against a walk that grows by
#: orders of magnitude, not a speed figure.
LINEAR_BOUND = 30

# --- 1. a repeated name: one linear function, wide headers in linear time ---------------------


def test_repeated_names_are_found_in_one_pass() -> None:
    assert repeated_names(["b", "a", "c", "a", "b", "b"]) == ["a", "b"]
    assert repeated_names([]) == []
    names = [f"c{i}" for i in range(400_000)] + ["c7", "c3"]
    started = time.perf_counter()
    assert repeated_names(names) == ["c3", "c7"]
    assert time.perf_counter() - started < LINEAR_BOUND  # list.count per name: hours


def _wide(columns: int, rows: int = 20) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    values = rng.normal(size=(rows, columns)).round(3)
    frame = pd.DataFrame(values, columns=[f"c{i}" for i in range(columns)])
    frame["label"] = ["bad"] * 6 + ["good"] * (rows - 6)
    return frame


def test_a_wide_header_is_checked_in_linear_time() -> None:
    """A schema of 40,000 columns is built, looked up by name and matched against a table's
    header in constant time per name (a name looked up in a list or a rebuilt tuple per column:
    minutes)."""
    frame = _wide(40_000, rows=8)
    columns = [ColumnSchema(name, "continuous") for name in frame.columns[:-1]]
    label = ColumnSchema("label", "categorical", levels=("bad", "good"))
    started = time.perf_counter()
    schema = TableSchema(
        columns=(*columns, ColumnSchema("zz", "integer"), label), label="label", positive="bad"
    )
    assert all(schema.column(name).name == name for name in schema.names)
    with pytest.raises(DataError) as err:
        match_table(frame, schema, source="t")
    assert time.perf_counter() - started < LINEAR_BOUND
    assert str(err.value) == (
        "t: column(s) zz of the schema are not in the table; fix the header, or delete their "
        "entries from data.schema"
    )


@pytest.mark.parametrize("where", ["validation", "inference", "match"])
def test_a_repeated_header_is_one_line_at_every_gate(where: str) -> None:
    frame = _wide(4).set_axis(["a", "b", "a", "c", "label"], axis=1)
    with pytest.raises(DataError) as err:
        if where == "inference":
            infer_table(frame, "label", source="t")
        else:
            schema = infer_table(_wide(4).set_axis(["a", "b", "d", "c", "label"], axis=1), "label")
            gate = validate_table if where == "validation" else match_table
            kwargs = {"min_rows_per_class": 2} if where == "validation" else {}
            gate(frame, schema.schema, source="t", **kwargs)
    fix = "; rename or drop the copies, every column needs its own name"
    assert str(err.value) == f"t: column(s) a appear more than once in the header{fix}"


# --- 2. an edited schema of 100,000 levels: every check linear in levels --------------------


def test_a_categorical_of_100000_levels_round_trips_yaml_quickly() -> None:
    levels = tuple(f"level{i:06d}" for i in range(100_000))
    started = time.perf_counter()
    schema = TableSchema(
        columns=(
            ColumnSchema("code", "categorical", levels=levels, other=levels[-1]),
            ColumnSchema("y", "categorical", levels=(0, 1)),
        ),
        label="y",
        positive=1,
    )
    back = TableSchema.from_yaml(schema.to_yaml())
    assert time.perf_counter() - started < LINEAR_BOUND
    assert back == schema and back.column("code").levels == levels


def test_a_level_repeated_among_100000_is_one_line_quickly() -> None:
    levels = [f"level{i}" for i in range(100_000)] + ["level7"]
    started = time.perf_counter()
    with pytest.raises(ConfigError) as err:
        ColumnSchema("code", "categorical", levels=tuple(levels))
    assert time.perf_counter() - started < LINEAR_BOUND
    assert str(err.value) == "column 'code' lists level(s) level7 more than once; keep one"


def test_a_table_of_100000_levels_is_read_in_linear_time() -> None:
    rows = 100_000
    levels = tuple(f"v{i}" for i in range(rows))
    column = ColumnSchema("code", "categorical", levels=levels)
    cells = pd.Series([f"v{i}" for i in reversed(range(rows))], dtype=object)
    started = time.perf_counter()
    codes, gaps = column_codes(cells, column, "t")
    assert time.perf_counter() - started < LINEAR_BOUND
    assert codes[0] == rows - 1 and not gaps.any()


# --- 3. label values: one rule ----------------------------------------------------------------


@pytest.mark.parametrize("cell", [1, 1.0, np.int64(1), np.float64(1.0), "1", "1.0"])
def test_a_csv_one_is_the_integer_one(cell: object) -> None:
    value = label_value(cell)
    assert value == 1 and type(value) is int


@pytest.mark.parametrize(("cell", "value"), [("bad", "bad"), (0.5, 0.5), (True, True)])
def test_text_stays_text_and_other_values_stay_themselves(cell: object, value: object) -> None:
    assert label_value(cell) == value and type(label_value(cell)) is type(value)


def _labelled(labels: list) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    return pd.DataFrame({"x": rng.normal(size=len(labels)), "y": labels})


def test_a_label_is_one_value_however_a_reader_typed_it() -> None:
    """A Parquet label stored as text ``1.0``/``0.0`` and the big-table reader's count of it
    (``1``: DuckDB's text, read by the same rule) name one class: inference, validation, the
    class of each row, the table's counts and ``label=`` agree."""
    frame = _labelled(["1.0"] * 8 + ["0.0"] * 32)
    schema = infer_table(frame, "y", positive=label_value("1"), source="t").schema
    assert schema.column("y").levels == (0, 1) and schema.positive == 1
    assert schema.label_counts == ((0, 32), (1, 8))
    clean = validate_table(frame, schema, source="t", min_rows_per_class=2)
    assert clean["y"].tolist() == [1] * 8 + [0] * 32
    assert schema.classes(frame["y"]).tolist() == [1] * 8 + [0] * 32
    assert label_counts(frame["y"], schema) == ((0, 32), (1, 8))
    for named in ("1", "1.0", 1, 1.0, np.int64(1)):
        assert label_class(schema, named) == RARE
    assert label_class(schema, "0.0") == REST


def test_a_float_label_column_gives_integers() -> None:
    frame = _labelled([1.0] * 8 + [0.0] * 32)
    schema = infer_table(frame, "y").schema
    assert schema.column("y").levels == (0, 1)
    assert all(type(level) is int for level in schema.column("y").levels or ())


# --- 4. dates: seconds since 1970 UTC, and back in the column's zone ---------------------------


def _paris(rows: int = 60) -> pd.DataFrame:
    """Whole hours across the spring change of clocks (31 March 2024), with gaps."""
    rng = np.random.default_rng(2)
    hours = rng.integers(0, 24 * 20, rows)
    when = pd.Series(pd.Timestamp("2024-03-20", tz=PARIS) + pd.to_timedelta(hours, unit="h"))
    when[rng.random(rows) < 0.1] = pd.NaT
    return pd.DataFrame(
        {"when": when, "amount": rng.normal(50, 5, rows).round(2), "y": ["bad"] * 15 + ["ok"] * 45}
    )


def _observed_bounds(schema: TableSchema, frame: pd.DataFrame) -> TableSchema:
    """The schema with the rows' own range, so that the round trip keeps every row."""
    columns = []
    for column in schema.columns:
        if column.kind == "datetime":
            dates = frame[column.name].dropna()
            bounds = (dates.min().isoformat(), dates.max().isoformat())
            column = dataclasses.replace(column, bounds=bounds)
        elif column.kind == "continuous":
            values = frame[column.name].dropna()
            column = dataclasses.replace(column, bounds=(values.min(), values.max()))
        columns.append(column)
    return dataclasses.replace(schema, columns=tuple(columns))


def _round_trip(frame: pd.DataFrame, schema: TableSchema) -> tuple[pd.DataFrame, pd.DataFrame]:
    clean = validate_table(frame, schema, source="t", min_rows_per_class=2)
    classes = schema.classes(clean["y"])
    transform = TableTransform.fit(clean, schema, classes)
    back = transform.inverse(transform.transform(clean, classes), classes)
    return clean, back


def test_a_paris_column_round_trips_in_paris_time() -> None:
    frame = _paris()
    schema = infer_table(frame, "y", source="t").schema
    column = schema.column("when")
    assert column.zone == PARIS
    assert all(str(bound).endswith(("+01:00", "+02:00")) for bound in column.bounds or ())
    clean, back = _round_trip(frame, _observed_bounds(schema, frame))
    assert str(clean["when"].dt.tz) == PARIS and str(back["when"].dt.tz) == PARIS
    assert back["when"].isna().equals(frame["when"].isna())
    present = frame["when"].notna()
    assert (back["when"][present] == frame["when"][present]).all()
    assert (back["when"][present].dt.hour == frame["when"][present].dt.hour).all()


def test_iso_text_with_offsets_keeps_its_offsets() -> None:
    """One offset is that fixed zone; offsets that change with the season (pandas' CSV of a
    Paris column) are a zone with those offsets at every instant: the same wall-clock times."""
    frame = _paris()
    text = frame.assign(when=frame["when"].map(lambda t: t.isoformat() if pd.notna(t) else None))
    schema = infer_table(text, "y", source="t").schema
    zone = schema.column("when").zone
    assert zone is not None and schema.column("when").format == "ISO8601"
    _, back = _round_trip(text, _observed_bounds(schema, frame))
    present = frame["when"].notna()
    assert [t.isoformat() for t in back["when"][present]] == text["when"][present].tolist()

    winter = frame.assign(when=["2024-03-01T10:00:00+01:00", "2024-03-02T11:30:00+01:00"] * 30)
    schema = infer_table(winter, "y", source="t").schema
    assert schema.column("when").zone == "UTC+01:00"
    dates = winter.assign(when=pd.to_datetime(winter["when"], format="ISO8601"))
    clean, back = _round_trip(winter, _observed_bounds(schema, dates))
    assert [t.isoformat() for t in back["when"]] == winter["when"].tolist()


def test_a_zone_round_trips_through_yaml_and_an_unknown_one_is_one_line() -> None:
    schema = infer_table(_paris(), "y", source="t").schema
    text = schema.to_yaml()
    assert "zone: Europe/Paris" in text
    assert TableSchema.from_yaml(text) == schema
    with pytest.raises(ConfigError) as err:
        TableSchema.from_yaml(text.replace("zone: Europe/Paris", "zone: Europe/Pariss"), "s.yaml")
    assert str(err.value) == (
        "s.yaml: column 'when': zone 'Europe/Pariss' is not a time zone; did you mean "
        "'Europe/Paris'? write an IANA name such as zone: Europe/Paris, UTC or UTC+01:00"
    )
    documented(str(err.value), file="s.yaml")
    with pytest.raises(ConfigError) as err:
        ColumnSchema("amount", "continuous", zone=PARIS)
    assert str(err.value) == (
        "column 'amount' is continuous but has a zone; a time zone belongs to datetime columns: "
        "delete zone"
    )


def test_seconds_are_utc_everywhere_and_naive_dates_stay_naive() -> None:
    frame = _paris()
    schema = infer_table(frame, "y", source="t").schema
    codes, gaps = column_codes(frame["when"], schema.column("when"), "t")
    utc = frame["when"].dt.tz_convert("UTC").dt.tz_localize(None)
    np.testing.assert_array_equal(codes[~gaps], to_seconds(utc[~gaps]))
    np.testing.assert_array_equal(seconds(frame["when"])[~gaps], codes[~gaps])
    encoding = TableEncoding(schema, frame)
    decoded = encoding.decode(encoding.model_matrix(frame))
    assert str(decoded["when"].dt.tz) == PARIS

    naive = frame.assign(when=frame["when"].dt.tz_localize(None))
    schema = infer_table(naive, "y", source="t").schema
    assert schema.column("when").zone is None and "zone" not in schema.column("when").to_dict()
    clean, back = _round_trip(naive, _observed_bounds(schema, naive))
    assert clean["when"].dt.tz is None and back["when"].dt.tz is None
    present = naive["when"].notna()
    assert (back["when"][present] == naive["when"][present]).all()


def test_naive_cells_of_a_column_given_a_zone_are_its_wall_clock_times() -> None:
    """An edited schema may name the zone of a table written without offsets: its cells are
    wall-clock times there, and come back in it."""
    paris = _paris()
    naive = paris.assign(when=paris["when"].dt.tz_localize(None))
    inferred = infer_table(naive, "y", source="t").schema
    when = dataclasses.replace(inferred.column("when"), zone=PARIS)
    schema = dataclasses.replace(
        inferred, columns=tuple(when if c.name == "when" else c for c in inferred.columns)
    )
    # Its bounds, inferred without a zone, are wall-clock times there too: no row leaves them.
    low, high = inferred.column("when").bounds or ()
    assert schema.column("when").bounds == (
        pd.Timestamp(low).tz_localize(PARIS).isoformat(),
        pd.Timestamp(high).tz_localize(PARIS).isoformat(),
    )
    validate_table(naive, schema, source="t", min_rows_per_class=2)
    clean, back = _round_trip(naive, _observed_bounds(schema, paris))
    present = paris["when"].notna()
    assert (clean["when"][present] == paris["when"][present]).all()
    assert str(back["when"].dt.tz) == PARIS
    assert (back["when"][present].dt.hour == paris["when"][present].dt.hour).all()
