"""FusedAdam gives Keras' Adam update in eager, compiled, XLA and loss-scaled runs.

The mirrored path is exercised through the trainer in tests/test_distributed.py.
"""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

from wgangp.model.optimizers import FusedAdam

STEPS = 6
# float32 rounding: the fused kernel multiplies m by alpha before dividing, Keras after.
RTOL, ATOL = 1e-6, 1e-7


def _variables() -> list[keras.Variable]:
    rng = np.random.default_rng(0)
    return [
        keras.Variable(rng.standard_normal((5, 3)).astype(np.float32), name="kernel"),
        keras.Variable(rng.standard_normal(3).astype(np.float32), name="bias"),
    ]


def _gradients(step: int) -> list[np.ndarray]:
    rng = np.random.default_rng(100 + step)
    # Mixed magnitudes, and an exact zero, where (sqrt(v) + eps) matters.
    kernel = rng.standard_normal((5, 3)).astype(np.float32) * 10.0 ** rng.integers(-6, 2, (5, 3))
    kernel[0, 0] = 0.0
    return [kernel, rng.standard_normal(3).astype(np.float32)]


def _train(optimizer: keras.optimizers.Optimizer, compile_mode: str | None) -> list[np.ndarray]:
    variables = _variables()
    optimizer.build(variables)

    def apply(grads):
        optimizer.apply(grads, variables)

    if compile_mode is not None:
        apply = tf.function(apply, jit_compile=compile_mode == "xla")
    for step in range(STEPS):
        apply([tf.constant(g) for g in _gradients(step)])
    return [v.numpy() for v in variables]


@pytest.mark.parametrize("betas", [(0.0, 0.9), (0.5, 0.9), (0.9, 0.999)])
@pytest.mark.parametrize("compile_mode", [None, "graph", "xla"])
def test_fused_adam_matches_keras_adam(betas, compile_mode):
    beta_1, beta_2 = betas
    expected = _train(keras.optimizers.Adam(1e-3, beta_1=beta_1, beta_2=beta_2), compile_mode)
    actual = _train(FusedAdam(1e-3, beta_1=beta_1, beta_2=beta_2), compile_mode)
    for a, e in zip(actual, expected, strict=True):
        np.testing.assert_allclose(a, e, rtol=RTOL, atol=ATOL)
    assert not np.allclose(actual[0], _variables()[0].numpy())  # the updates did move the weights


def test_fused_adam_moments_and_iterations_match_keras():
    keras_adam, fused = keras.optimizers.Adam(1e-3, 0.5, 0.9), FusedAdam(1e-3, 0.5, 0.9)
    _train(keras_adam, "graph")
    _train(fused, "graph")
    assert int(fused.iterations.numpy()) == int(keras_adam.iterations.numpy()) == STEPS
    for a, e in zip(fused.variables, keras_adam.variables, strict=True):
        np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=RTOL, atol=ATOL)


def test_fused_adam_under_loss_scaling_skips_an_overflow_like_keras():
    def run(inner):
        optimizer = keras.optimizers.LossScaleOptimizer(inner, initial_scale=2.0**4)
        variables = _variables()
        optimizer.build(variables)
        for step in range(STEPS):
            grads = [tf.constant(g * 2.0**4) for g in _gradients(step)]
            if step == 2:
                grads[1] = tf.constant([np.inf, 0.0, 0.0], tf.float32)  # an overflow: skipped
            optimizer.apply(grads, variables)
        return [v.numpy() for v in variables], float(optimizer.dynamic_scale.numpy())

    (actual, actual_scale), (expected, expected_scale) = (
        run(FusedAdam(1e-3)),
        run(keras.optimizers.Adam(1e-3)),
    )
    assert actual_scale == expected_scale == 2.0**3
    for a, e in zip(actual, expected, strict=True):
        np.testing.assert_allclose(a, e, rtol=RTOL, atol=ATOL)


def test_fused_adam_amsgrad_falls_back_to_keras():
    expected = _train(keras.optimizers.Adam(1e-3, amsgrad=True), "graph")
    actual = _train(FusedAdam(1e-3, amsgrad=True), "graph")
    for a, e in zip(actual, expected, strict=True):
        np.testing.assert_allclose(a, e, rtol=RTOL, atol=ATOL)


def test_fused_adam_step_is_one_kernel_per_variable():
    variables = _variables()
    optimizer = FusedAdam(1e-3)
    optimizer.build(variables)

    @tf.function
    def apply(grads):
        optimizer.apply(grads, variables)

    graph = apply.get_concrete_function([tf.TensorSpec(v.shape) for v in variables]).graph
    ops = [op.type for op in graph.get_operations()]
    assert ops.count("ResourceApplyAdam") == len(variables)
    assert "AssignSubVariableOp" not in ops  # Keras' own update (var -= ...) is gone
