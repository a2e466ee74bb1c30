"""The DP figures on the same rows for every method (scripts/dp_scores.py, dp_rows.py): wgangp
and the peers train on the same 70% of each class, the peers get the label as a column and their
rare rows are kept, and utility tells rows that carry the rare class from rows that do not."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from canary_tables import LABEL, POSITIVE, features, loans

from scripts import dp_peers
from scripts.dp_figures_report import Result, utility_table
from scripts.dp_rows import Table, seed_parts
from scripts.dp_scores import other_split, rare_split, utility_scorer
from wgangp.data.schema.inference import infer_schema
from wgangp.data.schema.validation import validate_table


def credit_like() -> Table:
    raw = loans(rows=1500)
    raw.loc[raw[LABEL] == POSITIVE, "Age"] += 15  # a class a detector can find
    schema = infer_schema(raw, LABEL, POSITIVE)
    clean = validate_table(raw, schema, source="loans", min_rows_per_class=1)
    return Table("loans", raw, clean, schema, LABEL, POSITIVE)


def test_the_other_class_splits_70_30_on_a_stream_of_its_own() -> None:
    other = pd.DataFrame({"row": np.arange(3200)})
    train, held = other_split(other, 0)
    assert (len(train), len(held)) == (2240, 960)
    assert set(train["row"]).isdisjoint(held["row"])
    assert set(other_split(other, 1)[0]["row"]) != set(train["row"])
    # The rare split is the earlier figures' own, untouched by the other class's.
    rare = pd.DataFrame({"row": np.arange(1254)})
    assert rare_split(rare, 0)[0]["row"].tolist() == list(
        np.random.default_rng(0).permutation(1254)[:878]
    )


@pytest.mark.parametrize("judge_on", ["holdout", "val"])
def test_wgangp_trains_on_the_rows_the_peers_get(judge_on: str) -> None:
    table = credit_like()
    parts = seed_parts(table, 0, judge_on)
    rare_mask = table.clean[LABEL] == POSITIVE
    rare = table.clean.loc[rare_mask, table.features].reset_index(drop=True)
    other = table.clean.loc[~rare_mask, table.features].reset_index(drop=True)
    peers_rare, held_rare = rare_split(rare, 0)
    peers_other, held_other = other_split(other, 0)
    if judge_on == "holdout":  # exactly the peers' rows, and nothing held out
        pd.testing.assert_frame_equal(parts.train, peers_rare)
        pd.testing.assert_frame_equal(parts.train_other, peers_other)
        pd.testing.assert_frame_equal(parts.judged, held_rare)
        pd.testing.assert_frame_equal(parts.judged_other, held_other)
    else:  # 20% of each training part carved out to judge on; the held-out 30% unread
        assert len(parts.judged) == round(0.2 * len(peers_rare))
        assert len(parts.train) + len(parts.judged) == len(peers_rare)
        assert len(parts.train_other) + len(parts.judged_other) == len(peers_other)
    frame = parts.frame
    assert len(frame) == len(parts.train) + len(parts.train_other)
    assert (frame[LABEL] == POSITIVE).sum() == len(parts.train)
    key = features(frame)
    trained = set(map(tuple, frame[key].astype(str).to_numpy()))
    judged = pd.concat([parts.judged, parts.judged_other])
    assert trained.isdisjoint(map(tuple, judged[key].astype(str).to_numpy()))


def test_a_peer_gets_both_classes_and_its_rare_rows_are_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = {}

    def fake_peer(method, train, categorical, n, **options):
        seen.update(train=train, categorical=categorical, n=n)
        rows = train.sample(n, replace=True, random_state=0).reset_index(drop=True)
        return rows, {"spent_eps": 3.0}

    monkeypatch.setattr(dp_peers, "peer_rows", fake_peer)
    table = credit_like()
    label, positive = dp_peers.TABLE.label, dp_peers.TABLE.positive
    both = table.clean.rename(columns={LABEL: label}).replace({label: {POSITIVE: positive}})
    rows, record = dp_peers.peer_rare_rows("mst", both, ["Home", "Records"], 100, epsilon=3.0)
    assert seen["categorical"] == ["Home", "Records", label]
    share = (both[label] == positive).mean()
    assert seen["n"] >= 100 / share  # enough draws for 100 rare rows, with a margin
    assert len(rows) == 100 and label not in rows.columns
    assert record["drawn"] == seen["n"] and record["rare_drawn"] >= 100


def test_utility_ranks_rows_of_the_rare_class_above_rows_of_the_other() -> None:
    table = credit_like()
    parts = seed_parts(table, 0, "holdout")
    score = utility_scorer(
        table.schema, parts.train, parts.train_other, parts.judged, parts.judged_other
    )
    real = score(parts.train)
    wrong = score(parts.train_other.iloc[: len(parts.train)])  # the other class, called rare
    base_rate = len(parts.judged) / (len(parts.judged) + len(parts.judged_other))
    assert real > base_rate + 0.2 and real > wrong + 0.2
    assert np.isnan(score(parts.train.iloc[:10]))  # too few rows: no figure
    results = [
        Result("loans", "wgangp", 3.0, seed, utility=u) for seed, u in ((0, 0.5), (1, 0.7))
    ] + [Result("loans", "real", None, 0, utility=real)]
    text = utility_table(results, [3.0])
    assert f"| loans | 0.600 ± 0.141 (n=2) | not run | {real:.3f} (n=1) |" in text
