"""``python -m scripts.dp_step_speed``: the private training step's time against the non-private
one's, per critic update and per generator step (docs/performance.md keeps the figures).

    python -m scripts.dp_step_speed [--data PATH] [--batch-sizes 128,512] [--repeats 7]
        [--updates 10] [--methods] [--set key=value ...]

Per batch size, the config is the command line's (``python -m wgangp.train data.path=PATH
data.label=Class data.positive=1 privacy.epsilon=3 trainer.batch_size=B``, then ``--set``: the
default trainer, 5 critic updates a generator step, 10 steps a call), the table is read, split
and released as a private run does it (``prepare_data``, ``release``), and the private step is
the one a run builds (``wgangp.training.fit.private_train_step``); the non-private step
(``build_train_step``) gets the same rows and network sizes, so only DP differs. Each is timed
after one warm-up call (its trace), ``--repeats`` rounds, private and non-private in turn
(private first in even rounds, last in odd ones, so the machine's drift hits both alike):

- a critic update: ``--updates`` updates' gradients in one compiled ``tf.range`` loop, on one
  drawn batch, each with the generator's call for its fake rows and, private, its own Poisson
  sample, chunks, paired fake rows and noise; not applied (Adam's apply is the same for both);
- a generator step: one compiled call of ``trainer.steps_per_call`` generator steps, applied, as
  the host loop runs them.

Printed: the median over the rounds and [min, max], the private/non-private ratio (median of the
rounds' ratios), the traces of the training functions, of the private chunk's function and of the
update loop after all rounds, the chunk's rows and the expected sample; the machine (CPU model,
cores) and its load before and after. ``--methods`` also times, on one batch of B rows, ways of
computing the clipped per-entity sum (dp_sgd's Jacobian, a per-row ``vectorized_map``, ghost
clipping) against the non-private critic gradient, and the parts of one private critic update.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scripts.tables_benchmark.tables import TABLES, shared_data_dir

if TYPE_CHECKING:
    import tensorflow as tf

    from wgangp.config import Config
    from wgangp.step.batch import StepBatch
    from wgangp.step.private_step import PrivateTrainStep
    from wgangp.step.train_step import TrainStep

#: The shared real sample of Kaggle's table (read by path, never copied).
CREDIT = TABLES["creditcard"]
#: What every measured run sets: the table's class to synthesize and the budget.
PRIVATE_RUN = [
    f"data.label={CREDIT.label}",
    f"data.positive={CREDIT.positive}",
    "privacy.epsilon=3",
    "trainer.progress=false",
]


@dataclass
class Timing:
    """Seconds per unit of one round each, private and non-private."""

    private: list[float] = field(default_factory=list)
    plain: list[float] = field(default_factory=list)

    def ratios(self) -> list[float]:
        return [p / q for p, q in zip(self.private, self.plain, strict=True)]


@dataclass
class Measured:
    """One batch size's figures."""

    batch: int
    n_critic: int
    steps_per_call: int
    chunk_rows: int
    expected_sample: float
    update: Timing
    generator_step: Timing
    traces: dict[str, int]


def compose_config(data: Path, batch: int, overrides: list[str]) -> Config:
    """The command line's config for a private run on ``data`` at ``batch``."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from wgangp.config import CONF_DIR, register_configs, to_config

    register_configs()
    if GlobalHydra.instance().is_initialized():
        GlobalHydra.instance().clear()
    chosen = [f"data.path={data}", *PRIVATE_RUN, f"trainer.batch_size={batch}", *overrides]
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return to_config(compose(config_name="config", overrides=chosen))


def build_steps(cfg: Config) -> tuple[PrivateTrainStep, TrainStep]:
    """(private step, non-private step): a private run's, and the plain one on its rows."""
    from wgangp.data.prepare import prepare_data
    from wgangp.privacy.randomness import noise_source
    from wgangp.step.train_step import build_train_step
    from wgangp.training.fit import private_train_step
    from wgangp.training.private_fit import private_reading, release

    noise = noise_source()
    data = prepare_data(
        cfg.data, seed=cfg.seed, launch_dir=Path.cwd(), reading=private_reading(cfg, noise)
    )
    private = release(cfg, data, noise)
    step = private_train_step(cfg, private.data, private)
    return step, build_train_step(cfg, step.batches.rows)


