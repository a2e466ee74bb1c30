"""Speed modes compute the same training as the plain step (K=1, no XLA, float32).

Tolerances on the per-step metrics (critic/generator loss, penalty, ...) over 4 steps:
- K steps per call: 1e-6 (same graph ops, only the loop differs);
- XLA: 1e-4 on one critic and one generator update from the same batch (fused kernels reorder
  float32 sums). Whole XLA runs are compared with themselves (1e-6): an XLA run draws its
  batches with Threefry, a plain one with Philox (TF's kernels have no Threefry), hence other
  batches;
- mixed_bfloat16 / mixed_float16: first step within 0.05 absolute + 5% relative (bfloat16 keeps
  8 bits of mantissa, float16 11; the penalty stays float32), all steps finite.
Every mode traces its training function once, whatever the number of calls.
"""

from __future__ import annotations

import subprocess
import sys

import keras
import numpy as np
import pytest
from support.configs import TINY, compose

from wgangp.config import to_config
from wgangp.step.batch import ClassBalancedRows
from wgangp.step.train_step import METRICS, TrainStep, build_train_step

STEPS = 4


def _rows() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((600, 30)).astype(np.float32)
    y = (rng.random(600) < 0.1).astype(np.int64)
    return x, y


def _config(**trainer):
    overrides = [f"trainer.{k}={v}" for k, v in trainer.items()]
    return to_config(compose(TINY + overrides))


def _train(initial: list | None, calls: int, **trainer) -> tuple[np.ndarray, TrainStep]:
    """Metrics [STEPS, M] of STEPS generator steps run in ``calls`` calls, from ``initial``."""
    cfg = _config(**trainer)
    previous = keras.config.dtype_policy().name
    keras.mixed_precision.set_dtype_policy(cfg.trainer.precision)
    try:
        keras.utils.set_random_seed(0)
        trainer_ = build_train_step(cfg, ClassBalancedRows(*_rows()))
        if initial is not None:
            trainer_.generator.set_weights(initial[0])
            trainer_.critic.set_weights(initial[1])
        per_call = STEPS // calls
        metrics = np.concatenate([trainer_.advance(per_call).metrics for _ in range(calls)])
    finally:
        keras.mixed_precision.set_dtype_policy(previous)
    return metrics, trainer_


@pytest.fixture(scope="module")
def plain() -> tuple[np.ndarray, list]:
    """The reference: one generator step per call, no XLA, float32; and its initial weights."""
    cfg = _config(steps_per_call=1)
    keras.utils.set_random_seed(0)
    reference = build_train_step(cfg, ClassBalancedRows(*_rows()))
    initial = [reference.generator.get_weights(), reference.critic.get_weights()]
    metrics = np.concatenate([reference.advance(1).metrics for _ in range(STEPS)])
    assert np.isfinite(metrics).all()
    assert reference.tracing_count() == 1
    return metrics, initial


def test_k_steps_per_call_matches_plain_step(plain):
    reference, initial = plain
    metrics, trainer = _train(initial, calls=2, steps_per_call=2)
    assert metrics.shape == reference.shape
    np.testing.assert_allclose(metrics, reference, rtol=0, atol=1e-6)
    assert trainer.tracing_count() == 1
    assert int(trainer.step.numpy()) == STEPS


def test_xla_update_matches_plain_update(plain):
    """The critic and generator updates compiled by XLA give the plain graph's numbers.

    Compared on the same batch: an XLA run draws with Threefry, a plain one with Philox, so
    whole runs draw other batches.
    """
    import tensorflow as tf

    _, initial = plain
    _, trainer = _train(initial, calls=1, steps_per_call=4)
    step = tf.constant(7, tf.int64)
    batch = trainer.batches.draw(step)  # drawn once, eagerly, fed to both
    fakes = trainer.fake_rows(batch)

    def update() -> list[tf.Tensor]:
        q = trainer.critic_update(batch, 0, fakes)
        g = trainer.generator_update(batch)
        return [q.loss, q.penalty.value, *q.grads, g.loss, *g.grads]

    plain_values = tf.function(update)()
    xla_values = tf.function(update, jit_compile=True)()
    for a, b in zip(plain_values, xla_values, strict=True):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.slow
def test_xla_compiled_loop_runs_finite_deterministic_and_traces_once(plain):
    """XLA compiles the whole chunk: tf.range loop, stateless sampling, tf.cond-guarded applies."""
    _, initial = plain
    first, trainer = _train(initial, calls=2, steps_per_call=2, jit_compile="true")
    again, _ = _train(initial, calls=1, steps_per_call=4, jit_compile="true")
    assert np.isfinite(first).all()
    np.testing.assert_allclose(again, first, rtol=0, atol=1e-6)
    assert trainer.tracing_count() == 1
    assert int(trainer.step.numpy()) == STEPS


