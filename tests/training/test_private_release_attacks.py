"""The privacy guarantee attacked, as a reviewer would: what a private run releases before training
(schema, transform, noisy counts) is replayed with the public seed, and compared between a table
and its neighbour, one customer fewer.

Releases are made the way a run makes them (``prepare_data`` then ``release``, no training), so
each attack costs seconds; what ships is a function of these releases and the networks'.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support.configs import TINY, compose
from support.docs import documented, one_line

from wgangp.config import to_config
from wgangp.data.prepare import prepare_data
from wgangp.errors import DataError
from wgangp.privacy.randomness import REPLAYABLE_ENV, noise_source
from wgangp.training.private_fit import private_reading, release

PRIVATE = [o for o in TINY if not o.startswith("data")] + [
    "data.label=status",
    "data.positive=bad",
    "privacy.epsilon=3",
]


def _customers(rows: int = 1500, seed: int = 0) -> pd.DataFrame:
    """A table with gaps nowhere, whole incomes, booleans, a short text column, ISO dates and a
    label."""
    rng = np.random.default_rng(seed)
    bad = rng.random(rows) < 0.2
    return pd.DataFrame(
        {
            "marital": rng.choice(["single", "married", "divorced"], rows),
            "income": rng.integers(800, 9000, rows),
            "score": np.round(rng.normal(600, 50, rows), 3),
            "vip": rng.random(rows) < 0.3,
            "channel": rng.choice(["web", "app", "branch"], rows),
            "opened": (
                pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 1500, rows), "D")
            ).strftime("%Y-%m-%d"),
            "status": np.where(bad, "bad", "good"),
        }
    )


def _released(
    frame: pd.DataFrame, folder: Path, monkeypatch: pytest.MonkeyPatch, key: int | None
) -> dict:
    """What one private run releases before training on ``frame`` (a CSV), its noise from the OS
    or, with ``key``, from the test switch: the shipped schema, the transform (preprocessing.json),
    the networks' width and the noisy entity counts (behind the shipped sampling rate)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "table.csv"
    frame.to_csv(path, index=False)
    if key is None:
        monkeypatch.delenv(REPLAYABLE_ENV, raising=False)
    else:
        monkeypatch.setenv(REPLAYABLE_ENV, str(key))
    cfg = to_config(compose([*PRIVATE, f"data.path={path}"]))
    noise = noise_source()
    data = prepare_data(
        cfg.data, seed=cfg.seed, launch_dir=folder, reading=private_reading(cfg, noise)
    )
    private = release(cfg, data, noise)
    return {
        "schema": private.data.schema.to_dict(),
        "transform": json.loads(json.dumps(private.transformer.to_dict(), default=str)),
        "width": private.transformer.width,
        "counts": list(private.plan.entities),
    }


@pytest.mark.slow
def test_a_replay_with_the_public_seed_tells_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The attack that broke the old guarantee: replay the run with its seed (public, an MLflow
    param) on the table with and without a customer; the release that matches is the truth.
    Noise keyed by the seed (the test switch, keyed by it) loses with advantage 1; secret noise
    matches neither replay, so the attack's guess is the same whatever the truth: advantage 0."""
    table = _customers()
    neighbour = table.iloc[1:].reset_index(drop=True)
    seed_key = 0  # what the old code's noise followed: the run's seed
    replays = {
        "table": _released(table, tmp_path / "replay-table", monkeypatch, seed_key),
        "neighbour": _released(neighbour, tmp_path / "replay-neighbour", monkeypatch, seed_key),
    }
    assert replays["table"]["counts"] != replays["neighbour"]["counts"]

    def guess(shipped: dict) -> str:
        return "table" if shipped == replays["table"] else "neighbour"

    def advantage(key: int | None) -> float:
        truths = {"table": table, "neighbour": neighbour}
        right = {
            truth: guess(_released(rows, tmp_path / f"{truth}-{key}", monkeypatch, key)) == truth
            for truth, rows in truths.items()
        }
        return float(right["table"]) - float(not right["neighbour"])

    assert advantage(seed_key) == 1.0  # seeded noise: the attack wins outright
    assert advantage(None) == 0.0  # secret noise: no replay matches


@pytest.mark.slow
def test_two_runs_on_one_table_draw_different_noise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = _customers(800)
    first = _released(table, tmp_path / "a", monkeypatch, None)
    second = _released(table, tmp_path / "b", monkeypatch, None)
    assert first["counts"] != second["counts"]
    assert first["transform"] != second["transform"]
    assert first["schema"]["columns"][0]["name"] == second["schema"]["columns"][0]["name"]


def test_one_customers_odd_cells_change_no_fact_of_the_shipped_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The neighbour attack on metadata: one customer whose row has a gap, a fraction in a whole
    column, a text cell among numbers and among dates, and an e-mail. Inferred from every row,
    each flipped what ships (nullable, the kind, the networks' width, which columns exist);
    released by votes, the table and its neighbour ship the same description (one test key for
    both, so the noise is the same draw: only the customer differs)."""
    table = _customers()
    odd = table.iloc[[0]].astype(object).copy()
    odd["marital"], odd["income"], odd["score"] = None, 2.5, "unknown"
    odd["channel"], odd["opened"] = "write to jane.doe@example.com", "last spring"
    with_odd = pd.concat([table.astype(object), odd], ignore_index=True)
    shipped = _released(with_odd, tmp_path / "odd", monkeypatch, 11)
    without = _released(table, tmp_path / "plain", monkeypatch, 11)
    assert shipped["schema"] == without["schema"]
    assert shipped["width"] == without["width"]
    columns = {c["name"]: c for c in shipped["schema"]["columns"]}
    assert not columns["marital"]["nullable"] and columns["income"]["kind"] == "integer"
    assert columns["score"]["kind"] == "continuous" and columns["vip"]["levels"] == [False, True]
    assert columns["opened"]["kind"] == "datetime" and not columns["opened"]["nullable"]
    assert "jane.doe@example.com" not in json.dumps(shipped)


def test_a_table_too_small_to_release_any_feature_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A few dozen customers: no column's kind is held by enough entities to be seen above the
    noise, so nothing could train; refused before training, naming the fix."""
    small = _customers(60)
    with pytest.raises(DataError) as err:
        _released(small, tmp_path, monkeypatch, 5)
    line = one_line(err)
    assert "no column is released as a feature" in line
    threshold = line.split("fewer than ")[1].split(" entities")[0]
    documented(line.replace(threshold, "133"), path=tmp_path / "table.csv")
