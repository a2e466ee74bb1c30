"""``trainer.strategy=mirrored`` on two logical CPU devices gives the single-device training.

It also keeps the NaN guard: a non-finite update is named and never applied on any replica.

The logical devices must be configured before TensorFlow initializes its runtime, so the
comparison runs in a fresh subprocess. Tolerance: 1e-5 on the per-step metrics and the weights
after 6 steps (the replicas' gradient sum reorders float32 additions).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support.configs import compose

from wgangp.config import Config, to_config
from wgangp.errors import ConfigError
from wgangp.step.replicas import SingleDevice, check_replicas
from wgangp.step.train_step import build_train_step

CHILD = r"""
import json, os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
import numpy as np
import tensorflow as tf
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
import keras
from wgangp.config import Config
from wgangp.step.batch import ClassBalancedRows
from wgangp.step.train_step import build_train_step

rng = np.random.default_rng(0)
x = rng.standard_normal((400, 30)).astype(np.float32)
y = (rng.random(400) < 0.1).astype(np.int64)

def config(strategy):
    cfg = Config(seed=3)
    cfg.model.latent_dim = 8
    cfg.model.generator.hidden = [16, 16]
    cfg.model.critic.hidden = [16, 16]
    cfg.trainer.batch_size = 32
    cfg.trainer.steps_per_call = 3
    cfg.trainer.strategy = strategy
    return cfg

keras.utils.set_random_seed(0)
plain = build_train_step(config("none"), ClassBalancedRows(x, y))
mirrored = build_train_step(config("mirrored"), ClassBalancedRows(x, y))
mirrored.generator.set_weights(plain.generator.get_weights())
mirrored.critic.set_weights(plain.critic.get_weights())
a = np.concatenate([plain.advance(3).metrics for _ in range(2)])
b = np.concatenate([mirrored.advance(3).metrics for _ in range(2)])

def replay():  # the NaN forensics' recomputation of a critic iteration: single-device math
    (p, _), (m, _) = plain.replay_critic_iteration(6, 0), mirrored.replay_critic_iteration(6, 0)
    pairs = [(p.loss, m.loss), *zip(p.grads, m.grads)]
    diffs = [float(np.abs(np.asarray(u) - np.asarray(v)).max()) for u, v in pairs]
    return {"replay_diff": max(diffs)}

def nan_guard():  # NaN fraud rows: the guard names the critic loss and keeps the weights
    before = [w.copy() for w in mirrored.critic.get_weights() + mirrored.generator.get_weights()]
    fraud = mirrored.batches.rows.rare
    fraud.assign(np.full(fraud.shape, np.nan, np.float32))
    bad = mirrored.advance(3)
    after = mirrored.critic.get_weights() + mirrored.generator.get_weights()
    return {
        "nan_bad_step": bad.bad_step,
        "nan_source": bad.bad_source,
        "nan_completed": bad.completed,
        "nan_weights_kept": all(np.array_equal(u, v) for u, v in zip(before, after)),
    }

weights = [
    float(np.abs(u - v).max())
    for net in ("generator", "critic")
    for u, v in zip(getattr(plain, net).get_weights(), getattr(mirrored, net).get_weights())
]
print(json.dumps({
    "replicas": mirrored.replicas.count,
    "devices": list(mirrored.replicas.strategy.extended.worker_devices),
    "metrics_diff": float(np.abs(a - b).max()),
    "weights_diff": max(weights),
    "finite": bool(np.isfinite(b).all()),
    "tracing": mirrored.tracing_count(),
    "step": int(mirrored.step.numpy()),
    "variable_type": type(mirrored.critic.trainable_variables[0].value).__name__,
    **replay(),
    **nan_guard(),
}))
"""


@pytest.mark.slow  # a fresh TensorFlow process tracing two trainers: ~1-4 min
def test_mirrored_on_two_logical_cpus_matches_single_device():
    done = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["replicas"] == 2, result
    assert result["variable_type"] == "MirroredVariable"
    assert result["finite"]
    assert result["metrics_diff"] < 1e-5, result
    assert result["weights_diff"] < 1e-5, result
    assert result["tracing"] == 1  # two calls, one trace
    assert result["step"] == 6
    assert result["replay_diff"] < 1e-5, result
    # Then NaN rows: the guard (cross-replica, on the summed gradients) stops at once.
    assert result["nan_bad_step"] == 6 and result["nan_completed"] == 0, result
    assert result["nan_source"] == "critic/loss", result
    assert result["nan_weights_kept"], result


@pytest.mark.parametrize(
    ("override", "fix"),
    [
        ("trainer.jit_compile=true", "set trainer.jit_compile=false"),
        ("trainer.precision=mixed_float16", "use mixed_bfloat16 or float32"),
    ],
)
def test_the_schema_refuses_what_mirrored_cannot_honour_in_one_line(override, fix):
    with pytest.raises(ConfigError, match=fix) as err:
        to_config(compose(["trainer.strategy=mirrored", override]))
    assert "\n" not in str(err.value)


def test_a_batch_that_does_not_split_over_the_replicas_is_refused():
    with pytest.raises(ConfigError, match="use a multiple of 2"):
        check_replicas(33, replicas=2)
    check_replicas(32, replicas=2)
    with pytest.raises(ConfigError, match="in packs of model.critic.pac=4 .* multiple of 8"):
        check_replicas(36, replicas=2, pac=4)
    check_replicas(32, replicas=2, pac=4)


def test_without_a_strategy_the_step_runs_on_one_device():
    import numpy as np

    from wgangp.step.batch import ClassBalancedRows
    from wgangp.step.train_step import TrainStep

    cfg = Config()
    cfg.model.generator.hidden = [4]
    cfg.model.critic.hidden = [4]
    x = np.random.default_rng(0).standard_normal((20, 30)).astype(np.float32)
    y = np.array([0, 1] * 10)
    train_step = build_train_step(cfg, ClassBalancedRows(x, y))
    assert type(train_step) is TrainStep and isinstance(train_step.replicas, SingleDevice)