def private_update(step: PrivateTrainStep) -> Callable[..., list[tf.Tensor]]:
    """One private critic update's gradient at a step number (its Poisson sample, chunks and
    noise), on a batch's first iteration (its fake term's rows, one generator call)."""

    def update(s: tf.Tensor, batch: StepBatch) -> list[tf.Tensor]:
        fake = step.generator([batch.z[0], batch.onehot[0]], training=True)
        return step.private_critic_update(s, batch, 0, fake)

    return update


def plain_update(step: TrainStep) -> Callable[..., list[tf.Tensor]]:
    """One non-private critic update's gradient on a batch's first iteration, its fake rows
    (one generator call) included."""

    def update(s: tf.Tensor, batch: StepBatch) -> list[tf.Tensor]:
        del s  # the batch is all it draws
        fake = step.generator([batch.z[0], batch.onehot[0]], training=True)
        return step.critic_update(batch, 0, fake[None]).grads

    return update


def looped(
    update: Callable[..., list[tf.Tensor]],
    count: int,
    draw: Callable[[tf.Tensor], StepBatch] | None = None,
) -> Any:
    """``count`` calls of ``update`` (steps start, start + 1, ...) in one compiled loop; with
    ``draw``, each on the batch of step ``start``, drawn once (drawing a step's every iteration
    for each update would time the draws), its latent noise moved by the loop's counter (by
    1e-30: nothing in the loop is the same twice, so nothing can be hoisted out of it)."""
    import tensorflow as tf

    @tf.function
    def run(start: tf.Tensor) -> tf.Tensor:
        batch = draw(start) if draw is not None else None
        total = tf.constant(0.0)
        for u in tf.range(count):
            s = start + tf.cast(u, tf.int64)
            if batch is None:
                grads = update(s)
            else:
                moved = batch._replace(z=batch.z + 1e-30 * tf.cast(u, tf.float32))
                grads = update(s, moved)
            total += tf.add_n([tf.reduce_sum(g) for g in grads])
        return total

    return run


