"""The DP peers' comparison without the peers' envs: its split, its table, a failure's one line."""

from __future__ import annotations

import json
import math
import stat
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from scripts.dp_peers import (
    TABLE,
    Result,
    json_line,
    peer_python,
    peer_rows,
    preprocessor_eps,
    run_one,
    summarize,
)
from scripts.dp_scores import in_form, rare_split
from scripts.tables_benchmark.tables import shared_data_dir
from wgangp.data.schema.inference import infer_schema


def rare_rows(count: int = 1254) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"row": np.arange(count), "x": rng.normal(size=count)})


def test_the_split_is_the_earlier_measurements_878_and_376_and_follows_the_seed() -> None:
    rare = rare_rows()
    train, held = rare_split(rare, 0)
    assert (len(train), len(held)) == (878, 376)
    assert set(train["row"]).isdisjoint(held["row"])
    assert set(train["row"]) | set(held["row"]) == set(range(1254))
    again, _ = rare_split(rare, 0)
    other, _ = rare_split(rare, 1)
    pd.testing.assert_frame_equal(train, again)
    assert set(other["row"]) != set(train["row"])


def test_the_table_shows_mean_sd_and_seconds_and_a_failure_as_its_line() -> None:
    results = [
        Result("mst", 1.0, 0, detection=0.9, wall_s=100.0),
        Result("mst", 1.0, 1, detection=0.8, wall_s=120.0),
        Result("mst", 3.0, 0, note="ValueError: bounds | not found"),
        Result("real", None, 0, detection=0.52, wall_s=0.01),
        Result("real", None, 1, detection=0.54, wall_s=0.01),
    ]
    table = summarize(results, [1.0, 3.0], ["mst", "aim"]).splitlines()
    assert table[0] == "| method | epsilon 1 | epsilon 3 |"
    mst = next(line for line in table if line.startswith("| mst "))
    assert "0.850 ± 0.071 (110 s)" in mst
    assert "failed: ValueError: bounds \\| not found" in mst  # a pipe can't break the row
    assert "| aim | not run | not run |" in table
    real = next(line for line in table if line.startswith("| real training rows"))
    assert real.count("0.530 ± 0.014 (0.0 s)") == 2


def test_a_failing_peer_becomes_its_last_error_line(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text(
        "#!/bin/sh\n"
        "echo 'Traceback (most recent call last):' >&2\n"
        "echo '  File \"bin.py\", line 44, in _fit_finish' >&2\n"
        "echo 'ValueError: BinTransformer could not find bounds.' >&2\n"
        "exit 1\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    train = pd.DataFrame({"Home": ["own", "rent"], "Age": [30, 40]})
    draw = partial(
        peer_rows, "mst", train, ["Home"], 2, epsilon=1.0, delta=1e-5, seed=0, epochs=None,
        timeout=30, python=fake,
    )  # fmt: skip
    with pytest.raises(RuntimeError, match="^ValueError: BinTransformer could not find bounds.$"):
        draw()
    result = run_one(Result("mst", 1.0, 0), draw, score=lambda rows: 0.5)
    assert result.note == "ValueError: BinTransformer could not find bounds."
    assert math.isnan(result.detection)
    assert json.loads(json_line(result))["detection"] is None  # JSON, not NaN
    assert "failed: ValueError: BinTransformer" in summarize([result], [1.0], ["mst"])


def test_a_missing_env_names_the_command_that_makes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WGANGP_BENCH_ENVS", str(tmp_path))
    with pytest.raises(RuntimeError, match="setup_envs.sh synthcity"):
        peer_python("dpgan")


def test_the_bounds_take_at_most_one_epsilon_and_never_the_whole() -> None:
    assert preprocessor_eps(1.0) == pytest.approx(0.7)
    assert preprocessor_eps(3.0) == preprocessor_eps(10.0) == 1.0


def test_generated_rows_are_put_in_the_schemas_form() -> None:
    frame = pd.DataFrame(
        {"Home": ["own", "rent", None, "own"], "Age": [30, 41, 52, 25], "Status": list("bggb")}
    )
    schema = infer_schema(frame, "Status", "b")
    rows = pd.DataFrame({"Home": ["rent", np.nan], "Age": ["30.6", 41.2]})
    formed = in_form(rows, schema)
    assert formed["Age"].tolist() == [31.0, 41.0]
    assert formed["Home"].iloc[0] == "rent" and pd.isna(formed["Home"].iloc[1])


def test_the_shared_table_splits_into_878_and_376_bad_rows() -> None:
    from wgangp.data.read.table_reader import read_table

    path = TABLE.path(shared_data_dir(None))
    if not path.is_file():
        pytest.skip(f"the shared credit table is not at {path} (set WGANGP_SHARED_DATA)")
    frame = read_table(path)
    rare = frame[frame[TABLE.label] == TABLE.positive]
    train, held = rare_split(rare, 2)
    assert (len(rare), len(train), len(held)) == (1254, 878, 376)
