"""What an inferred schema keeps of the customers' own values: identifier and free-text columns
dropped (and refused when an edited schema keeps them), a category level fewer than 5 rows hold
read as ``other``, and datetime bounds that are no date fewer than 5 rows hold, so neither the
schema nor what it ships names them. Every line a user sees is in docs/errors.md, word for word.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from support.cli import run_schema_cli
from support.docs import documented, one_line
from support.schemas import SOURCE, edit_schema, loans_data
from support.tables import RARE_JOB, day_first_loans, loans_features, loans_table, write_table

from wgangp.data.prepare import prepare_data
from wgangp.data.schema.inference import infer_schema, infer_table
from wgangp.data.schema.review import ambiguities
from wgangp.data.schema.table_schema import TableSchema
from wgangp.data.schema.validation import validate_table
from wgangp.data.transform.table_transform import TableTransform
from wgangp.errors import DataError

# --- identifier and free-text columns ---------------------------------------------------------


def test_identifier_and_free_text_columns_are_dropped_and_refused_when_kept(
    tmp_path: Path,
) -> None:
    frame = loans_features(loans_table(), "Age", "Name", "Email", "Notes")
    path = write_table(frame, tmp_path)
    inference = infer_table(frame, "Status", source=str(path))
    lines = inference.lines(str(path))
    assert [line.split()[2] for line in lines] == ["Name", "Email", "Notes"]
    for line in lines:  # no invitation to keep them
        assert "keep" not in line and line.endswith("whatever a schema says; docs/privacy.md)")
    assert lines[1] == (
        f"{path}: column Email holds e-mail addresses: an identifier, dropped (identifiers never "
        "train or ship, whatever a schema says; docs/privacy.md)"
    )
    documented(lines[1], path=path)
    assert inference.schema.names == ("Status", "Age")
    assert "@" not in inference.schema.to_yaml()  # the inferred schema names no e-mail
    assert not ambiguities(frame, inference.schema, str(path))
    # the user keeps Email in an edited schema, listing every address as a level
    levels = sorted(frame["Email"])
    email = {"name": "Email", "kind": "categorical", "levels": levels, "missing": 0}
    raw = inference.schema.to_dict()
    raw["columns"].append(email)
    edited = tmp_path / "schema.yaml"
    edited.write_text(TableSchema.from_dict(raw).to_yaml())
    with pytest.raises(DataError) as err:
        prepare_data(loans_data(path, schema=str(edited)), seed=0, launch_dir=tmp_path)
    line = one_line(err)
    assert line == (
        f"{path}: column Email holds e-mail addresses: an identifier never trains or ships, "
        "since its values would come back verbatim in samples; delete its entry from "
        "data.schema"
    )
    documented(line, path=path)
    result = run_schema_cli(f"data.path={path}", f"data.schema={edited}", cwd=tmp_path)
    assert result.returncode == 2 and "@" not in result.stdout
    # training on the inferred schema drops them and trains on the rest
    data = prepare_data(loans_data(path), seed=0, launch_dir=tmp_path)
    assert data.features == ["Age"]


# --- levels and datetime bounds that name few rows --------------------------------------------


def test_a_level_fewer_than_5_rows_hold_is_read_as_other(tmp_path: Path) -> None:
    frame = loans_features(loans_table(), "Age", "Job")
    assert (frame["Job"] == RARE_JOB).sum() == 3
    schema = infer_schema(frame, "Status", source=SOURCE)
    job = schema.column("Job")
    assert job.levels == ("fixed", "freelance", "partime", "other") and job.other == "other"
    assert RARE_JOB not in schema.to_yaml()
    rows = validate_table(frame, schema, source=SOURCE, min_rows_per_class=1)
    assert (rows["Job"][frame["Job"] == RARE_JOB] == "other").all()
    assert rows["Job"].isna().equals(frame["Job"].isna())
    kept = frame["Job"].isin(["fixed", "freelance", "partime"])
    assert (rows["Job"][kept] == frame["Job"][kept]).all()
    fitted = TableTransform.fit(rows, schema, schema.classes(rows[schema.label]))
    assert RARE_JOB not in fitted.to_json()  # preprocessing.json
    # an edited schema keeps the other level, and reads the rare rows as it
    path = write_table(frame, tmp_path)
    data = prepare_data(loans_data(path, schema=str(edit_schema(schema, tmp_path))), seed=0,
                        launch_dir=tmp_path)  # fmt: skip
    assert RARE_JOB not in set(pd.concat([data.train, data.val, data.test])["Job"].dropna())


def test_datetime_bounds_name_no_row() -> None:
    frame, true = day_first_loans()
    frame = frame.copy()
    frame.loc[0, "opened"] = "01/01/2019"  # one early customer
    frame.loc[1, "opened"] = "31/12/2025"  # one late one
    true = pd.to_datetime(frame["opened"], format="%d/%m/%Y")
    schema = infer_schema(frame, "Status", source=SOURCE)
    low, high = (pd.Timestamp(bound) for bound in schema.column("opened").bounds)
    counts = true.value_counts()
    few = set(counts[counts < 5].index)
    assert low not in few and high not in few  # neither bound is a date fewer than 5 rows hold
    assert true.min() < low <= high < true.max()
    assert "2019-01-01" not in schema.to_yaml() and "2025-12-31" not in schema.to_yaml()
