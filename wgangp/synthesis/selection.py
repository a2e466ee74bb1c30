"""The step selection: score what would ship on the validation split while training; keep the best.

Every ``select.every`` generator steps the synthesizer a user would get from the current generator
(:func:`wgangp.synthesis.assemble.assemble`) draws rare-class rows, and the probe compares them with
the validation rare rows, rows that neither the networks nor the transform saw:

- ``val/c2st_auc_gbm``: the detection protocol of the end-of-run evaluation
  (:func:`wgangp.evaluation.detection.half_split_aucs`, gradient boosting), one fresh synthetic
  draw per repeat; 0.5 = indistinguishable.
- ``val/ks_mean``: the mean per-feature KS statistic against all draws together (numeric
  columns; ``val/tv_mean``: total variation of the categorical columns, on a table with them).
- ``val/score``: the selection score, lower is better: ``select.by`` (the detection AUC
  by default) averaged with the previous probes' values by an exponential moving average.

The validation split holds few rare rows (about 30 frauds of Kaggle's 30k-row sample), so one
probe's detection AUC moves by several hundredths between draws of the same generator: several draws
per probe and the moving average keep the selection from chasing one lucky draw (docs/quality.md
measures it). The step with the lowest score after the first ``select.after`` of the run is kept
(:class:`BestGenerator`): the exported generator, the sampled rows, the served model and the test
evaluation all use it. The first probes still feed the moving average; their steps are not kept
because there the average rests on one or two probes, a noisier score is likelier to be the lowest
by luck, and an early generator's flaws need more rows than a probe draws to show.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import keras
import numpy as np
import pandas as pd
from scipy.stats import ks_2samp

from wgangp.config import Config, SelectConfig
from wgangp.data.prepare import PreparedData
from wgangp.data.schema.table_schema import RARE, TableSchema
from wgangp.data.transform.table_transform import TableTransform
from wgangp.evaluation.detection import boosting_model, half_split_aucs
from wgangp.evaluation.encoding import TableEncoding
from wgangp.evaluation.fidelity import per_feature_table
from wgangp.files import write_text, write_with
from wgangp.synthesis.assemble import assemble
from wgangp.tracking.names import SELECTION_SCORE, VAL, VAL_SCORE, in_section, metric
from wgangp.tracking.tracker import Tracker

log = logging.getLogger("wgangp.train")

#: Fewer validation rare rows than this, and a detection AUC means nothing: no probe.
MIN_VAL_RARE = 6


class ValidationProbe:
    """Scores rare rows drawn by ``sample(n, seed)`` against the validation rare rows, in the
    table's ``schema``: the classifier sees the evaluation's encoding
    (:mod:`wgangp.evaluation.encoding`), ``ks_mean`` is over the numeric columns (present values)
    and a table with categories adds ``tv_mean``, their mean total variation distance."""

    def __init__(
        self, val_rare: pd.DataFrame, sc: SelectConfig, seed: int, schema: TableSchema
    ) -> None:
        self.schema = schema
        self.rare = val_rare.reset_index(drop=True)
        self.encoding = TableEncoding(self.schema, self.rare)
        self.real = self.encoding.model_matrix(self.rare)
        self.sc = sc
        self.seed = seed

    def score(self, sample: Callable[[int, int], pd.DataFrame], step: int) -> dict[str, float]:
        """``val/*`` metrics of the generator behind ``sample`` (without the moving average)."""
        sc, n = self.sc, self.sc.samples
        draws = sample(n * sc.repeats, self.seed + step).reset_index(drop=True)
        synthetic = self.encoding.model_matrix(draws)
        scores: list[float] = []
        for r in range(sc.repeats):  # one fresh draw per repeat

            def model(_: int, seed: int = self.seed + r) -> Any:
                return boosting_model(seed, sc.gbm_max_iter)

            scores += half_split_aucs(
                self.real,
                synthetic[r * n : (r + 1) * n],
                model,
                repeats=1,
                seed=self.seed + step + r,
            )
        metrics = {
            "c2st_auc_gbm": float(np.mean(scores)) if scores else float("nan"),
            "c2st_auc_gbm_std": float(np.std(scores)) if scores else float("nan"),
        }
        if not self.encoding.has_gaps_or_categories:  # numbers only: KS of each column
            ks = [
                ks_2samp(self.real[:, i], synthetic[:, i]).statistic
                for i in range(self.real.shape[1])
            ]
            return in_section(VAL, metrics | {"ks_mean": float(np.mean(ks))})
        mean, scale = self.encoding.mean, self.encoding.scale
        table = per_feature_table(self.rare, draws, mean, scale, self.schema)
        if "ks" in table:
            metrics["ks_mean"] = float(np.mean(table["ks"].dropna().to_numpy()))
        if "tv" in table:
            metrics["tv_mean"] = float(np.mean(table["tv"].dropna().to_numpy()))
        return in_section(VAL, metrics)


@dataclass
class Selection:
    """The kept step and its score (lower is better)."""

    step: int
    score: float


class BestGenerator:
    """The generator weights of the best-scoring step, kept in memory and beside the checkpoints
    (``best_generator.npz`` and ``best_generator.json``), so a resumed run keeps its best."""

    def __init__(self, generator: keras.Model, directory: Path) -> None:
        self.generator = generator
        self.weights_path = directory / "best_generator.npz"
        self.record_path = directory / "best_generator.json"
        self.selection: Selection | None = None
        self.weights: list[np.ndarray] | None = None
        self.smoothed: float | None = None  # the moving average so far
        self._dirty = False

    def offer(self, step: int, score: float) -> bool:
        """Keep the current weights when ``score`` beats the best so far."""
        if not np.isfinite(score) or (self.selection and score >= self.selection.score):
            return False
        self.selection = Selection(step, float(score))
        self.weights = [np.array(w) for w in self.generator.get_weights()]
        self._dirty = True
        return True

    def persist(self) -> None:
        """Write the kept weights (before a checkpoint: a resume restores both together)."""
        record = {"smoothed": self.smoothed}
        if self.selection is not None:
            record.update(step=self.selection.step, score=self.selection.score)
            if self._dirty and self.weights is not None:
                weights = self.weights
                write_with(self.weights_path, lambda tmp: np.savez(tmp, *weights))
                self._dirty = False
        write_text(self.record_path, json.dumps(record))

    def restore(self) -> None:
        """Read what :meth:`persist` wrote (a resumed run); nothing when there is none."""
        if not self.record_path.exists():
            return
        try:
            record = json.loads(self.record_path.read_text())
            smoothed = record.get("smoothed")
            if "step" in record and self.weights_path.exists():
                with np.load(self.weights_path) as saved:
                    weights = [saved[f"arr_{i}"] for i in range(len(saved.files))]
                selection = Selection(int(record["step"]), float(record["score"]))
            else:
                weights, selection = None, None
        except Exception as err:  # a damaged file: json, zip and numpy errors alike
            log.warning(
                "the kept best generator beside the checkpoints is damaged (%s: %s); the step "
                "selection starts over from the resumed step", type(err).__name__, err,
            )  # fmt: skip
            self.forget()
            return
        self.smoothed, self.weights, self.selection = smoothed, weights, selection

    def forget(self) -> None:
        """A run that starts over: no best from an earlier attempt."""
        self.weights_path.unlink(missing_ok=True)
        self.record_path.unlink(missing_ok=True)

    def load_into_generator(self) -> Selection | None:
        """Put the kept weights into the generator; the selection, or None if nothing was kept."""
        if self.selection is None or self.weights is None:
            return None
        self.generator.set_weights(self.weights)
        return self.selection


class StepSelector:
    """Probe every ``select.every`` steps, log ``val/*``, keep the best generator."""

    def __init__(
        self,
        probe: ValidationProbe,
        best: BestGenerator,
        sample: Callable[[int, int], pd.DataFrame],
        sc: SelectConfig,
        steps: int,
    ) -> None:
        self.probe, self.best, self.sample, self.sc = probe, best, sample, sc
        self.keep_after = sc.after * steps  # no step at or before this one is kept
        self.seconds = 0.0  # spent probing, for run/quality_s

    def due(self, step: int, last_step: int) -> bool:
        return step % self.sc.every == 0 or step >= last_step

    def next_boundary(self, step: int) -> int:
        return (step // self.sc.every + 1) * self.sc.every

    def probe_step(self, step: int) -> dict[str, float]:
        """Score the generator at ``step``; the metrics to log."""
        started = time.perf_counter()
        metrics = self.probe.score(self.sample, step)
        raw = metrics[metric(VAL, self.sc.by)]
        decay = self.sc.smoothing
        previous = self.best.smoothed
        smoothed = raw if previous is None else decay * previous + (1 - decay) * raw
        self.best.smoothed = smoothed
        metrics[VAL_SCORE] = smoothed
        if step > self.keep_after and self.best.offer(step, smoothed):
            log.info("quality: step %d is the best so far (%s %.4f)", step, VAL_SCORE, smoothed)
        self.seconds += time.perf_counter() - started
        return metrics


def step_selector(
    generator: keras.Model,
    transformer: TableTransform,
    data: PreparedData,
    checkpoint_dir: Path,
    cfg: Config,
) -> StepSelector | None:
    """The run's step selection; None when ``select.every=0`` or validation has too few rare rows.

    Each probe scores the rows a user would get from the current step: what
    :func:`~wgangp.synthesis.assemble.assemble` builds, for the rare class alone.
    """
    sc = cfg.select
    if sc.every == 0:
        return None
    val_rare = data.rare(data.score_rows.val)
    if len(val_rare) < MIN_VAL_RARE:
        log.warning(
            "step selection off: the validation split has %d rare-class row(s), fewer than %d; the "
            "last step is kept (raise data.val_fraction or use a larger table)",
            len(val_rare),
            MIN_VAL_RARE,
        )
        return None
    # The training rows the shipped synthesizer is assembled from (train.py's assemble call).
    latent_dim, schema, train, ship = (
        cfg.model.latent_dim,
        data.schema,
        data.fit_rows.train,
        cfg.ship,
    )
    entities = data.entities(train)

    def probe_rows(n: int, sample_seed: int) -> pd.DataFrame:
        shipped = assemble(
            generator, transformer, latent_dim, schema, train, ship, cfg.seed, [RARE], entities
        )
        return shipped.sample_class(n, RARE, seed=sample_seed)

    return StepSelector(
        ValidationProbe(val_rare, sc, cfg.seed, data.schema),
        BestGenerator(generator, checkpoint_dir),
        probe_rows,
        sc,
        cfg.trainer.steps,
    )


def keep_selected(
    selector: StepSelector | None, tracker: Tracker, last_step: int
) -> Selection | None:
    """Load the selected step's weights into the generator and tag the run; the selection
    (None without a selector: the last step is kept, unscored)."""
    selection = selector.best.load_into_generator() if selector else None
    if selection is None:
        tracker.set_tags({"selection.step": last_step, "selection.score": "none"})
        return None
    tracker.set_tags({"selection.step": selection.step, "selection.score": selection.score})
    tracker.log_metrics({SELECTION_SCORE: selection.score}, last_step)
    log.info(
        "selected step %d of %d (%s %.4f)", selection.step, last_step, VAL_SCORE, selection.score
    )
    return selection
