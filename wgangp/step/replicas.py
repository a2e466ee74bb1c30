"""``trainer.strategy=mirrored``: the same training step, data-parallel over local devices.

Each update's losses and gradients are computed on every replica through ``strategy.run``.
The global batch is drawn once (the stateless draws of the single-device trainer, a step
ahead) and every replica keeps its own slice of the rows, so with R replicas the math is the
single-device math: each replica's losses are means over its batch/R rows, scaled by
(batch/R)/batch before differentiation (what ``tf.nn.compute_average_loss`` does with the
global batch size), and the sum of the replicas' gradients (Keras 3 optimizers all-reduce by
sum) is the gradient of the global mean.

The ``tf.range`` loop of K steps stays in one ``tf.function``; its loop variables are only
cross-replica tensors (PerReplica values cannot be loop variables), because each step's
per-replica results are reduced before the loop carries them. The NaN guard stays exact: it
judges the summed gradients in cross-replica context, and only inside the guard's branch do
the replicas apply them (an all-reduce inside a cond in replica context is not supported).
XLA inside the per-replica function is refused: it fails on TF 2.21 with resources placed on
another replica's device.
"""

from __future__ import annotations

import logging

import tensorflow as tf

from wgangp.config import Config
from wgangp.errors import ConfigError
from wgangp.step.batch import ClassBalancedRows
from wgangp.step.train_step import (
    CriticInputs,
    CriticQuantities,
    GeneratorQuantities,
    WGANGPTrainer,
)

log = logging.getLogger("wgangp.distributed")


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


