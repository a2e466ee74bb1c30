"""The default model on one table and seed: the config the plain ``python -m wgangp.train`` would
compose (plus the table, the seed and where to write), trained in-process."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from omegaconf import DictConfig

from scripts.tables_benchmark.tables import TableSpec
from wgangp.config import CONF_DIR, register_configs
from wgangp.data.schema.table_schema import RARE

#: What --smoke changes besides the steps: a lighter end-of-run evaluation.
SMOKE = [
    "select.every=10",
    "select.repeats=2",
    "evaluate.seeds=1",
    "evaluate.max_normal_rows=2000",
    "evaluate.gbm_max_iter=20",
    "evaluate.c2st_repeats=2",
    "evaluate.n_synthetic=100",
    "evaluate.sdmetrics=false",
    "trainer.checkpoint_every=1000000",
]


@dataclass
class TrainedModel:
    """A finished run: its figures, wall time and the rows its shipped synthesizer draws."""

    run_id: str | None
    wall_s: float
    metrics: dict[str, float]
    synthesizer_dir: Path

    def sample(self, n: int, seed: int, features: list[str]) -> pd.DataFrame:
        from wgangp.serving.synthesizer import Synthesizer

        rows = Synthesizer.load(self.synthesizer_dir).sample_class(n, RARE, seed=seed)
        return rows.loc[:, features].reset_index(drop=True)


def overrides(
    spec: TableSpec, path: Path, seed: int, out: Path, steps: int | None, smoke: bool
) -> list[str]:
    """The command-line overrides of one run (the default model otherwise)."""
    table = [f"data.path={path}"]
    if spec.name == "creditcard":  # Kaggle's file: its shipped schema, named
        table += ["data.schema=creditcard"]
    else:
        table += [f"data.label={spec.label}", f"data.positive={spec.positive}"]
    chosen = [
        *table,
        f"seed={seed}",
        "name=tables",  # the run is named tables-<table>-seed<seed>-<key>
        f"tracking.uri=sqlite:///{out / 'mlflow.db'}",
        "tracking.experiment=tables-benchmark",
        f"trainer.checkpoint_dir={out / 'checkpoints' / f'{spec.name}-seed{seed}'}",
        "trainer.progress=false",
    ]
    if smoke:
        chosen += SMOKE
    if steps is not None:
        chosen.append(f"trainer.steps={steps}")
    return chosen


def compose(chosen: list[str]) -> DictConfig:
    """The real Hydra config with ``chosen`` overrides, composed as the CLI would."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return hydra_compose(config_name="config", overrides=chosen)


def train_default(cfg: DictConfig, run_dir: Path, launch_dir: Path) -> TrainedModel:
    """Train as configured; RuntimeError when the run did not finish with a bundle."""
    from wgangp.train import train

    start = time.perf_counter()
    result = train(cfg, output_dir=run_dir, launch_dir=launch_dir)
    wall = time.perf_counter() - start
    if result.status != "FINISHED" or result.synthesizer_dir is None:
        raise RuntimeError(f"the run ended {result.status} at step {result.steps_completed}")
    return TrainedModel(result.run_id, wall, dict(result.final_metrics), result.synthesizer_dir)
