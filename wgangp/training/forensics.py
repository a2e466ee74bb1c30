"""What went non-finite, where, and on which batch: the one-step diagnosis of a NaN.

Batches are pure functions of (seed, step), so the failing batch is drawn again here (by the
kernels training used: an XLA run draws with XLA's Threefry) and the failing critic iteration
recomputed on the weights the guard kept (the last good ones: the updates of the failing step
that came before the bad one were applied, the bad one was not, so the recomputed failing
iteration sees exactly the weights it saw in training).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import tensorflow as tf

from wgangp.data.schema import FEATURES
from wgangp.training.guard import NORM_GRADIENT
from wgangp.training.trainer import WGANGPTrainer


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


def _critic_iteration(trainer: WGANGPTrainer, step: int, i: int) -> dict[str, Any]:
    q = trainer.replay_critic_iteration(step, i)
    norms = np.asarray(q.penalty.norms)
    bad = {
        "critic/loss": _nonfinite(q.loss),
        "critic/gradient_penalty": _nonfinite(q.penalty.value),
        NORM_GRADIENT: 0 if bool(q.norm_gradient_finite) else int((norms == 0).sum()),
        **{
            f"critic/grad:{v.path}": _nonfinite(g)
            for v, g in zip(trainer.critic.trainable_variables, q.grads, strict=True)
        },
    }
    entry = {
        "iteration": i,
        "nonfinite_tensors": {name: count for name, count in bad.items() if count},
        "zero_grad_rows": int(q.penalty.zero_rows),
        "zero_norm_rows": int((norms == 0).sum()),
        "grad_norm_min": float(np.min(norms)),
        "critic_loss": float(q.loss),
        "gradient_penalty": float(q.penalty.value),
    }
    return {"entry": entry, "real": np.asarray(q.real), "labels": np.asarray(q.onehot)}


def investigate(trainer: WGANGPTrainer, step: int, source: str | None) -> dict[str, Any]:
    """Recompute the failing update of ``step`` and describe what was non-finite, and why."""
    n_critic = trainer.tc.n_critic
    update = int(trainer.guard.bad_update.numpy())
    report: dict[str, Any] = {
        "step": step,
        "source": source,
        "update": "generator" if update == n_critic else f"critic iteration {update}",
        "norm": trainer.gp.norm,
        "eps": trainer.gp.eps,
        "penalty_dtype": trainer.penalty_dtype.name,
        "norm_gradient_singular_at_zero": trainer.guard.norm_singular_at_zero,
        "precision": trainer.tc.precision,
        "critic_iterations": [],
    }
    if trainer.loss_scaling:
        report["loss_scale"] = float(trainer.critic_optimizer.dynamic_scale.numpy())
        report["loss_scale_skips"] = int(trainer.guard.scale_skips.numpy())
    # The failing critic iteration (or, when the generator failed, the whole step's critic side).
    iterations = [update] if 0 <= update < n_critic else range(n_critic)
    for i in iterations:
        found = _critic_iteration(trainer, step, i)
        entry = found["entry"]
        report["critic_iterations"].append(entry)
        if entry["nonfinite_tensors"]:
            labels = np.argmax(found["labels"], axis=1)
            report["offending_iteration"] = i
            report["nonfinite_tensors"] = sorted(entry["nonfinite_tensors"])
            report["zero_grad_rows"] = entry["zero_grad_rows"]
            report["zero_norm_rows"] = entry["zero_norm_rows"]
            report["batch"] = {
                "rows": int(found["real"].shape[0]),
                "frauds": int(labels.sum()),
                "feature_stats_network_units": _feature_stats(found["real"]),
            }
            break
    report["diagnosis"] = diagnose(report)
    return report


def diagnose(report: dict[str, Any]) -> str:
    """One sentence on the likely cause, from the recomputed quantities."""
    zero_norm = report.get("zero_norm_rows", 0)
    if zero_norm and report["norm_gradient_singular_at_zero"]:
        why = (
            f"eps={report['eps']:g} rounds to 0 in {report['penalty_dtype']}"
            if report["norm"] == "safe_sqrt"
            else f"gp.norm={report['norm']} has no gradient at 0"
        )
        return (
            f"{zero_norm} row(s) of the critic's input gradient have norm exactly 0 (saturated "
            f"or dead critic, or squares underflowing) and {why}: d||g||/dg = g/||g|| divides "
            "by 0 -> NaN; use gp.norm=safe_sqrt with gp.dtype=float32"
        )
    if "offending_iteration" not in report:
        return "the critic side of this step recomputes finite; the generator update failed"
    return "non-finite values without a zero-norm row: see nonfinite_tensors and the batch stats"


def write_forensics(report: dict[str, Any], path: Path) -> Path:
    path.write_text(json.dumps(report, indent=2, default=str))
    return path
