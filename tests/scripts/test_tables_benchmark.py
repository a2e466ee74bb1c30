"""The benchmark across tables: its coding of mixed rows, its baselines, its errors, its smoke."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from scripts.tables_benchmark import baselines, scores
from scripts.tables_benchmark.__main__ import main
from scripts.tables_benchmark.codes import TableCodes
from scripts.tables_benchmark.runner import METHODS, Settings, run_seed
from scripts.tables_benchmark.tables import SHARED_VARIABLE, TABLES, TableSpec
from wgangp.data.schema.inference import infer_schema
from wgangp.evaluation.encoding import TableEncoding
from wgangp.training.interrupts import Interrupted

REPO = Path(__file__).resolve().parents[2]


def mixed_table(rows: int = 600, seed: int = 0) -> pd.DataFrame:
    """A categorical with gaps, an integer with gaps, a float, a string label."""
    rng = np.random.default_rng(seed)
    home = rng.choice(["own", "rent", "parents"], rows, p=[0.6, 0.3, 0.1]).astype(object)
    home[rng.random(rows) < 0.05] = np.nan
    age = rng.integers(18, 70, rows).astype(float)
    income = np.round(age * 30 + rng.normal(0, 50, rows), 2)
    age[rng.random(rows) < 0.2] = np.nan
    label = np.where(rng.random(rows) < 0.3, "bad", "good")
    return pd.DataFrame({"Home": home, "Age": age, "Income": income, "Status": label})


def coded_rows() -> tuple[TableCodes, pd.DataFrame]:
    frame = mixed_table()
    table = infer_schema(frame, "Status", "bad")
    features = frame.drop(columns=["Status"])
    return TableCodes.fit(table, features), features


def test_coded_rows_decode_to_the_same_levels_integers_and_gaps() -> None:
    codes, rows = coded_rows()
    back = codes.decode(codes.encode(rows))
    pd.testing.assert_frame_equal(back, rows, check_dtype=False)
    assert codes.discrete == ["Home", "Age__gap"]


def test_the_copula_keeps_each_category_and_gap_share() -> None:
    codes, rows = coded_rows()
    drawn = baselines.copula_rows(codes, rows, 4000, seed=1)
    for name in ("Home", "Age"):
        assert abs(drawn[name].isna().mean() - rows[name].isna().mean()) < 0.03, name
    shares = drawn["Home"].value_counts(normalize=True)
    real = rows["Home"].value_counts(normalize=True)
    assert (shares - real).abs().max() < 0.03


def test_smote_nc_and_marginals_stay_in_the_tables_form() -> None:
    codes, rows = coded_rows()
    table = infer_schema(mixed_table(), "Status", "bad")
    for drawn in (
        baselines.smote_rows(codes, rows.iloc[:150], rows.iloc[150:], 300, seed=0),
        baselines.marginal_rows(rows, 300, seed=0),
    ):
        assert len(drawn) == 300
        form = scores.form(table, drawn, rows)
        # Bounds are not asserted: the schema's are means of the k most extreme training rows
        # (privacy), and both baselines reuse real values beyond them.
        assert form["invalid_category"] == form["fractional_integer"] == 0.0


def test_the_form_check_counts_bad_categories_fractions_and_out_of_bounds() -> None:
    codes, rows = coded_rows()
    table = infer_schema(mixed_table(), "Status", "bad")
    bad = rows.iloc[:4].copy()
    bad.loc[0, "Home"] = "castle"
    bad.loc[1, "Age"] = 30.5
    bad.loc[2, "Age"] = 500.0
    form = scores.form(table, bad, rows)
    assert form == pytest.approx(
        {
            "invalid_category": 0.25,
            "fractional_integer": 0.25,
            "out_of_bounds": 0.25,
            "gap_share_points": form["gap_share_points"],
        }
    )


def test_copies_of_training_rows_are_counted_and_new_rows_are_not() -> None:
    _, rows = coded_rows()
    encoding = TableEncoding(infer_schema(mixed_table(), "Status", "bad"), rows)
    train = encoding.distance_matrix(rows)
    assert scores.exact_copies(train[:10], train) == 10
    shifted = train[:10].copy()
    shifted[:, 1] += 0.01  # Income (standardized) a little off
    assert scores.exact_copies(shifted, train) == 0


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--tables", "kaggle"], "unknown table 'kaggle'"),
        (["--methods", "gan"], "unknown method(s) ['gan']"),
        (["--data", "/nonexistent-folder"], "no table at /nonexistent-folder/"),
        (["--set", "ship.copula_shar=0"], "ship.copula_shar"),
        (["--set", "ship.copula_share"], "--set takes KEY=VALUE"),
        (["--from-results", "/nonexistent.csv"], "no results file /nonexistent.csv"),
    ],
)
def test_a_wrong_option_is_one_line_and_exit_2(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1 and "Traceback" not in err


def test_saved_results_print_mean_spread_and_paired_lifts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        {"table": "t", "seed": seed, "method": method, "real_rows": 50, "detection": value,
         "near_copies": 0.0, "exact_copies": 0.0, "wall_s": 1.0, "gap_share_points": 0.0,
         "invalid_category": 0.0, "fractional_integer": 0.0, "out_of_bounds": 0.0}
        for seed, (default, smote) in enumerate([(0.6, 0.7), (0.8, 0.7)])
        for method, value in (("default", default), ("smote", smote))
    ]  # fmt: skip
    pd.DataFrame(rows).to_csv(tmp_path / "results.csv", index=False)
    assert main(["--from-results", str(tmp_path / "results.csv")]) == 0
    out = capsys.readouterr().out
    assert "| default model | 0.700 ± 0.141 |" in out
    assert "SMOTE(-NC) 0.000 ± 0.141" in out


def test_a_failing_method_is_its_note_and_a_signal_stops_the_benchmark(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = tmp_path / "mixed.csv"
    mixed_table(rows=900).to_csv(table, index=False)
    spec = TableSpec("mixed", "mixed.csv", "Status", "bad")
    settings = Settings(methods=("marginals", "control"))

    def broken(*_: object) -> pd.DataFrame:
        raise ValueError("no rows today")

    monkeypatch.setattr(baselines, "marginal_rows", broken)
    outcomes = run_seed(spec, table, 0, tmp_path / "out", settings, REPO)
    assert [o.method for o in outcomes] == ["marginals", "control"]
    assert outcomes[0].note == "ValueError: no rows today" and not outcomes[0].figures
    assert 0.0 <= outcomes[1].figures["detection"] <= 1.0

    def interrupted(*_: object) -> pd.DataFrame:
        raise Interrupted("interrupted by SIGTERM", signal.SIGTERM)

    monkeypatch.setattr(baselines, "marginal_rows", interrupted)
    with pytest.raises(Interrupted):
        run_seed(spec, table, 0, tmp_path / "out", settings, REPO)


def shared_data() -> Path:
    return Path(os.environ.get(SHARED_VARIABLE) or REPO.parent / "shared" / "data")


@pytest.mark.slow
# The built lender table is the point-mass test's (tests/training/test_point_masses.py).
@pytest.mark.parametrize("name", [name for name, spec in TABLES.items() if not spec.generated])
def test_the_smoke_scores_every_method_on_a_shared_table(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = TABLES[name]
    if not spec.path(shared_data()).is_file():
        pytest.skip(f"{spec.path(shared_data())} absent (set {SHARED_VARIABLE})")
    argv = ["--smoke", "--tables", name, "--data", str(shared_data()), "--out", str(tmp_path)]
    assert main(argv) == 0
    assert f"### {name}" in capsys.readouterr().out
    results = pd.read_csv(tmp_path / "results.csv").set_index("method")
    assert list(results.index) == list(METHODS)
    expected_unscored = set()
    if not (REPO / ".bench-envs" / "ctgan" / ".ready").is_file():
        expected_unscored.add("ctgan")
    scored = results["detection"].notna()
    assert set(results.index[~scored]) == expected_unscored
    assert results.loc[scored, "detection"].between(0.0, 1.0).all()
    # the control's near copies: real rows nobody trained on, the bound for any generator
    assert 0.0 <= results.loc["control", "near_copies"] <= 1.0
    assert (results["real_rows"] == results["real_rows"].iloc[0]).all()
    assert (tmp_path / "summary.md").is_file()


def test_held_out_rows_no_generator_of_the_run_could_make_are_dropped() -> None:
    """A level the run never saw, a number beyond its clip bounds, a gap where it saw none."""
    from scripts.tables_benchmark.split import _in_form

    frame = mixed_table()
    frame["Income"] = frame["Income"].astype(float)
    table = infer_schema(frame, "Status", "bad")
    income = next(c for c in table.columns if c.name == "Income")
    assert not income.nullable and income.clip
    held = frame.head(6).copy()
    held.loc[0, "Home"] = "boat"
    held.loc[1, "Income"] = income.bounds[1] + 1000
    held.loc[2, "Income"] = np.nan
    kept = _in_form(held, table)
    assert len(kept) == 3
    pd.testing.assert_series_equal(
        kept["Income"], frame["Income"].iloc[3:6].reset_index(drop=True), check_dtype=False
    )


def test_a_held_out_run_is_named_after_its_table_and_seed(tmp_path: Path) -> None:
    from scripts.tables_benchmark.default_model import compose, overrides
    from scripts.tables_benchmark.split import carve_holdout
    from wgangp.config import to_config
    from wgangp.training.run_record import default_run_name, planned_table_name

    spec = TableSpec("loans", "loans.csv", "Status", "bad")
    source = tmp_path / "loans.csv"
    mixed_table().to_csv(source, index=False)
    rest, held = carve_holdout(spec, source, 3, tmp_path)
    assert len(held) and rest.name == "loans.csv.gz"
    cfg = to_config(compose(overrides(spec, rest, 3, tmp_path, steps=None, smoke=False)))
    assert (
        default_run_name(cfg, planned_table_name(cfg), "1a2b3c4d") == "tables-loans-seed3-1a2b3c4d"
    )