@pytest.mark.parametrize("jit_compile", ["false", "true"])
def test_forensics_replay_draws_the_batch_training_drew(jit_compile):
    """The NaN forensics recompute a critic iteration on the batch training used.

    Under XLA that batch comes from XLA's Threefry, which TF's own kernels do not implement, so
    the replay must be drawn by the same compilation. With n_critic=1 the step's critic loss
    and penalty metrics are exactly iteration 0's, computed before its update, on the initial
    weights.
    """
    cfg = _config(steps_per_call=1, n_critic=1, jit_compile=jit_compile)
    keras.utils.set_random_seed(0)
    trainer = build_train_step(cfg, ClassBalancedRows(*_rows()))
    replay, _ = trainer.replay_critic_iteration(0, 0)
    metrics = trainer.advance(1).metrics[0]
    loss = metrics[METRICS.index("critic_loss")]
    penalty = metrics[METRICS.index("gradient_penalty")]
    np.testing.assert_allclose(float(replay.loss), loss, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(float(replay.penalty.value), penalty, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("precision", ["mixed_bfloat16", "mixed_float16"])
def test_mixed_precision_is_close_and_finite(plain, precision):
    reference, initial = plain
    metrics, trainer = _train(initial, calls=2, steps_per_call=2, precision=precision)
    assert np.isfinite(metrics).all()
    np.testing.assert_allclose(metrics[0], reference[0], rtol=0.05, atol=0.05)
    assert trainer.tracing_count() == 1
    assert trainer.critic.layers[-1].compute_dtype == "float32"  # the score leaves in float32
    assert trainer.critic.get_layer("critic_dense_0").compute_dtype == precision.split("_")[1]
    if precision == "mixed_float16":
        assert isinstance(trainer.critic_optimizer, keras.optimizers.LossScaleOptimizer)
        assert isinstance(trainer.generator_optimizer, keras.optimizers.LossScaleOptimizer)


def test_generator_step_graph_has_no_redundant_matmuls(plain):
    """No weight gradients for the network an update leaves alone; G once per critic pass."""
    from scripts.bench.wgangp_systems import count_step_flops

    _, trainer = _train(plain[1], calls=1, steps_per_call=4)
    count = count_step_flops(trainer)
    assert count.unknown_shape_matmuls == 0
    # Tiny nets (8+2 -> 16 -> 16 -> 30; 30+2 -> 16 -> 16 -> 1), 5 critic updates, batch 32.
    # Naive graph (G inside the critic tape, all weights watched): 232 matmuls.
    assert count.matmuls <= 142


@pytest.mark.slow
def test_joblib_launcher_runs_two_jobs_in_parallel(tmp_path):
    """``-m hydra/launcher=joblib`` sweeps two seeds of the tiny config in two processes."""
    import mlflow

    uri = f"sqlite:///{tmp_path}/mlflow.db"
    # Create the store and experiment first: parallel jobs race on a fresh sqlite file.
    mlflow.MlflowClient(uri).create_experiment("wgangp")
    overrides = [o for o in TINY if not o.startswith("trainer.steps=")]
    command = [
        sys.executable, "-m", "wgangp.train", "-m", "hydra/launcher=joblib",
        "hydra.launcher.n_jobs=2", f"hydra.sweep.dir={tmp_path}/multirun", *overrides,
        "trainer.steps=3", f"tracking.uri={uri}", "seed=0,1",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    experiment = mlflow.MlflowClient(uri).get_experiment_by_name("wgangp")
    runs = mlflow.MlflowClient(uri).search_runs([experiment.experiment_id])
    assert sorted(r.data.params["seed"] for r in runs) == ["0", "1"]
    assert {r.info.status for r in runs} == {"FINISHED"}


@pytest.mark.gpu
@pytest.mark.parametrize("precision", ["float32", "mixed_bfloat16"])
def test_fast_mode_trains_on_the_gpu(precision):
    """On a GPU host: K steps per call under XLA, weights on the GPU, every step finite."""
    from wgangp.training.runtime import training_runtime

    cfg = _config(device="gpu", steps_per_call=2, jit_compile="true", precision=precision)
    with training_runtime(cfg.trainer, cfg.seed) as runtime:
        assert runtime.device == "gpu"
        trainer = build_train_step(cfg, ClassBalancedRows(*_rows()))
        result = trainer.advance(2)
    assert result.completed == 2 and np.isfinite(result.metrics).all()
    assert "GPU" in trainer.critic.trainable_variables[0].value.device
    assert trainer.tracing_count() == 1
