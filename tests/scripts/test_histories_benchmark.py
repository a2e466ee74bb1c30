"""The histories benchmark: customers split whole, our simulator's behavior, the report, and the
harness end to end on a tiny table with the row-model baseline (slow: it trains). The peers run
on a tiny job only where their environments exist (``setup_envs.sh``; they take gigabytes)."""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from scripts.bench.peers import envs_dir
from scripts.bench.peers.history_io import HistoryJob
from scripts.histories_benchmark.__main__ import main
from scripts.histories_benchmark.peers import PEERS, peer_histories, peer_python
from scripts.histories_benchmark.report import summary
from scripts.histories_benchmark.runner import _append, read_results
from scripts.histories_benchmark.scoring import cleaned
from scripts.histories_benchmark.simulator import simulated_transactions
from scripts.histories_benchmark.split import entity_split, entity_subset
from scripts.histories_benchmark.tables import TABLES, read_table
from wgangp.histories.behavior import behavior_measures

OWN = TABLES["own"]


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return simulated_transactions(customers=300, terminals=150, days=14, seed=4)


def test_the_simulator_is_deterministic_and_has_its_behaviors(table: pd.DataFrame) -> None:
    again = simulated_transactions(customers=300, terminals=150, days=14, seed=4)
    pd.testing.assert_frame_equal(table, again)
    assert table["ts"].is_monotonic_increasing
    found = behavior_measures(table, OWN.cols)
    # card testing: most fraud rows sit in a burst, few of the rest do
    assert found["P2.fraud_burst_share"][0].mean() > 0.5
    assert found["P4.rule_3_in_1h.other"][0].mean() < 0.05
    # a compromised terminal's fraud rows come from several customers
    assert np.exp(found["P3.log_degree.terminal_id"][0]).max() >= 3
    constant = table.groupby("customer_id")["card_type"].nunique()
    assert (constant == 1).all()  # an attribute: one value per customer


def test_customers_are_split_whole_with_their_fraud_share(table: pd.DataFrame) -> None:
    split = entity_split(table, OWN.cols, seed=1)
    ids = [set(part["customer_id"]) for part in (split.train, split.floor, split.test)]
    assert ids[0].isdisjoint(ids[1]) and ids[0].isdisjoint(ids[2]) and ids[1].isdisjoint(ids[2])
    assert sum(len(part) for part in (split.train, split.floor, split.test)) == len(table)
    assert len(ids[1]) == len(ids[2]) and len(ids[0]) == pytest.approx(0.6 * 300, abs=2)
    touched = [
        part.groupby("customer_id")["is_fraud"].max().mean() for part in (split.floor, split.test)
    ]
    assert touched[0] == pytest.approx(touched[1], abs=0.02)
    other = entity_split(table, OWN.cols, seed=2)
    assert set(other.test["customer_id"]) != ids[2]


def test_a_peers_fewer_customers_are_whole_with_the_fraud_share(table: pd.DataFrame) -> None:
    train = entity_split(table, OWN.cols, seed=1).train
    subset = entity_subset(train, OWN.cols, 60, seed=0)
    assert subset["customer_id"].nunique() == 60
    whole = train[train["customer_id"].isin(set(subset["customer_id"]))]
    assert len(subset) == len(whole)  # every chosen customer keeps all its rows
    shares = [part.groupby("customer_id")["is_fraud"].max().mean() for part in (train, subset)]
    assert shares[1] == pytest.approx(shares[0], abs=1 / 60 + 1e-9)
    assert entity_subset(train, OWN.cols, 0, seed=0) is train
    assert entity_subset(train, OWN.cols, 10_000, seed=0) is train


def test_a_systems_rows_are_cleaned_before_scoring() -> None:
    rows = pd.DataFrame(
        {
            "customer_id": ["S1", "S1", None, "S2"],
            "ts": ["2025-01-01 10:00", "not a time", "2025-01-01", "2025-01-02"],
            "amount": ["1.5", "2", "3", "x"],
            "is_fraud": ["1", 0, 1, "0"],
        }
    )
    kept, dropped = cleaned(rows, OWN.cols)
    assert dropped == 2 and kept["is_fraud"].tolist() == [1, 0]
    assert kept["amount"].iloc[0] == 1.5 and math.isnan(kept["amount"].iloc[1])


