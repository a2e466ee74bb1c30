"""What went non-finite, where, and on which batch: the one-step diagnosis of a NaN.

Batches are pure functions of (seed, step), so the failing batch is drawn again here (by the
kernels training used: an XLA run draws with XLA's Threefry) and the failing critic iteration
recomputed on the weights the guard kept (the last good ones: the updates of the failing step
that came before the bad one were applied, the bad one was not, so the recomputed failing
iteration sees exactly the weights it saw in training).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import tensorflow as tf

from wgangp.data.transform.layout import Block, slot_names
from wgangp.files import write_text
from wgangp.step.guard import NORM_GRADIENT
from wgangp.step.private_step import PrivateTrainStep
from wgangp.step.train_step import TrainStep


def _nonfinite(t: tf.Tensor) -> int:
    return int(np.size(t) - np.isfinite(np.asarray(t)).sum())


def _unusable(grad: tf.Tensor) -> int:
    """Gradient elements the guard refuses (:func:`~wgangp.step.guard.usable`): non-finite, or
    finite with a square that is not."""
    with np.errstate(over="ignore", invalid="ignore"):
        return _nonfinite(np.square(np.asarray(grad, np.float32)))


def _feature_stats(x: np.ndarray, layout: Sequence[Block]) -> dict[str, dict[str, float]]:
    """Per column of the networks' space, named as the table names it
    (:func:`~wgangp.data.transform.layout.slot_names`)."""
    names = slot_names(layout)
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


def _critic_iteration(train_step: TrainStep, step: int, i: int) -> dict[str, Any]:
    q, batch = train_step.replay_critic_iteration(step, i)
    norms = np.asarray(q.penalty.norms)
    bad = {
        "critic/loss": _nonfinite(q.loss),
        "critic/gradient_penalty": _nonfinite(q.penalty.value),
        NORM_GRADIENT: 0 if bool(q.norm_gradient_finite) else int((norms == 0).sum()),
        **{
            f"critic/grad:{v.path}": _unusable(g)
            for v, g in zip(train_step.critic.trainable_variables, q.grads, strict=True)
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
    return {
        "entry": entry,
        "real": np.asarray(batch.real[i]),
        "labels": np.asarray(batch.onehot[i]),
    }


def investigate(trainer: TrainStep, step: int, source: str | None) -> dict[str, Any]:
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
        "learning_rates": {
            "critic": trainer.tc.critic_optimizer.lr,
            "generator": trainer.tc.generator_optimizer.lr,
        },
        "gp_weight": trainer.gp.weight,
        "max_abs_weight": max(
            float(np.max(np.abs(np.asarray(w))))
            for w in trainer.critic.weights + trainer.generator.weights
        ),
        "critic_iterations": [],
    }
    if trainer.loss_scaling:
        report["loss_scale"] = float(trainer.critic_optimizer.dynamic_scale.numpy())
        report["loss_scale_skips"] = int(trainer.guard.scale_skips.numpy())
    # The failing critic iteration (or, when the generator failed, the whole step's critic side).
    # Under privacy.epsilon no batch is replayed: its rows and their statistics are outside the
    # budget, and the file is logged with the run.
    dp_step = isinstance(trainer, PrivateTrainStep)
    iterations = [] if dp_step else [update] if 0 <= update < n_critic else range(n_critic)
    if dp_step:
        report["replay"] = "none under privacy.epsilon (it would read training rows)"
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
                "rare": int(labels.sum()),
                "feature_stats_network_units": _feature_stats(
                    found["real"], trainer.batches.rows.layout
                ),
            }
            break
    report["diagnosis"], report["advice"] = diagnose(report)
    return report


#: Beyond this magnitude (network units) the data, not the norm, are the cause.
LARGE_INPUT = 1e3


def diagnose(report: dict[str, Any]) -> tuple[str, str]:
    """The likely cause, from the recomputed quantities, and the fix that follows from it.

    A zero-norm row with a norm whose gradient is undefined there is the ``tf.norm`` trap; with a
    safe norm, exploding inputs point at the data's scale and exploding weights at the update
    size (learning rates, penalty weight).
    """
    zero_norm = report.get("zero_norm_rows", 0)
    if zero_norm and report["norm_gradient_singular_at_zero"]:
        if report["norm"] == "safe_sqrt":
            why, fix = (
                f"eps={report['eps']:g} rounds to 0 in {report['penalty_dtype']}",
                ("compute the penalty in float32: gp.dtype=float32"),
            )
        else:
            why, fix = (
                f"gp.norm={report['norm']} has no gradient at 0",
                ("use the default gp.norm=safe_sqrt with gp.dtype=float32"),
            )
        return (
            f"{zero_norm} row(s) of the critic's input gradient have norm exactly 0 (saturated "
            f"or dead critic, or squares underflowing) and {why}: d||g||/dg = g/||g|| divides "
            "by 0 -> NaN"
        ), fix
    largest_input = max(
        (abs(v) for stats in report.get("batch", {}).get("feature_stats_network_units", {}).values()
         for v in (stats["min"], stats["max"])),
        default=0.0,
    )  # fmt: skip
    if not np.isfinite(largest_input) or largest_input > LARGE_INPUT:
        return (
            f"the batch reaches {largest_input:.3g} in network units: the data are not on the "
            "scale the networks expect"
        ), "scale the data (preprocess=standard) and check the file for outliers"
    lr = report["learning_rates"]
    weight = report["max_abs_weight"]
    return (
        f"the norm is safe ({report['norm']} in {report['penalty_dtype']}) but the updates "
        f"diverged: weights reach {weight:.3g}"
        + ("" if "offending_iteration" in report else "; the critic side recomputes finite")
    ), (
        f"lower trainer.critic_optimizer.lr (now {lr['critic']:g}) and "
        f"trainer.generator_optimizer.lr (now {lr['generator']:g}), or gp.weight "
        f"(now {report['gp_weight']:g})"
    )


def write_forensics(report: dict[str, Any], path: Path) -> Path:
    return write_text(path, json.dumps(report, indent=2, default=str))
