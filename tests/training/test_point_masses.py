"""Point masses found in the data, end to end: a lending table whose rate comes from a lookup of
10 values, whose ratios have favourite values and a cap, whose cash is 0 for half the rows, trains
with the default command; every point mass comes back exactly, at its training share, and the
rows are no easier to detect than independent columns' (docs/schema.md)."""

from __future__ import annotations

import mlflow
import numpy as np
import pandas as pd
import pytest
from support.configs import compose

from scripts.tables_benchmark.generated import POINT_MASSES, lender_table
from wgangp.config import to_config
from wgangp.data.prepare import prepare_data
from wgangp.serving.synthesizer import Synthesizer

#: Shares are compared on this many sampled rows: a binomial spread of under half a point.
SAMPLED = 20_000


@pytest.fixture(scope="module")
def lender_run(tmp_path_factory: pytest.TempPathFactory):
    """The default model, at a test's size, on the lending table: (result, config, launch dir)."""
    from wgangp.train import train

    root = tmp_path_factory.mktemp("lender")
    path = root / "lender.csv"
    lender_table(rows=4000, seed=0).to_csv(path, index=False)
    overrides = [
        f"data.path={path}",
        "data.label=deny",
        f"tracking.uri=sqlite:///{root / 'mlflow.db'}",
        "trainer.steps=600",
        "trainer.batch_size=256",
        "trainer.progress=false",
        "model.latent_dim=32",
        "model.generator.hidden=[64,64]",
        "model.critic.hidden=[64,64]",
        "select.every=100",
        # Detection on ~130 held-out rare rows: enough repeats to tell 0.05 apart.
        "evaluate.n_synthetic=1000",
        "evaluate.c2st_repeats=6",
        "evaluate.gbm_max_iter=100",
        "evaluate.seeds=1",
        "evaluate.max_normal_rows=2000",
        "evaluate.sdmetrics=false",
    ]
    cfg = compose(overrides)
    return train(cfg, output_dir=root / "out", launch_dir=root), to_config(cfg), root


@pytest.mark.slow
def test_each_point_mass_comes_back_exactly_at_its_training_share(lender_run) -> None:
    result, cfg, root = lender_run
    assert result.status == "FINISHED"
    data = prepare_data(cfg.data, seed=cfg.seed, launch_dir=root)
    real = data.rare(data.train)
    rows = Synthesizer.load(result.synthesizer_dir).sample(SAMPLED, seed=7)
    for column, values in POINT_MASSES.items():
        for value in values:
            share, made = (
                float((real[column] == value).mean()),
                float((rows[column] == value).mean()),
            )
            assert abs(made - share) < 0.02, (column, value, share, made)
        held = rows[column].isin(values).mean()
        between = rows[column][~rows[column].isin(values)]
        if column == "uria":  # a lookup: no value but its 10
            assert held == 1.0, column
        else:  # between the point masses the column stays continuous
            assert between.nunique() > 100, column


@pytest.mark.slow
def test_the_rows_are_no_easier_to_detect_than_independent_columns(lender_run) -> None:
    result, _, root = lender_run
    run = mlflow.MlflowClient(f"sqlite:///{root / 'mlflow.db'}").get_run(result.run_id)
    metrics = run.data.metrics
    default, independent = metrics["eval/c2st_auc_gbm"], metrics["eval/c2st_auc_gbm_independent"]
    assert default <= independent, (default, independent)
    # A row of point masses (a favourite ratio, no cash, a looked-up rate) can equal a training
    # row without copying it, as rows drawn column by column can: a handful of the 1,000 at most,
    # and no more rows near a training row than independent columns make (SMOTE-NC's read 0.3).
    assert metrics["eval/exact_copies"] <= 5
    assert metrics["eval/near_copies"] <= metrics["eval/near_copies_independent"] + 0.03


def test_the_table_holds_its_point_masses() -> None:
    """The builder's promise the checks above rest on (fast)."""
    table = lender_table(rows=4000, seed=0)
    rare = table[table["deny"] == "yes"]
    assert 0.1 < len(rare) / len(table) < 0.25
    assert set(rare["uria"]) <= set(POINT_MASSES["uria"])
    for column, values in POINT_MASSES.items():
        assert all((rare[column] == v).sum() >= 5 for v in values), column
    assert pd.api.types.is_integer_dtype(table["ccs"])
    assert np.isclose(rare["dir"].eq(0.33).mean(), 0.18, atol=0.05)
