"""``python -m wgangp.train``: a thin Hydra entry over :func:`train`, which tests call directly.

Data flows one way: load -> validate -> split -> fit transform (training split only) -> train ->
sample -> evaluate -> log. User errors end as one line on stderr and a non-zero exit.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import hydra
from omegaconf import DictConfig

from wgangp.cli import check_output_dir, check_overrides, report_error
from wgangp.config import CONF_DIR, Config, register_configs
from wgangp.errors import WgangpError
from wgangp.run import TrainResult, run_training

log = logging.getLogger("wgangp.train")
register_configs()


def train(
    cfg: DictConfig | Config,
    *,
    output_dir: Path | None = None,
    launch_dir: Path | None = None,
) -> TrainResult:
    """Train a conditional WGAN-GP as configured; returns the run's id, outputs and metrics.

    ``output_dir`` defaults to Hydra's run directory (or a fresh ``outputs/`` folder outside
    Hydra); ``launch_dir``, against which relative paths resolve, to the user's directory.
    """
    return run_training(cfg, output_dir=output_dir, launch_dir=launch_dir)


@hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name="config")
def _hydra_entry(cfg: DictConfig) -> float | None:
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    try:
        result = train(cfg)
    except WgangpError as err:
        report_error(err, debug=bool(cfg.get("debug", False)))
        if HydraConfig.get().mode == RunMode.MULTIRUN:
            return None  # one job's failure is recorded in MLflow; the sweep goes on
        sys.exit(err.exit_code)
    return result.final_metrics.get("wasserstein_estimate")


def main() -> None:
    """Console entry: check override keys against the schema first (one clear line), then run."""
    try:
        check_overrides(sys.argv[1:])
        check_output_dir(sys.argv[1:])
    except WgangpError as err:
        report_error(err)
        sys.exit(err.exit_code)
    _hydra_entry()


if __name__ == "__main__":
    main()
