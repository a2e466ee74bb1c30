"""The real Hydra config, composed as the CLI would, and the shrunken sizes tests train at."""

from __future__ import annotations

import os
from pathlib import Path

from omegaconf import DictConfig

REPO = Path(__file__).resolve().parents[2]
CONF_DIR = REPO / "conf"

#: Tiny networks: every test that trains and ``python -m scripts.load_test`` start from these.
TINY_NETWORKS = [
    "model.latent_dim=8",
    "model.generator.hidden=[16,16]",
    "model.critic.hidden=[16,16]",
]
#: Tiny data and networks, and two critic updates a step: still a loop over critic batches, at
#: less than half the graph the default five trace (tracing is most of a tiny run's training).
TINY_MODEL = [
    "data=simulated",
    "data.simulated_rows=4000",
    *TINY_NETWORKS,
    "trainer.batch_size=32",
    "trainer.n_critic=2",
]
#: The ablation's reduced size: large enough for tf_norm_nan to fail at a known step (52).
SMALL_MODEL = [
    "data=simulated",
    "data.simulated_rows=20000",
    "model.latent_dim=16",
    "model.generator.hidden=[32,32]",
    "model.critic.hidden=[32,32]",
    "trainer.batch_size=64",
]
#: The least a CLI run can train: two steps of 8-wide networks, no evaluation (a test of what
#: the command does around training, not of training).
QUICK = [
    "trainer.batch_size=32",
    "trainer.steps=2",
    "trainer.progress=false",
    "evaluate.enabled=false",
    "model.generator.hidden=[8]",
    "model.critic.hidden=[8]",
    "model.latent_dim=4",
]
#: A whole tiny run: 6 steps in two calls, two checkpoints, no evaluation.
TINY = [
    *TINY_MODEL,
    "trainer.steps=6",
    "trainer.steps_per_call=3",
    "trainer.checkpoint_every=3",
    "trainer.progress=false",
    "trainer.sample_rows=50",
    "tracking.log_every=2",
    "evaluate.enabled=false",
]


def compose(overrides: list[str] | None = None) -> DictConfig:
    """Compose the real Hydra config (as the CLI would) with overrides."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    from wgangp.config import register_configs

    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return hydra_compose(config_name="config", overrides=overrides or [])


def real_sample_path() -> Path:
    """The real-rows sample beside the repo (or $WGANGP_REAL_SAMPLE)."""
    env = os.environ.get("WGANGP_REAL_SAMPLE")
    return Path(env) if env else REPO.parent / "shared" / "data" / "creditcard_real_sample.csv.gz"


#: The two public tables of another shape beside the repo (or $WGANGP_SHARED_TABLES), by name:
#: (file, label column, the class to synthesize).
SHARED_TABLES = {
    "default_islr": ("default_islr.csv.gz", "default", "Yes"),
    "credit_data": ("credit_data_modeldata.csv.gz", "Status", "bad"),
}


def shared_table(name: str) -> Path:
    """The shared table ``name`` (a key of :data:`SHARED_TABLES`); the test skips when absent."""
    import pytest

    env = os.environ.get("WGANGP_SHARED_TABLES")
    folder = Path(env) if env else REPO.parent / "shared" / "data" / "tables"
    path = folder / SHARED_TABLES[name][0]
    if not path.is_file():
        pytest.skip(f"shared table not found at {path} (../shared/data/tables beside the repo)")
    return path
