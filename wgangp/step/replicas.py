"""Where a step's updates are computed: on one device, or data-parallel over local devices.

The training step asks its replica strategy three things per update: ``run`` (compute it on each
replica's share of the batch), ``combine`` (the replicas' results as one update, in cross-replica
context) and ``apply_if`` (apply it when the NaN guard allows). :class:`SingleDevice` does each
directly; :class:`Mirrored` (``trainer.strategy=mirrored``) spreads it over a MirroredStrategy.

Mirrored math is the single-device math. The global batch is drawn once, a step ahead, and each
replica takes its own slice of the rows; each replica's losses are means over its batch/R rows,
scaled by (batch/R)/batch before differentiation (what ``tf.nn.compute_average_loss`` does with
the global batch size), and the sum of the replicas' gradients (Keras 3 optimizers all-reduce by
sum) is the gradient of the global mean. The ``tf.range`` loop of K steps stays in one
``tf.function``; its loop variables are only cross-replica tensors (PerReplica values cannot be
loop variables), because each update is combined before the loop carries anything. The NaN guard
stays exact: it judges the summed gradients in cross-replica context, and only inside the guard's
branch do the replicas apply them (an all-reduce inside a cond in replica context is not
supported). XLA inside the per-replica function is refused: it fails on TF 2.21 with resources
placed on another replica's device.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from typing import Any, Protocol

import tensorflow as tf

from wgangp.errors import ConfigError

log = logging.getLogger("wgangp.distributed")


class Replicas(Protocol):
    """How a training step computes, combines and applies its updates."""

    count: int
    share: float  # a replica's share of the global batch

    def scope(self) -> contextlib.AbstractContextManager: ...

    def run(self, fn: Callable, batch: Any, *args: Any) -> Any: ...

    def combine(self, update: Any) -> Any: ...

    def apply_if(self, ok: tf.Tensor, opt: Any, grads: Any, variables: list) -> None: ...


class SingleDevice:
    """Everything on the default device: ``fn`` on the whole batch, applied in a ``tf.cond``."""

    count = 1
    share = 1.0

    def scope(self) -> contextlib.AbstractContextManager:
        return contextlib.nullcontext()

    def run(self, fn: Callable, batch: Any, *args: Any) -> Any:
        return fn(batch, *args)

    def combine(self, update: Any) -> Any:
        return update

    def apply_if(self, ok: tf.Tensor, opt: Any, grads: Any, variables: list) -> None:
        def apply() -> tf.Tensor:
            opt.apply(grads, variables)
            return tf.constant(True)

        tf.cond(ok, apply, lambda: tf.constant(False))


def local_devices() -> list[str]:
    """GPUs if there are any, else every (logical) CPU device."""
    gpus = tf.config.list_logical_devices("GPU")
    return [d.name for d in (gpus or tf.config.list_logical_devices("CPU"))]


def check_replicas(batch_size: int, replicas: int, pac: int = 1) -> None:
    """The batch must split evenly over the replicas, into whole critic packs on each (the
    replica count is known only once the devices are).

    The settings mirrored cannot honour at all (XLA, mixed_float16) are schema rules
    (``TrainerConfig``).
    """
    if batch_size % (replicas * pac):
        raise ConfigError(
            f"trainer.batch_size={batch_size} does not split evenly over {replicas} "
            f"replicas{f' in packs of model.critic.pac={pac}' if pac > 1 else ''} under "
            f"trainer.strategy=mirrored; use a multiple of {replicas * pac}"
        )


class Mirrored:
    """Each update computed on every replica of a MirroredStrategy, on its slice of the batch;
    combined and judged once in cross-replica context; applied by every replica."""

    def __init__(self, strategy: tf.distribute.Strategy, batch_size: int, pac: int = 1) -> None:
        self.strategy = strategy
        self.count = int(strategy.num_replicas_in_sync)
        check_replicas(batch_size, self.count, pac)
        self.local_batch = batch_size // self.count
        self.share = self.local_batch / batch_size
        log.info("mirrored over %d replicas: %s", self.count, strategy.extended.worker_devices)

    @classmethod
    def over_local_devices(cls, batch_size: int, pac: int = 1) -> Mirrored:
        return cls(tf.distribute.MirroredStrategy(local_devices()), batch_size, pac)

    def scope(self) -> contextlib.AbstractContextManager:
        return self.strategy.scope()

    def run(self, fn: Callable, batch: Any, *args: Any) -> Any:
        """``fn(this replica's rows of batch, *args)`` on every replica: PerReplica results.

        ``batch`` is global (drawn in cross-replica context); ``args`` are per-replica values
        (an earlier ``run``'s results) or plain Python values.
        """

        def replica(batch: Any, *args: Any) -> Any:
            context = tf.distribute.get_replica_context()
            start = tf.cast(context.replica_id_in_sync_group, tf.int32) * self.local_batch
            return fn(batch.replica_slice(start, self.local_batch), *args)

        return self.strategy.run(replica, args=(batch, *args))

    def combine(self, update: Any) -> Any:
        """One update from the replicas' (a NamedTuple of PerReplica fields): losses averaged,
        gradients summed, norms concatenated; the scaled gradients stay per replica (the
        optimizer's all-reduce sums them when applying)."""
        local = self.strategy.experimental_local_results
        fields = {}
        for name, value in update._asdict().items():
            if name == "scaled_grads":
                fields[name] = value
            elif name == "grads":
                per_replica = [local(g) for g in value]
                fields[name] = [tf.add_n(list(replicas)) for replicas in per_replica]
            elif name == "penalty":
                parts = [local(v) for v in value]  # value, norms, zero_rows; each per replica
                fields[name] = type(value)(
                    _mean(parts[0]), tf.concat(list(parts[1]), 0), tf.add_n(list(parts[2]))
                )
            elif name == "norm_gradient_finite":
                fields[name] = tf.reduce_all(tf.stack(list(local(value))))
            else:  # losses and estimates: means over the replicas' rows
                fields[name] = _mean(local(value))
        return type(update)(**fields)

    def apply_if(self, ok: tf.Tensor, opt: Any, grads: Any, variables: list) -> None:
        def apply() -> tf.Tensor:
            # The replicas run inside the branch: the all-reduce of the gradients in apply() is
            # in the same graph as the strategy.run that started them.
            self.strategy.run(lambda g: opt.apply(g, variables), args=(grads,))
            return tf.constant(True)

        tf.cond(ok, apply, lambda: tf.constant(False))


def _mean(values: Any) -> tf.Tensor:
    return tf.add_n(list(values)) / float(len(values))
