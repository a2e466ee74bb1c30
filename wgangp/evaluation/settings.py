"""Settings of the evaluation: a plain dataclass, usable as a Hydra structured config.

Nested under the ``evaluate`` key. The defaults keep a full Kaggle-sized run (about 227k
training rows) under two minutes on two CPU cores: the detectors see at most ``max_normal_rows``
real normals, and every model is a small one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from wgangp.errors import ConfigError


@dataclass
class EvaluateConfig:
    """What the evaluation draws, fits and reports; values are checked by :meth:`check`."""

    enabled: bool = True
    #: Synthetic fraud rows drawn for fidelity, detection and privacy.
    n_synthetic: int = 2000
    #: Synthetic frauds added to the detector's training rows = ratio * (#real training frauds).
    augment_ratios: list[float] = field(default_factory=lambda: [0.5, 1.0, 2.0])
    #: The ratio reported as ``eval.pr_auc_augmented``; SMOTE and random oversampling add this many
    #: frauds too, so the headline comparison is count for count. Must be one of augment_ratios.
    headline_ratio: float = 1.0
    #: Repeats of the utility experiment (new normal subsample, synthetic draw, model seed).
    seeds: int = 3
    #: Subsample of real training normals the fraud detectors train on (speed).
    max_normal_rows: int = 20_000
    #: Report recall at this precision (the operating point of a fraud team's review queue).
    target_precision: float = 0.9
    #: Folds of the stratified cross-validation of the real-vs-synthetic classifiers (C2ST).
    c2st_folds: int = 5
    #: Boosting rounds of the gradient-boosting detectors (utility and C2ST).
    gbm_max_iter: int = 200
    #: SMOTE's neighbour count (imbalanced-learn default 5).
    smote_k_neighbors: int = 5
    #: Exact-copy check: V1..V28 equal within this relative tolerance (Time to the second and
    #: Amount to the cent, as in the file). The generator emits float32 (relative error ~6e-8), so
    #: a memorised row would slip past a comparison at the file's 15 digits.
    copy_rtol: float = 1e-6
    #: Threads for the BLAS/OpenMP pools while evaluating. 1 by default: histogram gradient
    #: boosting with 2 OpenMP threads on a busy 2-core machine ran 20x slower than with 1.
    threads: int = 1
    #: Also compute SDMetrics' QualityReport (needs the ``sdmetrics`` package).
    sdmetrics: bool = True

    def check(self) -> None:
        """Raise :class:`ConfigError` with one line naming the first invalid value."""
        _require(self.n_synthetic >= 20, "n_synthetic", f"{self.n_synthetic} must be >= 20")
        ratios = list(self.augment_ratios)
        _require(len(ratios) > 0, "augment_ratios", "must list at least one ratio, e.g. [1.0]")
        for ratio in ratios:
            _require(
                isinstance(ratio, int | float) and math.isfinite(ratio) and ratio > 0,
                "augment_ratios",
                f"{ratio!r} must be a positive number",
            )
        _require(
            any(math.isclose(r, self.headline_ratio) for r in ratios),
            "headline_ratio",
            f"{self.headline_ratio} must be one of augment_ratios {ratios}",
        )
        _require(1 <= self.seeds <= 100, "seeds", f"{self.seeds} must be in 1..100")
        _require(
            self.max_normal_rows >= 100, "max_normal_rows", f"{self.max_normal_rows} must be >= 100"
        )
        _require(
            0 < self.target_precision < 1,
            "target_precision",
            f"{self.target_precision} must be in (0, 1)",
        )
        _require(2 <= self.c2st_folds <= 20, "c2st_folds", f"{self.c2st_folds} must be in 2..20")
        _require(self.gbm_max_iter >= 1, "gbm_max_iter", f"{self.gbm_max_iter} must be >= 1")
        _require(
            self.smote_k_neighbors >= 1,
            "smote_k_neighbors",
            f"{self.smote_k_neighbors} must be >= 1",
        )
        _require(self.threads >= 1, "threads", f"{self.threads} must be >= 1")
        _require(0 <= self.copy_rtol <= 1e-2, "copy_rtol", f"{self.copy_rtol} must be in [0, 0.01]")


def _require(condition: bool, key: str, message: str) -> None:
    if not condition:
        raise ConfigError(f"invalid config value evaluate.{key}: {message}")
