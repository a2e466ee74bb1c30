"""What went non-finite, where, and on which batch: the one-step diagnosis of a NaN.

Batches are pure functions of (seed, step), so the failing batch is drawn again here and the
failing critic iteration recomputed eagerly on the weights the guard kept (the last good ones).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import tensorflow as tf

from wgangp.data.schema import FEATURES
from wgangp.trainer import WGANGPTrainer


def _nonfinite(t: tf.Tensor) -> int:
    return int(np.size(t) - np.isfinite(np.asarray(t)).sum())


def _feature_stats(x: np.ndarray) -> dict[str, dict[str, float]]:
    names = list(FEATURES) if x.shape[1] == len(FEATURES) else [f"f{i}" for i in range(x.shape[1])]
    return {
        name: {
            "mean": float(np.mean(col)),
            "std": float(np.std(col)),
            "min": float(np.min(col)),
            "max": float(np.max(col)),
            "nonfinite": int((~np.isfinite(col)).sum()),
        }
        for name, col in zip(names, x.T, strict=True)
    }


def investigate(trainer: WGANGPTrainer, step: int, source: str | None) -> dict[str, Any]:
    """Recompute the critic iterations of ``step`` and describe the first non-finite one."""
    report: dict[str, Any] = {"step": step, "source": source, "critic_iterations": []}
    step_t = tf.constant(step, tf.int64)
    variables = trainer.critic.trainable_variables
    for i in range(trainer.cfg.trainer.n_critic):
        q = trainer.critic_quantities(step_t, i)
        bad = {
            "critic/loss": _nonfinite(q["loss"]),
            "critic/gradient_penalty": _nonfinite(q["penalty"].value),
            **{
                f"critic/grad:{v.path}": _nonfinite(g)
                for v, g in zip(variables, q["grads"], strict=True)
            },
        }
        bad = {name: count for name, count in bad.items() if count}
        entry = {
            "iteration": i,
            "nonfinite_tensors": bad,
            "zero_grad_rows": int(q["penalty"].zero_rows),
            "grad_norm_min": float(np.min(q["penalty"].norms)),
            "critic_loss": float(q["loss"]),
        }
        report["critic_iterations"].append(entry)
        if bad:
            real = np.asarray(q["real"])
            labels = np.argmax(np.asarray(q["labels"]), axis=1)
            report["offending_iteration"] = i
            report["nonfinite_tensors"] = sorted(bad)
            report["zero_grad_rows"] = entry["zero_grad_rows"]
            report["batch"] = {
                "rows": int(real.shape[0]),
                "frauds": int(labels.sum()),
                "feature_stats_network_units": _feature_stats(real),
            }
            break
    return report


def write_forensics(report: dict[str, Any], path: Path) -> Path:
    path.write_text(json.dumps(report, indent=2, default=str))
    return path
