"""A history model's step selection on validation entities, and its evaluation on test entities.

Both compare generated histories with real windows of entities the networks never saw, by the
behavioral measures of :mod:`wgangp.histories.behavior`: a classifier telling them apart on each
history's features (length, gaps, bursts, hours, amounts, fraud episode; ``c2st_auc_gbm``, 0.5 =
indistinguishable), those features' mean KS statistic (``ks_mean``) and, in the evaluation, the
four patterns' degradation ratios against two halves of the test entities (P1-P4 and their
``geometric_mean``; 1 = as close as real data is to itself). The selection reuses the row model's
:class:`~wgangp.synthesis.selection.StepSelector` (every ``select.every`` steps, a moving
average, the best step after ``select.after`` kept); generated histories hold the real windows'
mix of classes."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from pathlib import Path

import keras
import numpy as np
import pandas as pd
from scipy.stats import ks_2samp

from wgangp.config import Config, SelectConfig
from wgangp.data.histories.prepare import HistoryData
from wgangp.data.histories.windows import Windows
from wgangp.files import write_text
from wgangp.histories.behavior import (
    HistoryColumns,
    behavioral_fidelity,
    history_detection,
    history_features,
    real_halves,
)
from wgangp.serving.histories import HistorySynthesizer
from wgangp.synthesis.selection import BestGenerator, StepSelector
from wgangp.tracking.names import EVAL, VAL, in_section
from wgangp.tracking.tracker import Tracker

log = logging.getLogger("wgangp.train")

#: Fewer validation windows with a rare-class row than this, and no probe.
MIN_VAL_RARE = 4
#: Generated histories the evaluation draws at most.
MAX_EVALUATED = 2000

#: Draws ``(rest, rare)`` histories of both classes with a seed.
Sampler = Callable[[tuple[int, int], int], pd.DataFrame]


def window_frame(windows: Windows, entity: str) -> pd.DataFrame:
    """Real windows as histories: each window's rows under its own id."""
    return windows.rows.assign(**{entity: windows.window})


def behavior_columns(data: HistoryData) -> HistoryColumns:
    """The measures' view of the table: the amount is the first number record column named
    like one (``amount``, ``amt``), else the first number record column."""
    roles, schema = data.roles, data.rows.schema
    numbers = [n for n in roles.records if schema.column(n).kind in ("continuous", "integer")]
    named = [n for n in numbers if any(t in n.lower() for t in ("amount", "amt", "value"))]
    amount = next(iter(named or numbers), None)
    return HistoryColumns(
        roles.entity, roles.time, roles.label, schema.positive, amount, tuple(roles.shared)
    )


def class_counts(windows: Windows, most: int) -> tuple[int, int]:
    """The windows' (rest, rare) counts, scaled down to ``most`` together."""
    rare = int(windows.classes.sum())
    rest = windows.count - rare
    scale = min(1.0, most / max(windows.count, 1))
    return max(1, round(rest * scale)), max(1, round(rare * scale))


def mixed_sampler(synthesizer: HistorySynthesizer) -> Sampler:
    """``(rest, rare)`` histories: each class drawn on its own seed (ids never collide)."""

    def sample(counts: tuple[int, int], seed: int) -> pd.DataFrame:
        rest = synthesizer.draw(counts[0], 0, seed)
        rare = synthesizer.draw(counts[1], 1, seed + 1)
        return pd.concat([rest, rare], ignore_index=True)

    return sample


def features_ks(real: pd.DataFrame, synthetic: pd.DataFrame, cols: HistoryColumns) -> float:
    """The mean KS statistic of the per-history features, real against generated."""
    a, b = history_features(real, cols), history_features(synthetic, cols)
    stats = [
        ks_2samp(a[name].dropna(), b[name].dropna()).statistic
        for name in a.columns
        if a[name].notna().any() and b[name].notna().any()
    ]
    return float(np.mean(stats)) if stats else float("nan")


