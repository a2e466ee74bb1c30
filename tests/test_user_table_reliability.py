"""A user's table read as the user wrote it, and shipped without the customers' own values.

Issue #52: day-first dates read one format per column (never day-first for one row and
month-first for the next), numbers written as text read as numbers, edited bounds that leave out
real rows refused, identifier and free-text columns refused as features, category levels and
datetime bounds that name few rows kept out of the schema, one live run per output folder, a
quote in an override and a number for a switch refused in one line, gaps served as JSON null,
``wgangp.sample`` defaulting to the class the model synthesizes, and the schema check printing
the table's own label counts. Every line a user sees is in docs/errors.md, word for word.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support.configs import REPO, SHARED_TABLES, TINY, compose, shared_table
from support.docs import documented
from support.tables import RARE_JOB, loans_table, write_table

from wgangp.config import DataConfig
from wgangp.data.prepare import prepare_data
from wgangp.data.read.table_reader import read_table
from wgangp.data.schema.inference import infer_schema, infer_table
from wgangp.data.schema.match import match_table
from wgangp.data.schema.review import ambiguities
from wgangp.data.schema.table_schema import TableSchema
from wgangp.data.schema.validation import validate_table
from wgangp.errors import ConfigError, DataError

SOURCE = "loans.csv"


def _data(path: Path, **kwargs) -> DataConfig:
    return DataConfig(path=str(path), label="Status", fallback="error", **kwargs)


def _one_line(err: pytest.ExceptionInfo) -> str:
    text = str(err.value)
    assert "\n" not in text and "Traceback" not in text
    return text


def _edited(schema: TableSchema, folder: Path, **columns: dict) -> Path:
    """``schema`` with the named columns' entries changed (None: deleted), as a YAML file."""
    raw = schema.to_dict()
    kept = []
    for entry in raw["columns"]:
        change = columns.get(entry["name"], {})
        if change is None:
            continue
        kept.append({**entry, **change})
    path = Path(folder) / "schema.yaml"
    path.write_text(TableSchema.from_dict({**raw, "columns": kept}).to_yaml())
    return path


def _features(frame: pd.DataFrame, *names: str) -> pd.DataFrame:
    return frame[["Status", *names]]


# --- 1. dates: one format per column, never a guess per row ------------------------------------


def _day_first(rows: int = 1200, seed: int = 0) -> tuple[pd.DataFrame, pd.Series]:
    frame = _features(loans_table(rows, seed), "Age", "opened")
    return frame, pd.to_datetime(frame["opened"], format="%d/%m/%Y")


def test_day_first_dates_are_read_with_the_one_format_that_fits_every_row() -> None:
    frame, true = _day_first()
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
        prepare_data(_data(path), seed=0, launch_dir=tmp_path)
    assert _one_line(err) == line
    # an edited schema without a format is refused too; with one, it is read that way
    edited = _edited(schema, tmp_path)
    with pytest.raises(DataError) as err:
        prepare_data(_data(path, schema=str(edited)), seed=0, launch_dir=tmp_path)
    refusal = _one_line(err)
    assert refusal.startswith(f"{path}: column opened fits both %d/%m/%Y and %m/%d/%Y")
    documented(refusal, path=path)
    for fmt in ("%d/%m/%Y", "%m/%d/%Y"):
        with_format = _edited(schema, tmp_path, opened={"format": fmt})
        data = prepare_data(_data(path, schema=str(with_format)), seed=0, launch_dir=tmp_path)
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
        prepare_data(_data(path), seed=0, launch_dir=tmp_path)
    assert _one_line(err) == line
    with pytest.raises(DataError) as err:  # edited, still no one format: refused, not guessed
        prepare_data(_data(path, schema=str(_edited(schema, tmp_path))), seed=0,
                     launch_dir=tmp_path)  # fmt: skip
    documented(_one_line(err), path=path)
    # a format that does not fit every cell: the first one that does not, in one line
    wrong = _edited(schema, tmp_path, when={"format": "%Y-%m-%d"})
    with pytest.raises(DataError) as err:
        prepare_data(_data(path, schema=str(wrong)), seed=0, launch_dir=tmp_path)
    line = _one_line(err)
    assert line == (
        f"{path}: column when has 300 value(s) that are not dates written as %Y-%m-%d (first at "
        f"data row 2: {text[1]!r}); fix those cells, or set the format they are written in"
    )
    documented(line, path=path)


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
    assert _one_line(err) == expected.replace("<file>", str(path))
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