class MirroredTrainer(WGANGPTrainer):
    """``WGANGPTrainer`` whose gradients are computed on every replica of a MirroredStrategy.

    Per update: ``strategy.run`` computes each replica's losses and gradients on its slice of
    the batch; the gradients are summed across replicas, and the NaN guard and the optimizer
    run once in cross-replica context on the summed gradients. The guard's ``tf.cond`` then
    never holds a synchronization point (an all-reduce inside a cond in replica context is not
    supported), and a bad update is still never applied, on any replica.
    """

    def __init__(
        self,
        cfg: Config,
        rows: ClassBalancedRows,
        strategy: tf.distribute.Strategy | None = None,
    ) -> None:
        self.strategy = strategy or tf.distribute.MirroredStrategy(local_devices())
        self.replicas = int(self.strategy.num_replicas_in_sync)
        check_replicas(cfg.trainer.batch_size, self.replicas, cfg.model.critic.pac)
        self.local_batch = cfg.trainer.batch_size // self.replicas
        with self.strategy.scope():
            super().__init__(cfg.model, cfg.gp, cfg.trainer, seed=cfg.seed, rows=rows)
        log.info(
            "mirrored over %d replicas: %s", self.replicas, self.strategy.extended.worker_devices
        )

    # -- the replica's slice of the global batch -----------------------------------------

    def _replica(self) -> tf.distribute.ReplicaContext | None:
        """The context of one of this strategy's replicas inside ``strategy.run``, else None.

        Outside any strategy (the NaN forensics recompute eagerly) TensorFlow still reports a
        default replica context; there the trainer computes the single-device quantities.
        """
        context = tf.distribute.get_replica_context()
        if self.replicas == 1 or context is None or not tf.distribute.has_strategy():
            return None
        return context

    def _shard(self, t: tf.Tensor) -> tf.Tensor:
        """Rows [r*b, (r+1)*b) of a global-batch tensor on replica r (the whole batch outside)."""
        context = self._replica()
        if context is None:
            return t
        start = tf.cast(context.replica_id_in_sync_group, tf.int32) * self.local_batch
        return t[start : start + self.local_batch]

    def _scaled(self, opt, loss: tf.Tensor) -> tf.Tensor:
        # A replica's loss is a mean over its local_batch rows; times local/global it is its
        # share of the global mean, so the sum of the replicas' gradients is the global one.
        if self._replica() is not None:
            loss = loss * (self.local_batch / self.tc.batch_size)
        return super()._scaled(opt, loss)

    # -- per-replica quantities, combined in cross-replica context ------------------------

    def _in_replicas(self) -> bool:
        return tf.distribute.in_cross_replica_context() and self.replicas > 1

    def _sharded(self, drawn):
        """The replica's slice of batches drawn ahead in cross-replica context (global rows)."""
        return tf.nest.map_structure(self._shard, drawn)

    def critic_inputs(self, drawn) -> list[CriticInputs]:
        if not self._in_replicas():
            return super().critic_inputs(drawn)

        def replica(drawn) -> list[CriticInputs]:
            return super(MirroredTrainer, self).critic_inputs(self._sharded(drawn))

        return self.strategy.run(replica, args=(drawn,))  # PerReplica fields

    def critic_quantities(
        self, step: tf.Tensor, i: int, inputs: CriticInputs | None = None
    ) -> CriticQuantities:
        if not self._in_replicas():
            return super().critic_quantities(step, i, inputs)
        per_replica = self.strategy.run(super().critic_quantities, args=(step, i, inputs))
        q = self._locals(per_replica)
        penalty = q["penalty"]
        return CriticQuantities(
            real=tf.concat(q["real"], 0),
            onehot=tf.concat(q["onehot"], 0),
            loss=_mean(q["loss"]),
            penalty=type(penalty[0])(
                _mean([p.value for p in penalty]),
                tf.concat([p.norms for p in penalty], 0),
                tf.add_n([p.zero_rows for p in penalty]),
            ),
            norm_gradient_finite=tf.reduce_all(tf.stack(q["norm_gradient_finite"])),
            grads=_sum_lists(q["grads"]),
            scaled_grads=per_replica.scaled_grads,  # summed by the optimizer's all-reduce
            wasserstein=_mean(q["wasserstein"]),
        )

    def generator_quantities(self, batch) -> GeneratorQuantities:
        if not self._in_replicas():
            return super().generator_quantities(batch)

        def replica(batch) -> GeneratorQuantities:
            return super(MirroredTrainer, self).generator_quantities(self._sharded(batch))

        per_replica = self.strategy.run(replica, args=(batch,))
        q = self._locals(per_replica)
        return GeneratorQuantities(
            loss=_mean(q["loss"]),
            grads=_sum_lists(q["grads"]),
            scaled_grads=per_replica.scaled_grads,
        )

    def _apply_if(self, ok: tf.Tensor, opt, grads, variables) -> None:
        if not self._in_replicas():
            super()._apply_if(ok, opt, grads, variables)
            return

        def apply() -> tf.Tensor:
            # The replicas run inside the branch: the all-reduce of the gradients in apply() is
            # in the same graph as the strategy.run that started them.
            self.strategy.run(lambda g: opt.apply(g, variables), args=(grads,))
            return tf.constant(True)

        tf.cond(ok, apply, lambda: tf.constant(False))

    def _train_chunk(self, start_step: tf.Tensor, num_steps: tf.Tensor) -> tuple[tf.Tensor, ...]:
        with self.strategy.scope():  # cross-replica context while tracing
            return super()._train_chunk(start_step, num_steps)

    def _locals(self, per_replica: tuple) -> dict[str, list]:
        """{field: [replica 0's value, replica 1's value, ...]} for a NamedTuple of PerReplica."""
        local = self.strategy.experimental_local_results
        out: dict[str, list] = {}
        for key, value in per_replica._asdict().items():
            if isinstance(value, tuple) and not hasattr(value, "_fields"):
                value = list(value)
            if isinstance(value, list):  # a list of PerReplica tensors (the gradients)
                out[key] = [list(t) for t in zip(*(local(v) for v in value), strict=True)]
            elif hasattr(value, "_fields"):  # a NamedTuple (the Penalty) of PerReplica
                fields = [local(v) for v in value]
                out[key] = [type(value)(*f) for f in zip(*fields, strict=True)]
            else:
                out[key] = list(local(value))
        return out


def _mean(values: list[tf.Tensor]) -> tf.Tensor:
    return tf.add_n(list(values)) / float(len(values))


def _sum_lists(per_replica: list[list[tf.Tensor]]) -> list[tf.Tensor]:
    """Element-wise sum of the replicas' gradient lists (the all-reduce of the gradients)."""
    return [tf.add_n(list(gs)) for gs in zip(*per_replica, strict=True)]


def make_trainer(cfg: Config, rows: ClassBalancedRows) -> WGANGPTrainer:
    """The trainer ``trainer.strategy`` asks for (``none``: single device; ``mirrored``)."""
    if cfg.trainer.strategy == "mirrored":
        return MirroredTrainer(cfg, rows)
    return WGANGPTrainer(cfg.model, cfg.gp, cfg.trainer, seed=cfg.seed, rows=rows)