class HistoryProbe:
    """Scores generated histories against the validation windows (module doc)."""

    def __init__(self, data: HistoryData, windows: Windows, sc: SelectConfig, seed: int, most: int):
        self.cols, self.sc, self.seed = behavior_columns(data), sc, seed
        self.real = window_frame(windows, data.roles.entity)
        self.counts = class_counts(windows, most)

    def score(self, sample: Sampler, step: int) -> dict[str, float]:
        synthetic = sample(self.counts, self.seed + step)
        sc, seed = self.sc, self.seed + step
        auc = history_detection(
            self.real, synthetic, self.cols, seed, repeats=sc.repeats, max_iter=sc.gbm_max_iter
        )
        return in_section(VAL, {
            "c2st_auc_gbm": auc, "ks_mean": features_ks(self.real, synthetic, self.cols),
        })  # fmt: skip


def history_selector(
    generator: keras.Model,
    synthesizer: HistorySynthesizer,
    data: HistoryData,
    checkpoint_dir: Path,
    cfg: Config,
) -> StepSelector | None:
    """The run's step selection on the validation entities' windows; None when ``select.every``
    is 0 or they hold too few histories with a rare-class row."""
    if cfg.select.every == 0:
        return None
    windows = data.windows("val", cfg.history.max_length)
    if int(windows.classes.sum()) < MIN_VAL_RARE:
        log.warning(
            "step selection off: the validation entities hold %d window(s) with a rare-class row, "
            "fewer than %d; the last step is kept (raise data.val_fraction or use a larger table)",
            int(windows.classes.sum()), MIN_VAL_RARE,
        )  # fmt: skip
        return None
    probe = HistoryProbe(data, windows, cfg.select, cfg.seed, cfg.history.probe_histories)
    return StepSelector(
        probe,  # type: ignore[arg-type]  # the same protocol: score(sample, step)
        BestGenerator(generator, checkpoint_dir),
        mixed_sampler(synthesizer),  # type: ignore[arg-type]  # (rest, rare) counts: its probe asks so
        cfg.select,
        cfg.trainer.steps,
    )


def evaluate_histories(
    synthesizer: HistorySynthesizer,
    data: HistoryData,
    output_dir: Path,
    tracker: Tracker,
    cfg: Config,
    step: int,
) -> dict[str, float]:
    """Generated histories against the test entities' windows (module doc): detection beside
    real against real (two halves of those windows), the features' KS, the four patterns'
    degradation ratios; ``eval/history_*`` and ``eval/behavior_*``, logged at ``step`` and
    written to ``evaluation/histories.json``."""
    started = time.perf_counter()
    ec, cols = cfg.evaluate, behavior_columns(data)
    windows = data.windows("test", cfg.history.max_length)
    real = window_frame(windows, data.roles.entity)
    synthetic = mixed_sampler(synthesizer)(class_counts(windows, MAX_EVALUATED), cfg.seed + 1)
    options = dict(repeats=ec.c2st_repeats, max_iter=ec.gbm_max_iter)
    half_a, half_b = real_halves(real, cols, cfg.seed)
    fidelity = behavioral_fidelity(half_a, half_b, synthetic, cols, cfg.seed)
    metrics = in_section(EVAL, {
        "history_c2st_auc_gbm": history_detection(real, synthetic, cols, cfg.seed, **options),
        "history_c2st_auc_gbm_real": history_detection(half_a, half_b, cols, cfg.seed, **options),
        "history_ks_mean": features_ks(real, synthetic, cols),
        "history_test_windows": float(windows.count),
        **{f"behavior_{name}": value for name, value in fidelity.items()},
    })  # fmt: skip
    folder = output_dir / "evaluation"
    folder.mkdir(parents=True, exist_ok=True)
    shown = {k: (v if np.isfinite(v) else str(v)) for k, v in metrics.items()}
    write_text(folder / "histories.json", json.dumps(shown, indent=2))
    tracker.log_metrics({k: v for k, v in metrics.items() if np.isfinite(v)}, step)
    tracker.log_artifact(folder, "evaluation")
    headline = ("history_c2st_auc_gbm", "history_c2st_auc_gbm_real", "behavior_geometric_mean")
    log.info(
        "evaluation of the histories took %.1f s: %s", time.perf_counter() - started,
        ", ".join(f"{name} {metrics[f'{EVAL}/{name}']:.3f}" for name in headline),
    )  # fmt: skip
    return metrics