# --- 2. numbers written as text ----------------------------------------------------------------


def test_numbers_written_with_separators_and_currency_are_numbers(tmp_path: Path) -> None:
    frame = _features(loans_table(), "Amount", "Fee")
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
    data = prepare_data(_data(path), seed=0, launch_dir=tmp_path)
    assert pd.api.types.is_float_dtype(data.train["Fee"])
    assert pd.api.types.is_integer_dtype(data.train["Amount"])
    edited = _edited(schema, tmp_path)
    data = prepare_data(_data(path, schema=str(edited)), seed=0, launch_dir=tmp_path)
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


# --- 3. edited bounds that leave out real rows --------------------------------------------------


def test_edited_bounds_that_exclude_real_rows_are_refused(tmp_path: Path) -> None:
    frame = _features(loans_table(), "Age", "opened")
    path = write_table(frame, tmp_path)
    schema = infer_schema(frame, "Status", source=str(path))
    edited = _edited(schema, tmp_path, Age={"bounds": [30, 40]})
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
        prepare_data(_data(path, schema=str(edited)), seed=0, launch_dir=tmp_path)
    assert _one_line(err) == expected
    documented(expected, path=path)
    # at the schema check, as one line and exit code 2
    result = _schema_cli(f"data.path={path}", f"data.schema={edited}", cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip().splitlines()[-1] == f"wgangp: error: {expected}"
    # a datetime bound too
    dates = _edited(schema, tmp_path, opened={"bounds": ["2023-01-01", "2023-06-30"]})
    with pytest.raises(DataError, match=r"column opened has \d+ value\(s\) outside its bounds"):
        prepare_data(_data(path, schema=str(dates)), seed=0, launch_dir=tmp_path)


def test_inferred_bounds_passed_back_stay_quiet(tmp_path: Path) -> None:
    """Inferred bounds are the means of the 5 most extreme values: a few rows lie just outside
    them by design, and an unedited schema must pass its own table's check."""
    frame = loans_table().drop(columns=["Name", "Email", "Notes"])
    path = write_table(frame, tmp_path)
    schema = infer_schema(frame, "Status", source=str(path))
    low, high = schema.column("Age").bounds
    assert (frame["Age"] < low).any() or (frame["Age"] > high).any() or low == 18
    match_table(frame, schema, str(path))  # no error
    wider = _edited(schema, tmp_path, Age={"bounds": [0, 120]})
    prepare_data(_data(path, schema=str(wider)), seed=0, launch_dir=tmp_path)


@pytest.mark.parametrize("name", sorted(SHARED_TABLES))
def test_a_shared_tables_inferred_schema_passes_its_own_check(name: str) -> None:
    path = shared_table(name)
    _, label, positive = SHARED_TABLES[name]
    frame = read_table(path)
    schema = infer_schema(frame, label, positive, source=str(path))
    match_table(frame, TableSchema.from_yaml(schema.to_yaml()), str(path))


# --- 5. identifier and free-text columns --------------------------------------------------------


def test_identifier_and_free_text_columns_are_dropped_and_refused_when_kept(
    tmp_path: Path,
) -> None:
    frame = _features(loans_table(), "Age", "Name", "Email", "Notes")
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
        prepare_data(_data(path, schema=str(edited)), seed=0, launch_dir=tmp_path)
    line = _one_line(err)
    assert line == (
        f"{path}: column Email holds e-mail addresses: an identifier never trains or ships, "
        "since its values would come back verbatim in samples; delete its entry from "
        "data.schema"
    )
    documented(line, path=path)
    result = _schema_cli(f"data.path={path}", f"data.schema={edited}", cwd=tmp_path)
    assert result.returncode == 2 and "@" not in result.stdout
    # training on the inferred schema drops them and trains on the rest
    data = prepare_data(_data(path), seed=0, launch_dir=tmp_path)
    assert data.features == ["Age"]


# --- 6. levels and datetime bounds that name few rows -------------------------------------------


def test_a_level_fewer_than_5_rows_hold_is_read_as_other(tmp_path: Path) -> None:
    from wgangp.data.transform.table_transform import TableTransform

    frame = _features(loans_table(), "Age", "Job")
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
    data = prepare_data(_data(path, schema=str(_edited(schema, tmp_path))), seed=0,
                        launch_dir=tmp_path)  # fmt: skip
    assert RARE_JOB not in set(pd.concat([data.train, data.val, data.test])["Job"].dropna())


def test_datetime_bounds_name_no_row() -> None:
    frame, true = _day_first()
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


# --- 4. one live run per output folder ----------------------------------------------------------


def _holder(folder: Path) -> subprocess.Popen:
    """Another process holding ``folder``'s output lock until its stdin closes."""
    code = (
        "import sys; from wgangp.training.output_lock import lock_output_dir; "
        f"lock_output_dir({str(folder)!r}); print('locked', flush=True); sys.stdin.read()"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    assert process.stdout.readline().strip() == "locked"
    return process


def _release(process: subprocess.Popen) -> None:
    process.stdin.close()
    process.wait(timeout=60)


def test_a_second_run_in_a_folder_in_use_is_refused_before_writing(tmp_path: Path) -> None:
    from wgangp.training.output_lock import lock_output_dir, unlock_output_dir

    out = tmp_path / "out"
    lock_output_dir(out)  # this test process holds it; the command below is another process
    try:
        env = {**os.environ, "PYTHONPATH": str(REPO), "TF_CPP_MIN_LOG_LEVEL": "3"}
        env.pop("MLFLOW_TRACKING_URI", None)
        result = subprocess.run(
            [sys.executable, "-m", "wgangp.train", *TINY, f"hydra.run.dir={out}",
             f"tracking.uri=sqlite:///{tmp_path / 'mlflow.db'}"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
    finally:
        unlock_output_dir(out)
    line = (
        f"wgangp: error: output directory {out} is in use by pid {os.getpid()}; wait for that "
        "job, or give this one its own hydra.run.dir=..."
    )
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stderr.strip().splitlines() == [line]
    documented(line.removeprefix("wgangp: error: "), dir=out, n=os.getpid())
    # nothing written into the folder, no MLflow store or run opened
    assert sorted(p.name for p in out.iterdir()) == [".wgangp.lock"]
    assert not (tmp_path / "mlflow.db").exists()


def test_a_run_outside_hydra_takes_the_same_lock(tmp_path: Path) -> None:
    from wgangp.train import train

    out = tmp_path / "out"
    holder = _holder(out)
    try:
        uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
        cfg = compose([*TINY, f"tracking.uri={uri}"])
        with pytest.raises(ConfigError) as err:
            train(cfg, output_dir=out, launch_dir=tmp_path)
    finally:
        _release(holder)
    assert _one_line(err).startswith(f"output directory {out} is in use by pid {holder.pid};")
    assert not (tmp_path / "mlflow.db").exists()  # refused before any MLflow run


def test_hydras_default_folder_in_use_moves_to_a_free_sibling(tmp_path: Path, capsys) -> None:
    from omegaconf import OmegaConf

    from wgangp.training.output_lock import OutputDirLock

    stamp = tmp_path / "outputs" / "2026-01-01" / "10-00-00"
    holder = _holder(stamp)
    try:
        default = OmegaConf.create(
            {"hydra": {"run": {"dir": str(stamp)}, "overrides": {"hydra": []}}}
        )
        OutputDirLock().on_run_start(default)
        moved = Path(default.hydra.run.dir)
        assert moved == stamp.with_name("10-00-00-1")
        line = capsys.readouterr().err.strip()
        assert line == (
            f"wgangp: output directory {stamp} is in use by pid {holder.pid}; this run writes to "
            f"{moved}"
        )
        documented(line.removeprefix("wgangp: "), dir=stamp, n=holder.pid, moved=moved)
        OutputDirLock().on_run_end(default)  # released when the job ends: another may take it
        _release(_holder(moved))
        chosen = OmegaConf.create(
            {"hydra": {"run": {"dir": str(stamp)},
                       "overrides": {"hydra": [f"hydra.run.dir={stamp}"]}}}
        )  # fmt: skip
        with pytest.raises(SystemExit) as exit_:
            OutputDirLock().on_run_start(chosen)
        assert exit_.value.code == 2
    finally:
        _release(holder)


# --- 7, 8. the command line --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("override", "fix"),
    [
        ("tracking.register_as=o'brien", 'tracking.register_as=\\"o\\\'brien\\"'),
        ("data.path=/data/it's.csv", 'data.path=\\"/data/it\\\'s.csv\\"'),
    ],
)
def test_an_unquoted_apostrophe_is_one_line_with_the_quoting(
    tmp_path: Path, override: str, fix: str
) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [sys.executable, "-m", "wgangp.train", override], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    line = (
        f"wgangp: error: override '{override}' holds an unmatched ' (Hydra reads a quote as the "
        f"start of a quoted value); quote the value for Hydra and escape it for the shell: {fix}"
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [line]
    if override.startswith("data.path"):
        documented(line.removeprefix("wgangp: error: "))
    # the quoting it names reaches Hydra as one quoted value
    typed = subprocess.run(
        ["bash", "-c", f"printf '%s' {fix}"], capture_output=True, text=True, check=True
    ).stdout
    from hydra.core.override_parser.overrides_parser import OverridesParser

    value = OverridesParser.create().parse_overrides([typed])[0].value()
    assert value == override.split("=", 1)[1]


@pytest.mark.parametrize("value", ["2", "0", "yes", "on", "1.0"])
def test_a_switch_takes_only_true_or_false(value: str) -> None:
    from wgangp.cli import check_overrides

    with pytest.raises(ConfigError) as err:
        check_overrides([f"trainer.refit={value}"])
    line = _one_line(err)
    shown = repr(value) if value in ("yes", "on") else value
    assert line == (
        f"invalid config value in override 'trainer.refit={value}': trainer.refit is true or "
        f"false, got {shown}"
    )
    if value == "2":
        documented(line)
    check_overrides(["trainer.refit=true", "trainer.refit=False", "evaluate.enabled=TRUE"])


# --- 9. the served model's answer is JSON -------------------------------------------------------


class _GappySynthesizer:
    """A table model's rows with a gap in every column kind."""

    def __init__(self, table: TableSchema) -> None:
        self.schema = table

    def sample(self, n: int, label: int = 1, seed: int = 0) -> pd.DataFrame:
        rows = pd.DataFrame(
            {
                "Status": ["bad"] * n,
                "Age": pd.array([30 + i if i % 2 else None for i in range(n)], dtype="Int64"),
                "Job": pd.Series(["fixed" if i % 2 else np.nan for i in range(n)], dtype=object),
                "Fee": [1.5 if i % 2 else np.nan for i in range(n)],
                "opened": pd.to_datetime(["2023-01-01" if i % 2 else None for i in range(n)]),
            }
        )
        return rows


def test_the_served_answer_writes_every_gap_as_null() -> None:
    from mlflow.pyfunc.scoring_server import predictions_to_json

    from wgangp.serving.pyfunc import SynthesizerModel

    frame = _features(loans_table(), "Age", "Job", "Fee", "opened")
    model = SynthesizerModel()
    model.synthesizer = _GappySynthesizer(infer_schema(frame, "Status"))
    answer = model.predict(None, pd.DataFrame({"n": [4, 6]}))
    buffer = io.StringIO()
    predictions_to_json(answer, buffer)  # what `mlflow models serve` writes

    def refuse(constant: str) -> None:
        raise AssertionError(f"not JSON: {constant}")

    rows = json.loads(buffer.getvalue(), parse_constant=refuse)["predictions"]
    assert len(rows) == 10
    for row in rows[::2]:
        assert {row[c] for c in ("Age", "Job", "Fee", "opened")} == {None}
    assert rows[1]["Job"] == "fixed" and rows[1]["Age"] == 31 and rows[1]["Fee"] == 1.5


# --- 10. wgangp.sample without label= -----------------------------------------------------------


def test_sample_without_label_draws_the_class_the_model_synthesizes(tmp_path, monkeypatch) -> None:
    from wgangp.sample import main
    from wgangp.serving import synthesizer as synthesizer_module
    from wgangp.serving.bundle import META_FILE, SCHEMA_FILE

    bundle = tmp_path / "synthesizer"
    bundle.mkdir()
    frame = _features(loans_table(), "Age")
    schema = infer_schema(frame, "Status")
    (bundle / SCHEMA_FILE).write_text(schema.to_yaml())
    (bundle / META_FILE).write_text("{}")
    asked = []

    class Loaded:
        def sample(self, n: int, label: int, seed: int) -> pd.DataFrame:
            asked.append(label)
            return pd.DataFrame({"Status": ["bad" if label == 1 else "good"] * n, "Age": [30] * n})

    monkeypatch.setattr(
        synthesizer_module.Synthesizer, "load", classmethod(lambda cls, p: Loaded())
    )
    out = tmp_path / "rows.csv"
    assert main([f"model_uri={bundle}", "n=5", f"output={out}"]) == 0
    assert asked == [1]
    assert set(pd.read_csv(out)["Status"]) == {"bad"}
    assert main([f"model_uri={bundle}", "n=5", f"output={out}", "label=good"]) == 0
    assert asked == [1, 0]


# --- 11. the schema check prints the table's counts ---------------------------------------------


def _schema_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "wgangp.schema", *args], cwd=cwd, env=env, capture_output=True,
        text=True, timeout=300,
    )  # fmt: skip


def test_the_schema_check_prints_the_tables_label_counts(tmp_path: Path, capsys, caplog) -> None:
    from wgangp.schema import main

    frame = _features(loans_table(), "Age")
    path = write_table(frame, tmp_path)
    schema = infer_schema(frame, "Status", source=str(path))
    counts = frame["Status"].value_counts()
    raw = schema.to_dict()
    raw["label_counts"] = {"bad": 5, "good": 7}  # edited, or from another table
    raw["rows"] = 12
    edited = tmp_path / "schema.yaml"
    edited.write_text(TableSchema.from_dict(raw).to_yaml())
    caplog.set_level("INFO", logger="wgangp.schema")
    assert main([f"data.path={path}", f"data.schema={edited}"]) == 0
    printed = TableSchema.from_yaml(capsys.readouterr().out)
    assert dict(printed.label_counts) == {"bad": counts["bad"], "good": counts["good"]}
    assert printed.rows == len(frame)
    assert f"label Status (bad: {counts['bad']}, good: {counts['good']})" in caplog.text
    caplog.clear()
    assert main([f"data.schema={edited}"]) == 0  # the file alone: its own counts, said so
    assert "as the schema file gives them: bad: 5, good: 7" in caplog.text


# --- end to end: a tiny run on the loans table ---------------------------------------------------


@pytest.mark.slow
def test_a_loans_run_ships_no_rare_level_no_extreme_date_and_samples_right(tmp_path: Path) -> None:
    """Trains a tiny model on the loans table (day-first dates, text numbers, a rare job, gaps)
    in a subprocess, then reads everything that ships and samples it without ``label=``."""
    from mlflow.pyfunc.scoring_server import predictions_to_json

    from wgangp.serving.pyfunc import SynthesizerModel
    from wgangp.serving.synthesizer import Synthesizer

    frame = loans_table().drop(columns=["Name", "Email", "Notes"])
    frame.loc[0, "opened"] = "01/01/2019"
    frame.loc[1, "opened"] = "31/12/2025"
    path = write_table(frame, tmp_path)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    env = {**os.environ, "PYTHONPATH": str(REPO), "TF_CPP_MIN_LOG_LEVEL": "3"}
    env.pop("MLFLOW_TRACKING_URI", None)
    args = [o for o in TINY if not o.startswith("data")] + [
        f"data.path={path}", "data.label=Status", "data.val_fraction=0.2",
        f"tracking.uri={uri}", f"hydra.run.dir={tmp_path / 'out'}",
    ]  # fmt: skip
    result = subprocess.run(
        [sys.executable, "-m", "wgangp.train", *args], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    bundle = tmp_path / "out" / "synthesizer"
    import mlflow

    client = mlflow.MlflowClient(uri)
    (run,) = client.search_runs(client.get_experiment_by_name("wgangp").experiment_id)
    assert run.info.status == "FINISHED"
    downloaded = Path(
        mlflow.artifacts.download_artifacts(
            run_id=run.info.run_id, tracking_uri=uri, dst_path=str(tmp_path / "artifacts")
        )
    )
    texts = [p.read_text(errors="ignore") for p in downloaded.rglob("*") if p.is_file()]
    texts += [p.read_text(errors="ignore") for p in bundle.rglob("*") if p.is_file()]
    for text in texts:
        assert RARE_JOB not in text
        assert "2019-01-01" not in text and "2025-12-31" not in text
    # sampling without label=: the positive class, dates within the real ones
    out = tmp_path / "rows.csv"
    sampled = subprocess.run(
        [sys.executable, "-m", "wgangp.sample", f"model_uri={bundle}", "n=300", f"output={out}"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert sampled.returncode == 0, sampled.stderr[-2000:]
    rows = pd.read_csv(out)
    assert set(rows["Status"]) == {"bad"}
    assert RARE_JOB not in set(rows["Job"].dropna())
    dates = pd.to_datetime(rows["opened"].dropna())
    real = pd.to_datetime(frame["opened"], format="%d/%m/%Y")
    assert dates.max() <= real.max() and dates.min() >= real.min()
    # the served answer is JSON with null gaps
    model = SynthesizerModel()
    model.synthesizer = Synthesizer.load(bundle)
    buffer = io.StringIO()
    predictions_to_json(model.predict(None, pd.DataFrame({"n": [200]})), buffer)
    assert "NaN" not in buffer.getvalue()
    json.loads(buffer.getvalue())


@pytest.mark.slow
def test_two_runs_started_together_in_one_folder(tmp_path: Path) -> None:
    """Both commands start at once with one hydra.run.dir: one trains, the other is refused in
    one line before writing there or opening an MLflow run."""
    import mlflow

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    env = {**os.environ, "PYTHONPATH": str(REPO), "TF_CPP_MIN_LOG_LEVEL": "3"}
    env.pop("MLFLOW_TRACKING_URI", None)
    out = tmp_path / "out"
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "wgangp.train",
                *TINY,
                f"seed={seed}",
                f"hydra.run.dir={out}",
                f"tracking.uri={uri}",
            ],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for seed in (0, 1)
    ]
    started = time.monotonic()
    outcomes = [(p.wait(timeout=1800), p.stderr.read()) for p in processes]
    assert time.monotonic() - started < 1800
    codes = sorted(code for code, _ in outcomes)
    assert codes == [0, 2], [err[-1500:] for _, err in outcomes]
    refused = next(err for code, err in outcomes if code == 2)
    assert refused.strip().splitlines()[-1].startswith(f"wgangp: error: output directory {out}")
    client = mlflow.MlflowClient(uri)
    runs = client.search_runs([e.experiment_id for e in client.search_experiments()])
    assert [r.info.status for r in runs] == ["FINISHED"]
    log = (out / "train.log").read_text()
    assert log.count("MLflow run ") == 1  # one run's log, not two interleaved
