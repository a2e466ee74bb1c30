"""The audits' canaries: how they are built (scripts/canaries.py) and where they are planted
(scripts/canary_planting.py), on a small credit table and, when present, the shared one."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from canary_tables import LABEL, POSITIVE, features, loans
from sklearn.neighbors import NearestNeighbors

from scripts import canaries as build
from scripts import canary_planting as planting
from scripts import membership_audit as audit
from scripts.tables_benchmark.default_model import compose
from scripts.tables_benchmark.tables import SHARED_VARIABLE, shared_data_dir
from wgangp.data.schema.inference import infer_schema
from wgangp.data.schema.validation import validate_table
from wgangp.evaluation.encoding import TableEncoding


def assert_in_form(canaries: pd.DataFrame, table: pd.DataFrame) -> None:
    """Every canary is of the rare class, holds only levels the table holds, numbers inside the
    column's observed range, whole integers; none equals a real row or another canary."""
    assert list(canaries.columns) == list(table.columns)
    assert canaries.dtypes.to_dict() == table.dtypes.to_dict()
    assert (canaries[LABEL] == POSITIVE).all()
    for name in features(table):
        if pd.api.types.is_numeric_dtype(table[name]):
            values = canaries[name].to_numpy(np.float64)
            assert not np.isnan(values).any()
            assert values.min() >= table[name].min() and values.max() <= table[name].max(), name
            if pd.api.types.is_integer_dtype(table[name]):
                assert (values == np.round(values)).all(), name
        else:
            assert set(canaries[name]) <= set(table[name].dropna()), name
    names = features(table)
    real = set(build.row_keys(table, names))
    planted = build.row_keys(canaries, names)
    assert not real & set(planted)
    assert len(set(planted)) == len(planted)


def assert_no_new_atoms(canaries: pd.DataFrame, table: pd.DataFrame) -> None:
    """No tail value (what canaries are moved to) fewer than 5 rare rows hold is held by 5 rare
    rows and canaries together."""
    rare = table[table[LABEL] == POSITIVE]
    numbers = [c for c in features(table) if pd.api.types.is_numeric_dtype(table[c])]
    for name, ends in build.tail_values(rare, numbers).items():
        real = rare[name].value_counts()
        planted = canaries[name][canaries[name].isin(np.concatenate(ends))].value_counts()
        lifted = [v for v, n in planted.items() if real.get(v, 0) < 5 <= real.get(v, 0) + n]
        assert not lifted, (name, lifted)


def assert_isolated(canaries: pd.DataFrame, table: pd.DataFrame) -> None:
    """In the near copies' distance space, canaries sit far from the real rare rows: the
    median canary more than twice as far from its nearest real rare row as the median real rare
    row is from its nearest other one, and every canary farther than that median."""
    rare = table[table[LABEL] == POSITIVE].reset_index(drop=True)
    encoding = TableEncoding(infer_schema(table, LABEL, POSITIVE), rare)
    real = encoding.distance_matrix(rare)
    index = NearestNeighbors(n_neighbors=2).fit(real)
    typical = np.median(index.kneighbors(real)[0][:, 1])
    isolation = index.kneighbors(encoding.distance_matrix(canaries))[0][:, 0]
    assert np.median(isolation) > 2 * typical and np.quantile(isolation, 0.1) > typical


def test_canaries_stay_in_the_tables_form_and_copy_no_row() -> None:
    table = loans()
    canaries = build.make_canaries(table, LABEL, POSITIVE, 60, seed=0)
    assert len(canaries) == 60
    assert_in_form(canaries, table)
    assert_no_new_atoms(canaries, table)
    rare = table[table[LABEL] == POSITIVE]
    numbers = ["Age", "Income", "Debt", "Amount", "Price", "Assets"]
    tails = build.tail_values(rare, numbers)
    for name in ("Debt", "Assets"):  # half or more are 0: only the high end is rare
        assert len(tails[name]) == 1 and tails[name][0].min() > rare[name].median()
    assert len(tails["Income"]) == 2 and len(tails) >= 5
    # Each canary: >= 3 numbers in a rare tail, and a level few rare rows hold.
    on_tail = sum(canaries[name].isin(np.concatenate(ends)) for name, ends in tails.items())
    assert (on_tail >= build.MOVED_NUMBERS).all()
    assert (canaries["Home"] == "other").all()  # the one level <= 5% of the bad rows hold
    assert_isolated(canaries, table)


