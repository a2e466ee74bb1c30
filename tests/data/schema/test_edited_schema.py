"""A schema the user edited and gave back with ``data.schema``: a bad ``format:`` or ``other:``
is one line, formats and ``other`` survive the YAML round trip, bounds that leave out real rows
are refused (at training and at the schema check), and an unedited inferred schema, its bounds
included, passes its own table's check (the loans table and the two shared tables). Every line a
user sees is in docs/errors.md, word for word.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from support.cli import run_schema_cli
from support.configs import SHARED_TABLES, shared_table
from support.docs import documented, one_line
from support.schemas import edit_schema, loans_data
from support.tables import loans_features, loans_table, write_table

from wgangp.data.prepare import prepare_data
from wgangp.data.read.table_reader import read_table
from wgangp.data.schema.inference import infer_schema
from wgangp.data.schema.table_schema import TableSchema
from wgangp.data.schema.validation import match_table
from wgangp.errors import ConfigError, DataError

# --- formats and other: one line when wrong, kept through YAML --------------------------------


_BASE = "label: y\npositive: 1\ncolumns:\n- {name: y, kind: categorical, levels: [0, 1]}\n"


@pytest.mark.parametrize(
    ("column", "expected"),
    [
        (
            '{name: x, kind: datetime, format: "%Q"}',
            "<file>: column 'x': format '%Q' is not a date format; write strftime codes such as "
            "format: '%d/%m/%Y', or ISO8601",
        ),
        (
            '{name: x, kind: continuous, format: "1.234,5"}',
            "<file>: column 'x': format '1.234,5' is not a number format; write 1,234.5 (comma "
            "thousands separators) with at most one currency sign ($1,234.5, 1,234.5€), or delete "
            "format for plain numbers",
        ),
        (
            '{name: x, kind: categorical, levels: [a, b], format: "%d"}',
            "<file>: column 'x' is categorical but has a format; formats belong to datetime and "
            "number columns: delete format",
        ),
        (
            "{name: x, kind: categorical, levels: [a, b], other: c}",
            "<file>: column 'x': other 'c' is not one of its levels; add it to levels or delete "
            "other",
        ),
        (
            "{name: x, kind: integer, other: c}",
            "<file>: column 'x' is integer but has other:; it names a categorical's level: set "
            "kind: categorical or delete other",
        ),
    ],
)
def test_a_bad_format_or_other_edit_is_one_line(tmp_path: Path, column: str, expected: str) -> None:
    path = tmp_path / "schema.yaml"
    path.write_text(f"{_BASE}- {column}\n")
    with pytest.raises(ConfigError) as err:
        TableSchema.load(path)
    assert one_line(err) == expected.replace("<file>", str(path))
    documented(expected)


def test_formats_and_other_round_trip_through_yaml() -> None:
    text = (
        f"{_BASE}- {{name: d, kind: datetime, format: '%d/%m/%Y'}}\n"
        "- {name: f, kind: continuous, format: '$1,234.5'}\n"
        "- {name: j, kind: categorical, levels: [a, Other], other: other}\n"
    )
    schema = TableSchema.from_yaml(text)
    assert schema.column("d").format == "%d/%m/%Y" and schema.column("f").format == "$1,234.5"
    assert schema.column("j").other == "Other"  # the level itself, as positive: is
    assert TableSchema.from_yaml(schema.to_yaml()) == schema


# --- bounds: edited ones that leave out real rows, inferred ones passed back ------------------


def test_edited_bounds_that_exclude_real_rows_are_refused(tmp_path: Path) -> None:
    frame = loans_features(loans_table(), "Age", "opened")
    path = write_table(frame, tmp_path)
    schema = infer_schema(frame, "Status", source=str(path))
    edited = edit_schema(schema, tmp_path, Age={"bounds": [30, 40]})
    outside = ~frame["Age"].between(30, 40)
    rare = outside & (frame["Status"] == "bad")
    first = int(np.flatnonzero(outside)[0])
    low, high = schema.column("Age").bounds
    expected = (
        f"{path}: column Age has {int(outside.sum())} value(s) outside its bounds [30, 40] "
        f"({int(rare.sum())} of the {int((frame['Status'] == 'bad').sum())} rows with "
        f"Status=bad; first at data row {first + 1}: {frame['Age'][first]}), and every generated "
        f"value would be clipped into them; widen them to at least [{low}, {high}] in "
        "data.schema (the range python -m wgangp.schema infers), or fix or drop those rows"
    )
    assert rare.sum() / (frame["Status"] == "bad").sum() > 0.6
    with pytest.raises(DataError) as err:  # at training
        prepare_data(loans_data(path, schema=str(edited)), seed=0, launch_dir=tmp_path)
    assert one_line(err) == expected
    documented(expected, path=path)
    # at the schema check, as one line and exit code 2
    result = run_schema_cli(f"data.path={path}", f"data.schema={edited}", cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip().splitlines()[-1] == f"wgangp: error: {expected}"
    # a datetime bound too
    dates = edit_schema(schema, tmp_path, opened={"bounds": ["2023-01-01", "2023-06-30"]})
    with pytest.raises(DataError, match=r"column opened has \d+ value\(s\) outside its bounds"):
        prepare_data(loans_data(path, schema=str(dates)), seed=0, launch_dir=tmp_path)


def test_inferred_bounds_passed_back_stay_quiet(tmp_path: Path) -> None:
    """Inferred bounds are the means of the 5 most extreme values: a few rows lie just outside
    them by design, and an unedited schema must pass its own table's check."""
    frame = loans_table().drop(columns=["Name", "Email", "Notes"])
    path = write_table(frame, tmp_path)
    schema = infer_schema(frame, "Status", source=str(path))
    low, high = schema.column("Age").bounds
    assert (frame["Age"] < low).any() or (frame["Age"] > high).any() or low == 18
    match_table(frame, schema, str(path))  # no error
    wider = edit_schema(schema, tmp_path, Age={"bounds": [0, 120]})
    prepare_data(loans_data(path, schema=str(wider)), seed=0, launch_dir=tmp_path)


@pytest.mark.parametrize("name", sorted(SHARED_TABLES))
def test_a_shared_tables_inferred_schema_passes_its_own_check(name: str) -> None:
    path = shared_table(name)
    _, label, positive = SHARED_TABLES[name]
    frame = read_table(path)
    schema = infer_schema(frame, label, positive, source=str(path))
    match_table(frame, TableSchema.from_yaml(schema.to_yaml()), str(path))