def seconds(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def alternately(timed: dict[str, Callable[[int], float]], repeats: int) -> Timing:
    """``repeats`` rounds of ``timed["private"](r)`` and ``timed["plain"](r)``, private first in
    even rounds and last in odd ones, after one warm-up call of each (its trace)."""
    for name in ("private", "plain"):
        timed[name](-1)
    timing = Timing()
    for r in range(repeats):
        for name in ("private", "plain") if r % 2 == 0 else ("plain", "private"):
            getattr(timing, name).append(timed[name](r))
    return timing


def time_updates(
    step: PrivateTrainStep, plain: TrainStep, repeats: int, updates: int
) -> tuple[Timing, int]:
    """Seconds a critic update, private and not (module doc); the private loop's traces."""
    import tensorflow as tf

    loops = {
        "private": looped(private_update(step), updates, step.batches.draw),
        "plain": looped(plain_update(plain), updates, plain.batches.draw),
    }
    start = 10**6  # any step number: the loops train nothing

    def timed(name: str) -> Callable[[int], float]:
        at = lambda r: tf.constant(start + (r + 1) * updates, tf.int64)  # noqa: E731
        return lambda r: seconds(lambda: loops[name](at(r)).numpy()) / updates

    timing = alternately({name: timed(name) for name in loops}, repeats)
    return timing, int(loops["private"].experimental_get_tracing_count())


def time_generator_steps(step: PrivateTrainStep, plain: TrainStep, repeats: int) -> Timing:
    """Seconds a generator step, private and not: calls of ``trainer.steps_per_call`` steps."""
    k = step.tc.steps_per_call
    steps = {"private": step, "plain": plain}
    return alternately(
        {
            name: lambda _, t=trainer: seconds(lambda: t.advance(k)) / k
            for name, trainer in steps.items()
        },
        repeats,
    )


def measure(cfg: Config, repeats: int, updates: int) -> Measured:
    """Both steps timed alternately (module doc) on ``cfg``'s private run."""
    step, plain = build_steps(cfg)
    update, update_traces = time_updates(step, plain, repeats, updates)
    generator_step = time_generator_steps(step, plain, repeats)
    traces = {
        "private training function": step.tracing_count(),
        "private chunk": int(step.clipped_chunk.experimental_get_tracing_count()),
        "private update loop": update_traces,
        "non-private training function": plain.tracing_count(),
    }
    return Measured(
        batch=cfg.trainer.batch_size,
        n_critic=cfg.trainer.n_critic,
        steps_per_call=cfg.trainer.steps_per_call,
        chunk_rows=step.chunk_size,
        expected_sample=float(sum(step.plan.expected)),
        update=update,
        generator_step=generator_step,
        traces=traces,
    )


def methods(cfg: Config, repeats: int, updates: int) -> list[str]:
    """Ways of computing one sample's clipped per-entity sum, and the parts of one private
    critic update: each ``updates`` times in one compiled loop (the Jacobian once), timed
    alternately; median [min, max] ms a computation over ``repeats`` rounds (the Jacobian's
    first 3)."""
    import tensorflow as tf

    from wgangp.step import ghost_clipping
    from wgangp.step.dp_sgd import clipped_sum, entity_gradients, gaussian_noise, real_row_terms
    from wgangp.step.private_step import SampleChunks

    step, plain = build_steps(cfg)
    critic, clip, gp = step.critic, step.plan.clip, step.gp.weight
    batch = step.batches.draw(tf.constant(0, tf.int64))
    real, onehot, alpha = batch.real[0], batch.onehot[0], batch.alpha[0]
    fake = step.generator([batch.z[0], onehot], training=True)
    rows, size = real.shape[0], step.chunk_size

    def moved(s: tf.Tensor) -> tf.Tensor:
        """The sample's rows, depending on the loop's counter (nothing hoisted out of it)."""
        return real + 1e-6 * tf.cast(s % 2, tf.float32)

    def jacobian(s: tf.Tensor) -> list[tf.Tensor]:
        def terms() -> tf.Tensor:
            return real_row_terms(critic, moved(s), fake, onehot, alpha, gp_weight=gp)

        weights = critic.trainable_variables
        return clipped_sum(entity_gradients(weights, terms, tf.range(rows), rows), clip)[0]

    def per_row(s: tf.Tensor) -> list[tf.Tensor]:
        variables = [v.value for v in critic.trainable_variables]

        def one(row: tuple[tf.Tensor, ...]) -> list[tf.Tensor]:
            with tf.GradientTape(watch_accessed_variables=False) as tape:
                tape.watch(variables)
                terms = tf.reduce_sum(real_row_terms(critic, *(t[None] for t in row), gp_weight=gp))
            return tape.gradient(terms, variables)

        return clipped_sum(tf.vectorized_map(one, (moved(s), fake, onehot, alpha)), clip)[0]

    def ghost(s: tf.Tensor) -> list[tf.Tensor]:
        return step.clipped_chunk(moved(s), fake, onehot, alpha, tf.ones([rows], tf.bool))

    def sample(s: tf.Tensor) -> list[tf.Tensor]:
        seed = step.secret_seed(s, 3)
        real, labels = step.pools.sample(step.plan.rates, seed, step.batches.alg)
        chunks = SampleChunks.of(real, labels, size)
        return [tf.reduce_sum(chunks.rows), tf.cast(chunks.count, tf.float32)]

    def paired(s: tf.Tensor) -> list[tf.Tensor]:
        z = tf.random.stateless_normal([size, step.batches.latent_dim], tf.stack([s, s]))
        return [step.generator([z, tf.one_hot(tf.zeros([size], tf.int32), 2)], training=True)]

    def fake_term(s: tf.Tensor) -> list[tf.Tensor]:
        public = (
            step.generator([batch.z[0], batch.onehot[0]], training=True)
            + tf.cast(s, tf.float32) * 1e-9
        )
        score_rows = ghost_clipping.score_row_gradients(step.dense_critic, public, batch.onehot[0])
        every = tf.ones([rows], tf.bool)
        return ghost_clipping.clipped_sum(step.dense_critic, score_rows, clip, every)[0]

    def noise(s: tf.Tensor) -> list[tf.Tensor]:
        return gaussian_noise(critic.trainable_variables, 1.0, tf.stack([s, s]))

    sampled = f"per-entity sum of {rows} rows"
    candidates = {
        f"{sampled}: Jacobian (dp_sgd.entity_gradients)": (jacobian, 1, 3, None),
        f"{sampled}: per-row tf.vectorized_map": (per_row, updates, repeats, None),
        f"{sampled}: ghost clipping (the trainer's)": (ghost, updates, repeats, None),
        f"non-private critic update, {rows} real + {rows} fake rows": (
            plain_update(plain),
            updates,
            repeats,
            plain.batches.draw,
        ),
        "private critic update, whole": (private_update(step), updates, repeats, step.batches.draw),
        "  its Poisson sample in chunks": (sample, updates, repeats, None),
        f"  its paired fake rows, one chunk of {size}": (paired, updates, repeats, None),
        "  its fake term (generator call, ghost clipping)": (fake_term, updates, repeats, None),
        "  its noise": (noise, updates, repeats, None),
    }
    compiled = {name: looped(fn, count, draw) for name, (fn, count, _, draw) in candidates.items()}
    timed: dict[str, list[float]] = {name: [] for name in compiled}
    start = tf.constant(0, tf.int64)
    for fn in compiled.values():
        fn(start).numpy()  # warm-up: the trace
    for r in range(repeats):
        for name, fn in compiled.items():
            _, count, rounds, _ = candidates[name]
            if r < rounds:
                timed[name].append(seconds(lambda f=fn, a=start + r: f(a).numpy()) / count)
    lines = [f"| batch {cfg.trainer.batch_size}: computation | ms |", "|---|---|"]
    lines += [f"| {name} | {spread(values)} |" for name, values in timed.items()]
    return lines


def spread(values: list[float], unit: float = 1e3) -> str:
    """Median [min, max], in ms."""
    shown = [v * unit for v in values]
    return f"{statistics.median(shown):.1f} [{min(shown):.1f}, {max(shown):.1f}]"


def table(results: list[Measured]) -> list[str]:
    lines = [
        "| batch | critic update, private (ms) | non-private (ms) | ratio | generator step, "
        "private (ms) | non-private (ms) | ratio | chunk rows (expected sample) | traces |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for m in results:
        u, g = m.update, m.generator_step
        traces = ", ".join(f"{name} {count}" for name, count in m.traces.items())
        lines.append(
            f"| {m.batch} | {spread(u.private)} | {spread(u.plain)} | "
            f"{statistics.median(u.ratios()):.2f}x | {spread(g.private)} | {spread(g.plain)} | "
            f"{statistics.median(g.ratios()):.2f}x | {m.chunk_rows} ({m.expected_sample:.0f}) | "
            f"{traces} |"
        )
    return lines


def machine() -> str:
    """CPU model and cores, from lscpu when there is one."""
    model = platform.processor() or "unknown CPU"
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        model = next(
            line.split(":", 1)[1].strip() for line in out.splitlines() if "Model name" in line
        )
    except (OSError, subprocess.CalledProcessError, StopIteration):
        pass
    return f"{model}, {os.cpu_count()} cores"


def load() -> str:
    return "/".join(f"{v:.2f}" for v in os.getloadavg())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data",
        type=Path,
        default=None,
        help=f"the table's path (default: {CREDIT.file} in $WGANGP_SHARED_DATA or ../shared/data)",
    )
    parser.add_argument("--batch-sizes", default="128,512")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--updates", type=int, default=10, help="critic updates a timed call")
    parser.add_argument("--methods", action="store_true", help="also time the alternatives")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(argv)
    args.data = args.data or CREDIT.path(shared_data_dir(None))
    if not args.data.exists():
        parser.error(f"{args.data}: no such table; give its path with --data")

    from wgangp.cli import quiet_tensorflow

    quiet_tensorflow()
    print(f"{date.today()}, {machine()}, load (1/5/15 min) before: {load()}")
    results = []
    for batch in (int(b) for b in args.batch_sizes.split(",")):
        cfg = compose_config(args.data, batch, args.set)
        results.append(measure(cfg, args.repeats, args.updates))
        if args.methods:
            print("\n".join(methods(cfg, args.repeats, args.updates)), flush=True)
    print(f"load after: {load()}")
    print("\n".join(table(results)))


if __name__ == "__main__":
    main()