def test_canaries_never_make_a_rare_value_an_atom() -> None:
    # Few distinct tail values: unchecked, 60 canaries would pile onto them.
    table = loans().assign(Amount=lambda t: (t["Amount"] // 200 * 200).clip(200, 3000) + 1)
    canaries = build.make_canaries(table, LABEL, POSITIVE, 60, seed=0)
    assert_no_new_atoms(canaries, table)
    with pytest.raises(ValueError, match="canaries from"):
        build.make_canaries(table, LABEL, POSITIVE, 500, seed=0)


def test_canaries_and_their_split_follow_the_seed() -> None:
    table = loans()
    first = build.make_canaries(table, LABEL, POSITIVE, 30, seed=0)
    assert first.equals(build.make_canaries(table, LABEL, POSITIVE, 30, seed=0))
    assert not first.equals(build.make_canaries(table, LABEL, POSITIVE, 30, seed=1))
    groups = audit.assign_groups(10, seed=0)
    assert {g: int((groups == g).sum()) for g in audit.GROUPS} == {
        "in": 10,
        "out": 10,
        "fresh": 10,
    }
    assert (groups == audit.assign_groups(10, seed=0)).all()
    assert not (groups == audit.assign_groups(10, seed=1)).all()
    # IN only among the candidates a private run would train on; too few is one line.
    mask = np.arange(30) % 3 != 0
    masked = audit.assign_groups(10, seed=0, trainable=mask)
    assert mask[masked == "in"].all() and (masked == "out").sum() == (masked == "fresh").sum()
    with pytest.raises(ValueError, match="ask fewer --canaries"):
        audit.assign_groups(10, seed=0, trainable=np.arange(30) < 9)


def test_a_table_without_rare_tails_is_refused() -> None:
    table = loans().assign(Debt=0.0, Income=100.0, Amount=1000, Price=1000)  # 2 left
    with pytest.raises(ValueError, match="canaries need 3"):
        build.make_canaries(table, LABEL, POSITIVE, 5, seed=0)


def _planting(tmp_path: Path, count: int, *extra: str) -> tuple[pd.DataFrame, ...]:
    """The loans table, ``count`` canaries of seed 3, the file they go to and its run's config."""
    table = loans()
    canaries = build.make_canaries(table, LABEL, POSITIVE, count, seed=3)
    path = tmp_path / "loans.csv"
    return table, canaries, path, compose(planting.audit_overrides(path, 3, tmp_path, list(extra)))


def _copies_in_training(data, canaries: pd.DataFrame, names: list[str]) -> list[int]:
    """How many training rows equal each canary."""
    trained = pd.Series(build.row_keys(data.train, names)).value_counts()
    return [int(trained.get(key, 0)) for key in build.row_keys(canaries, names)]


def test_every_planted_canary_lands_in_the_runs_training_split(tmp_path: Path) -> None:
    table, canaries, path, cfg = _planting(tmp_path, 20)
    names = features(table)
    # Appended at the end, the run's split would leave some of them out of training.
    pd.concat([table, canaries], ignore_index=True).to_csv(path, index=False)
    parts, _ = planting.parts_of(pd.read_csv(path), cfg)
    assert set(parts[len(table) :]) != {"train"}
    written, data = planting.plant(table, canaries, path, cfg, seed=3)
    # The file holds the table's rows and the canaries, each once; all canaries in training.
    assert sorted(map(str, build.row_keys(written, [LABEL, *names]))) == sorted(
        map(str, build.row_keys(pd.concat([table, canaries]), [LABEL, *names]))
    )
    assert pd.read_csv(path).shape == written.shape
    assert min(_copies_in_training(data, canaries, names)) >= 1


def test_a_private_runs_canaries_are_the_trainable_ones(tmp_path: Path) -> None:
    # A private run's split draws each canary's part from its own rows: no place moves it, so
    # the audit draws IN among the candidates that split trains on, and plants them as they are.
    table, candidates, path, cfg = _planting(tmp_path, 30, "privacy.epsilon=3")
    trainable = planting.trainable(table, candidates, path, cfg, copies=2)
    assert 0 < trainable.sum() < len(candidates)
    groups = audit.assign_groups(10, seed=3, trainable=trainable)
    members = candidates[groups == "in"].reset_index(drop=True)
    _, data = planting.plant(table, members, path, cfg, seed=3, copies=2)
    assert set(_copies_in_training(data, members, features(table))) == {2}
    with pytest.raises(RuntimeError, match="does not train on"):
        planting.plant(table, candidates[~trainable], path, cfg, seed=3, copies=2)


def test_a_canary_entity_of_many_copies_lands_whole_in_training(tmp_path: Path) -> None:
    table, canaries, path, cfg = _planting(tmp_path, 20)
    written, data = planting.plant(table, canaries, path, cfg, seed=3, copies=6)
    assert len(written) == len(table) + 6 * len(canaries)
    # Every copy of every canary is a training row: the entity, whole, in training.
    assert set(_copies_in_training(data, canaries, features(table))) == {6}


def test_rows_are_read_by_the_shipped_schemas_levels() -> None:
    # A private run's released schema lists fewer levels and an `other` for the rest; the
    # audit reads every row by it, as the run read its training rows. Without privacy (the
    # inferred schema, no `other`) nothing changes.
    table = loans()
    schema = infer_schema(table, LABEL, POSITIVE)
    rows = planting.canonical(table.head(200), schema)
    names = features(table)
    assert planting.released_view(rows, schema, names).equals(rows.loc[:, names])
    released = replace(
        schema,
        columns=tuple(
            replace(c, levels=("owner", "rent", "other"), other="other") if c.name == "Home" else c
            for c in schema.columns
        ),
    )
    view = planting.released_view(rows, released, names)
    home = rows["Home"]
    expected = home.where(home.isin(["owner", "rent"]) | home.isna(), "other")
    assert view["Home"].equals(expected.rename("Home"))
    assert view.drop(columns="Home").equals(rows.loc[:, names].drop(columns="Home"))
    assert set(home.dropna()) > {"owner", "rent", "other"}  # parents read as other
    # A released description may call a column with a few gaps not nullable: gaps stay gaps.
    assert home.isna().any()
    strict = replace(
        released,
        columns=tuple(
            replace(c, nullable=False, missing=0) if c.name == "Home" else c
            for c in released.columns
        ),
    )
    assert planting.released_view(rows, strict, names)["Home"].equals(expected.rename("Home"))


def test_canaries_of_the_shared_table_pass_its_schema() -> None:
    path = build.TABLE.path(shared_data_dir(None))
    if not path.is_file():
        pytest.skip(f"{path} absent (set {SHARED_VARIABLE} or pass the shared data folder)")
    table = pd.read_csv(path)
    for seed in (0, 1, 2):
        canaries = build.make_canaries(table, LABEL, POSITIVE, 60, seed=seed)
        assert_in_form(canaries, table)
        assert_no_new_atoms(canaries, table)
        assert_isolated(canaries, table)
        # Inside what the table's inferred schema keeps: its levels and its fitted bounds.
        schema = infer_schema(table, LABEL, POSITIVE)
        validate_table(canaries, schema, source="canaries", min_rows_per_class=0)
        for column in schema.features:
            if column.levels is not None:
                assert set(canaries[column.name]) <= set(column.levels), column.name
            if column.bounds is not None:
                low, high = (float(b) for b in column.bounds)
                values = canaries[column.name]
                assert values.between(low, high).all(), (column.name, column.bounds)
