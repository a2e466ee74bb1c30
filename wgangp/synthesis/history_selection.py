"""A history model's step selection on validation entities, and its evaluation on test entities.

Both compare generated histories with real windows of entities the networks never saw, on each
history's behaviour (:mod:`wgangp.evaluation.history_scores`): a classifier's AUC telling them
apart (``c2st_auc_gbm``, 0.5 = indistinguishable) and the features' mean KS statistic
(``ks_mean``). The selection reuses the row model's :class:`~wgangp.synthesis.selection.
StepSelector` (every ``select.every`` steps, a moving average, the best step after
``select.after`` kept); the generated histories hold the real windows' mix of classes."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from pathlib import Path

import keras
import numpy as np
import pandas as pd

from wgangp.config import Config, SelectConfig
from wgangp.data.histories.prepare import HistoryData
from wgangp.data.histories.windows import Windows
from wgangp.evaluation.history_scores import feature_ks, history_behaviour, history_detection
from wgangp.files import write_text
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


class HistoryProbe:
    """Scores generated histories against the validation windows (module doc)."""

    def __init__(self, data: HistoryData, windows: Windows, sc: SelectConfig, seed: int, most: int):
        self.data, self.sc, self.seed = data, sc, seed
        self.real = history_behaviour(
            window_frame(windows, data.roles.entity), data.roles, data.rows.schema
        )
        self.counts = class_counts(windows, most)

    def score(self, sample: Sampler, step: int) -> dict[str, float]:
        synthetic = history_behaviour(sample(self.counts, self.seed + step), self.data.roles,
                                      self.data.rows.schema)  # fmt: skip
        sc = self.sc
        aucs = history_detection(
            self.real,
            synthetic,
            seed=self.seed + step,
            repeats=sc.repeats,
            max_iter=sc.gbm_max_iter,
        )
        ks = feature_ks(self.real, synthetic)
        return in_section(VAL, {
            "c2st_auc_gbm": float(np.mean(aucs)) if aucs else float("nan"),
            "c2st_auc_gbm_std": float(np.std(aucs)) if aucs else float("nan"),
            "ks_mean": float(np.mean(list(ks.values()))),
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
        mixed_sampler(synthesizer),  # type: ignore[arg-type]
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
    """Generated histories against the test entities' windows, beside real against real (two
    halves of those windows): ``eval/history_*``, logged at ``step`` and written to
    ``evaluation/histories.json``."""
    started = time.perf_counter()
    roles, schema, ec = data.roles, data.rows.schema, cfg.evaluate
    windows = data.windows("test", cfg.history.max_length)
    real = history_behaviour(window_frame(windows, roles.entity), roles, schema)
    generated = mixed_sampler(synthesizer)(class_counts(windows, MAX_EVALUATED), cfg.seed + 1)
    synthetic = history_behaviour(generated, roles, schema)
    aucs = history_detection(real, synthetic, seed=cfg.seed, repeats=ec.c2st_repeats,
                             max_iter=ec.gbm_max_iter)  # fmt: skip
    half = np.random.default_rng(cfg.seed).permutation(len(real)) < len(real) // 2
    control = history_detection(real[half], real[~half], seed=cfg.seed,
                                repeats=ec.c2st_repeats, max_iter=ec.gbm_max_iter)  # fmt: skip
    ks = feature_ks(real, synthetic)
    metrics = in_section(EVAL, {
        "history_c2st_auc_gbm": float(np.mean(aucs)) if aucs else float("nan"),
        "history_c2st_auc_gbm_real": float(np.mean(control)) if control else float("nan"),
        "history_ks_mean": float(np.mean(list(ks.values()))),
        "history_test_windows": float(windows.count),
    })  # fmt: skip
    folder = output_dir / "evaluation"
    folder.mkdir(parents=True, exist_ok=True)
    write_text(folder / "histories.json", json.dumps({"metrics": metrics, "ks": ks}, indent=2))
    tracker.log_metrics(metrics, step)
    tracker.log_artifact(folder, "evaluation")
    log.info("evaluation of the histories took %.1f s: %s", time.perf_counter() - started,
             ", ".join(f"{k} {v:.3f}" for k, v in metrics.items()))  # fmt: skip
    return metrics