def test_results_round_trip_with_inf_and_render(tmp_path: Path) -> None:
    base = {
        "table": "own",
        "entities": {"train": 6, "floor": 2, "test": 2},
        "status": "ok",
        "note": "",
        "info": {"fit_s": 120.0},
    }
    records = [
        {**base, "seed": 0, "system": "control", "detection": 0.5, "utility.real_ap": 0.6},
        {**base, "seed": 0, "system": "par", "fid.geometric_mean": 4.0, "detection": 0.9},
        {**base, "seed": 1, "system": "par", "fid.geometric_mean": 6.0, "detection": 0.8},
        {**base, "seed": 0, "system": "dgan", "fid.geometric_mean": math.inf, "fid.P3": math.inf},
        {**base, "seed": 0, "system": "wgangp", "status": "skipped", "note": "not here"},
        {
            **base,
            "seed": 0,
            "system": "mostly",
            "status": "failed",
            "note": "RuntimeError: mostly did not finish within 25 min",
            "budget": {"mostly_epochs": 20, "mostly_minutes": 20.0, "peer_customers": 300},
        },
    ]
    records[1]["budget"] = records[2]["budget"] = {"par_epochs": 8, "peer_customers": 0}
    for record in records:
        _append(tmp_path, record)
    assert '"inf"' in (tmp_path / "results.jsonl").read_text()
    results = read_results([tmp_path / "results.jsonl"])
    assert math.isinf(results.loc[results["system"] == "dgan", "fid.geometric_mean"].iloc[0])
    text = summary(results)
    assert "| SDV PARSynthesizer | 5.000 ± 1.414 |" in text
    assert text.count("| 2.0 | 8 epochs |") == 1  # fit minutes, then the budget: all customers
    mostly = "mostly did not finish within 25 min |" + " |" * 9 + " 20 epochs, cap 20 min, 300 "
    assert mostly + "customers |" in text
    assert "| gretel DGAN (seed 0) | inf (1 of 1) |" in text  # the table's seeds are 0 and 1
    assert "skipped: not here" in text
    assert "Real-vs-real detection (control): 0.500" in text


def test_a_missing_peer_env_is_a_skip_that_names_its_setup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table: pd.DataFrame
) -> None:
    from scripts.histories_benchmark.peers import Skipped

    monkeypatch.setenv("WGANGP_BENCH_ENVS", str(tmp_path / "no-envs"))
    assert peer_python("par") is None
    with pytest.raises(Skipped, match="setup_envs.sh par"):
        peer_histories(
            "par", OWN, table, 5, 0, tmp_path, options={}, budget_minutes=1.0, timeout=10.0
        )


def test_the_job_names_every_column_once() -> None:
    job = HistoryJob(
        train="t",
        out="o",
        entity="c",
        time="t",
        label="y",
        n=3,
        seed=0,
        amount="a",
        shared=["term"],
        categorical=["term", "ch", "card", "y"],
        attributes=["card"],
    )
    assert job.columns == ["c", "t", "a", "term", "ch", "card", "y"]
    assert HistoryJob(**json.loads(json.dumps(asdict(job)))) == job


@pytest.mark.slow
def test_the_harness_runs_end_to_end_with_the_row_baseline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--smoke", "--tables", "own", "--systems", "wgangp,rows,real", "--out", str(tmp_path)]
    assert main(argv) == 0
    assert "### own" in capsys.readouterr().out
    results = read_results([tmp_path / "results.jsonl"]).set_index("system")
    assert list(results.index) == ["control", "wgangp", "rows", "real"]
    assert results.loc["rows", "status"] == "ok"
    assert results.loc["rows", "fid.geometric_mean"] > 0
    assert 0.0 <= results.loc["rows", "detection"] <= 1.0
    assert results.loc["rows", "histories"] == results.iloc[0]["entities"]["train"]
    assert results.loc["wgangp", "status"] in ("ok", "skipped")
    assert (tmp_path / "summary.md").is_file()
    data = tmp_path / "data"
    written = read_table(OWN.resized(120, 10), data / OWN.resized(120, 10).file)
    assert written["customer_id"].nunique() > 100


@pytest.mark.slow
@pytest.mark.parametrize("peer", sorted(PEERS))
def test_each_peer_draws_histories_in_its_env(peer: str, tmp_path: Path) -> None:
    if peer_python(peer) is None:
        pytest.skip(f"no {peer} env under {envs_dir()} (setup_envs.sh {PEERS[peer][0]})")
    train = simulated_transactions(customers=60, terminals=40, days=7, seed=5)
    options = {
        "par": {"epochs": 1},
        "mostly": {"max_epochs": 1, "max_training_minutes": 0.5},
        "dgan": {"epochs": 1, "max_length": 16},
    }[peer]
    histories, info = peer_histories(
        peer, OWN, train, 10, 0, tmp_path, options=options, budget_minutes=0.2, timeout=900.0
    )
    assert histories["customer_id"].nunique() <= 10
    assert not set(histories["customer_id"]) & set(train["customer_id"])  # new ids only
    assert set(histories.columns) == set(train.columns)
    assert info["fit_s"] >= 0


def test_a_shared_id_a_system_does_not_generate_reads_inf(table: pd.DataFrame) -> None:
    from wgangp.histories.behavior import behavioral_fidelity, real_halves

    a, b = real_halves(table, OWN.cols, seed=0)
    without, _ = cleaned(b.drop(columns=["terminal_id"]), OWN.cols)
    assert math.isinf(behavioral_fidelity(a, b, without, OWN.cols)["P3"])


def test_a_wrong_option_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--systems", "rows,nope", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip().count("\n") == 0
    assert main(["--budget", "par_epochs", "--out", str(tmp_path)]) == 2
    assert "--budget takes FIELD=VALUE" in capsys.readouterr().err
    assert main(["--report", str(tmp_path / "absent.jsonl")]) == 2


def test_the_real_spread_prints_a_row_per_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from scripts.histories_benchmark.spread import main as spread

    assert spread(["--tables", "own", "--splits", "2", "--data", str(tmp_path)]) == 0
    row = capsys.readouterr().out.strip().splitlines()[-1]
    low, high = (float(v) for v in row.split("|")[3].split(" - "))
    assert row.startswith("| own | 2 |") and 0 < low <= high
