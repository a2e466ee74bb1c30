"""Cells written as text read as the user wrote them (wgangp/data/schema/text_formats.py): a
date column read with the one format that fits every cell (never day-first for one row and
month-first for the next), and reviewed, not guessed, when two formats fit and disagree or no one
format fits them all; numbers written with thousands separators and a currency sign read as
numbers, and numbers in a format no reader takes reviewed. Every line a user sees is in
docs/errors.md, word for word.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support.docs import documented, one_line
from support.schemas import SOURCE, edit_schema, loans_data
from support.tables import day_first_loans, loans_features, loans_table, write_table

from wgangp.data.prepare import prepare_data
from wgangp.data.schema.inference import infer_schema, infer_table
from wgangp.data.schema.review import ambiguities
from wgangp.data.schema.table_schema import TableSchema
from wgangp.data.schema.validation import validate_table
from wgangp.errors import DataError

# --- dates: one format per column, never a guess per row --------------------------------------


def test_day_first_dates_are_read_with_the_one_format_that_fits_every_row() -> None:
    frame, true = day_first_loans()
    # the swaps a row-by-row reader makes: every date whose day is 12 or less
    swapped = pd.to_datetime(frame["opened"], format="mixed") != true
    assert swapped.sum() > 300
    schema = infer_schema(frame, "Status", source=SOURCE)
    rows = validate_table(
        frame, schema, source=SOURCE, min_rows_per_class=1
    )  # the rows training sees
    assert (rows["opened"] == true).all()
    assert ambiguities(frame, schema, SOURCE) == []
    opened = schema.column("opened")
    assert (opened.kind, opened.format) == ("datetime", "%d/%m/%Y")
    low, high = (pd.Timestamp(bound) for bound in opened.bounds)
    assert true.min() <= low <= high <= true.max()  # within the real dates, not past them
    again = TableSchema.from_yaml(schema.to_yaml()).column("opened")
    assert again.format == "%d/%m/%Y"  # the edited file keeps the format; training reads it


def test_dates_whose_days_are_all_12_or_less_are_reviewed_not_guessed(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    days = pd.Timestamp("2023-01-01") + pd.to_timedelta(rng.integers(0, 365, 300), "D")
    days = days[days.day <= 12]
    frame = pd.DataFrame(
        {"Status": np.where(np.arange(len(days)) % 4 == 0, "bad", "good"),
         "opened": days.strftime("%d/%m/%Y"), "Age": rng.integers(18, 70, len(days))}
    )  # fmt: skip
    path = write_table(frame, tmp_path)
    schema = infer_schema(frame, "Status", source=str(path))
    (line,) = ambiguities(frame, schema, str(path))
    assert line.startswith(f"{path}: column opened fits both %d/%m/%Y and %m/%d/%Y in every row")
    opened = schema.column("opened")
    assert (opened.kind, opened.format, opened.bounds) == ("datetime", None, None)
    documented(line, path=path)
    with pytest.raises(DataError) as err:  # training on the inferred schema refuses it
        prepare_data(loans_data(path), seed=0, launch_dir=tmp_path)
    assert one_line(err) == line
    # an edited schema without a format is refused too; with one, it is read that way
    edited = edit_schema(schema, tmp_path)
    with pytest.raises(DataError) as err:
        prepare_data(loans_data(path, schema=str(edited)), seed=0, launch_dir=tmp_path)
    refusal = one_line(err)
    assert refusal.startswith(f"{path}: column opened fits both %d/%m/%Y and %m/%d/%Y")
    documented(refusal, path=path)
    for fmt in ("%d/%m/%Y", "%m/%d/%Y"):
        with_format = edit_schema(schema, tmp_path, opened={"format": fmt})
        data = prepare_data(loans_data(path, schema=str(with_format)), seed=0, launch_dir=tmp_path)
        rows = pd.concat([data.train, data.val, data.test])
        assert set(rows["opened"]) <= set(pd.to_datetime(frame["opened"], format=fmt))


def test_a_column_of_mixed_date_formats_is_reviewed_not_read_row_by_row(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    dates = pd.Timestamp("2023-01-01") + pd.to_timedelta(rng.integers(0, 365, 400), "D")
    formats = ["%Y-%m-%d", "%d/%m/%Y", "%m/%d/%Y", "%d %b %Y"]
    text = [d.strftime(formats[i % 4]) for i, d in enumerate(dates)]
    frame = pd.DataFrame({"Status": np.where(np.arange(400) % 4 == 0, "bad", "good"),
                          "when": text, "Age": rng.integers(18, 70, 400)})  # fmt: skip
    path = write_table(frame, tmp_path)
    schema = infer_schema(frame, "Status", source=str(path))
    (line,) = ambiguities(frame, schema, str(path))
    assert line.startswith(f"{path}: column when holds dates written in more than one format")
    assert (schema.column("when").kind, schema.column("when").format) == ("datetime", None)
    documented(line, path=path)
    with pytest.raises(DataError) as err:
        prepare_data(loans_data(path), seed=0, launch_dir=tmp_path)
    assert one_line(err) == line
    with pytest.raises(DataError) as err:  # edited, still no one format: refused, not guessed
        prepare_data(loans_data(path, schema=str(edit_schema(schema, tmp_path))), seed=0,
                     launch_dir=tmp_path)  # fmt: skip
    documented(one_line(err), path=path)
    # a format that does not fit every cell: the first one that does not, in one line
    wrong = edit_schema(schema, tmp_path, when={"format": "%Y-%m-%d"})
    with pytest.raises(DataError) as err:
        prepare_data(loans_data(path, schema=str(wrong)), seed=0, launch_dir=tmp_path)
    line = one_line(err)
    assert line == (
        f"{path}: column when has 300 value(s) that are not dates written as %Y-%m-%d (first at "
        f"data row 2: {text[1]!r}); fix those cells, or set the format they are written in"
    )
    documented(line, path=path)


# --- numbers written as text ------------------------------------------------------------------


def test_numbers_written_with_separators_and_currency_are_numbers(tmp_path: Path) -> None:
    frame = loans_features(loans_table(), "Amount", "Fee")
    schema = infer_schema(frame, "Status", source=SOURCE)
    amount, fee = schema.column("Amount"), schema.column("Fee")
    assert (amount.kind, fee.kind) == ("integer", "continuous")  # not categoricals of amounts
    assert (amount.kind, amount.format) == ("integer", "1,234.5")
    assert (fee.kind, fee.format) == ("continuous", "$1,234.5")
    assert amount.levels is None and fee.levels is None
    text = schema.to_yaml()
    body = [line for line in text.splitlines() if not line.startswith("#")]
    assert [line for line in body if "$" in line] == ["  format: $1,234.5"]  # no fee is a level
    rows = validate_table(frame, schema, source=SOURCE, min_rows_per_class=1)
    plain = frame["Fee"].str.replace("$", "", regex=False).str.replace(",", "").astype(float)
    np.testing.assert_array_equal(rows["Fee"].to_numpy(), plain.to_numpy())
    assert (rows["Amount"] == frame["Amount"].str.replace(",", "").astype(int)).all()
    assert TableSchema.from_yaml(text).column("Fee").format == "$1,234.5"
    # through the command, and back into training through an edited schema
    path = write_table(frame, tmp_path)
    data = prepare_data(loans_data(path), seed=0, launch_dir=tmp_path)
    assert pd.api.types.is_float_dtype(data.train["Fee"])
    assert pd.api.types.is_integer_dtype(data.train["Amount"])
    edited = edit_schema(schema, tmp_path)
    data = prepare_data(loans_data(path, schema=str(edited)), seed=0, launch_dir=tmp_path)
    assert pd.api.types.is_float_dtype(data.train["Fee"])


def test_numbers_in_a_format_no_reader_takes_are_reviewed(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    price = [f"{x:,.2f}".replace(",", " ").replace(".", ",") for x in rng.lognormal(7, 1, 200)]
    price = [p.replace(" ", ".") for p in price]  # 1.234,50: dot thousands, comma decimals
    phone = [f"555 {i:04d}" for i in range(200)]  # digits and a space: no number formatting
    frame = pd.DataFrame({"Status": np.where(np.arange(200) % 4 == 0, "bad", "good"),
                          "price": price, "phone": phone})  # fmt: skip
    path = write_table(frame, tmp_path)
    inference = infer_table(frame, "Status", source=str(path))
    schema = inference.schema
    assert schema.column("price").kind == "categorical"
    (line,) = ambiguities(frame, schema, str(path))
    assert line.startswith(f"{path}: column price looks like numbers written as text")
    example = line.split("(e.g. ", 1)[1].split(")", 1)[0]
    assert example.strip("'") in set(price)
    documented(line, path=path)
    assert [found.column for found in inference.identifiers] == ["phone"]  # one value a row
