"""Peer: ydata-synthetic 1.4.0's CWGAN-GP on the fraud rows, timed as its own ``fit`` loop runs.

Runs in ``.bench-envs/ydata`` (TensorFlow 2.15, numpy<2) from the repo root, one JSON record a
``--size``. It times exactly its ``fit`` inner loop (``get_data_batch`` + ``train_step``), step by
step so warm-up and repeats are apart. Its conditional ``fit`` fails as shipped, so it is patched
(:func:`patch_shipped_fit`); for ``default``/``small`` its networks are replaced by the size's
MLPs (its API has only ``layers_dim``). Both are in the record; details: docs/benchmark.md.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from scripts.bench.peers.record import (
    SIZES,
    Contender,
    Record,
    Size,
    peer_main,
    peer_parser,
    time_interleaved,
    versions,
)
from scripts.bench.peers.rows import load_frame

if TYPE_CHECKING:
    import pandas as pd

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # before ydata_synthetic imports TF

SYSTEM, VARIANT = "ydata", "cwgangp-1.4.0"
#: Its credit-card example: batch 64, noise 32, layers_dim 128 (G 128-256-512, critic 512-256-128).
NATIVE = Size("native", (128, 256, 512), (512, 256, 128), latent=32, batch=64, n_critic=1)
NATIVE_LR, LAYERS_DIM = 5e-4, 128


def patch_shipped_fit(frame: pd.DataFrame) -> str:
    """Run its conditional ``fit`` as shipped on a few rows, then apply the one-line fix without
    which it cannot run; return how it failed."""
    from ydata_synthetic.synthesizers import ModelParameters, TrainParameters, base
    from ydata_synthetic.synthesizers.regular.cwgangp.model import CWGANGP

    synth = CWGANGP(ModelParameters(batch_size=8, noise_dim=4, layers_dim=4))
    num_cols = [c for c in frame.columns if c != "Class"]
    error = "none (fit ran unpatched)"
    try:
        synth.fit(frame.head(64), ["Class"], TrainParameters(epochs=0), num_cols, [])
    except Exception as err:  # noqa: BLE001 - the failure is the finding
        error = f"{type(err).__name__}: {err}"
    base.BaseModel.fit = base.BaseGANModel.fit
    return error


def patch_networks(gen_widths: tuple[int, ...], critic_widths: tuple[int, ...]) -> None:
    """Replace its pyramid networks by LeakyReLU MLPs of the benchmark size's widths."""
    from keras import Model
    from keras.layers import Dense, Input, LeakyReLU, concatenate
    from ydata_synthetic.synthesizers.regular.cwgangp import model as cw

    def build(batch_size, first_shape, label_shape, widths, n_out):
        first = Input(shape=first_shape, batch_size=batch_size)
        label = Input(shape=label_shape, batch_size=batch_size)
        x = concatenate([first, label])
        for width in widths:
            x = LeakyReLU(alpha=0.2)(Dense(width)(x))
        return Model(inputs=[first, label], outputs=Dense(n_out)(x))

    class Generator(cw.Generator):
        def build_model(self, input_shape, label_shape, dim, data_dim, **_):
            return build(self.batch_size, input_shape, label_shape, gen_widths, data_dim)

    class Critic(cw.Critic):
        def build_model(self, input_shape, label_shape, dim):
            return build(self.batch_size, input_shape, label_shape, critic_widths, 1)

    cw.Generator, cw.Critic = Generator, Critic


def measure(size: Size, frame: pd.DataFrame, args: argparse.Namespace, notes: list[str]) -> Record:
    """Its CWGAN-GP at one size: preprocessing timed apart, then its fit inner loop."""
    from ydata_synthetic.synthesizers import ModelParameters
    from ydata_synthetic.synthesizers.regular.cwgangp import model as cw

    notes = list(notes)
    if size is NATIVE:
        lr, settings = NATIVE_LR, {"layers_dim": LAYERS_DIM, "lr": NATIVE_LR}
        notes.append(
            "its own networks (G 128-256-512, critic 512-256-128 with dropout 0.1), "
            "settings of its credit-card CWGAN-GP example, n_critic=1 (its default)"
        )
    else:
        lr, settings = 1e-4, {}
        patch_networks(size.gen_widths, size.critic_widths)
        notes.append("networks replaced by the size's LeakyReLU MLPs (its API has only layers_dim)")

    num_cols = [c for c in frame.columns if c != "Class"]
    params = ModelParameters(
        batch_size=size.batch, lr=lr, betas=(0.5, 0.9), noise_dim=size.latent, layers_dim=LAYERS_DIM
    )
    synth = cw.CWGANGP(params, n_critic=size.n_critic)
    # fit()'s preamble, step for step, timed apart from training.
    start = time.perf_counter()
    data, label = synth._prep_fit(frame, ["Class"], num_cols, [])
    processed = synth.processor.transform(data)
    preprocess_s = round(time.perf_counter() - start, 3)
    synth.data_dim = processed.shape[1]
    synth.label_dim = 1
    optimizers = synth.define_gan(synth.processor.col_transform_info)
    processed = np.hstack([processed, label])

    first = synth.get_data_batch(processed, size.batch).numpy()
    same_rows = bool(np.array_equal(first, synth.get_data_batch(processed, size.batch).numpy()))
    notes.append(
        "verified defect: get_data_batch returns the SAME rows every step (seed=0 default)"
        if same_rows
        else "get_data_batch returned different rows on two calls"
    )
    notes.append("its n_critic critic updates reuse one real batch; GP norm over the whole batch")

    def run(steps: int) -> None:
        for _ in range(steps):  # its fit() inner loop, verbatim
            batch_x = synth.get_data_batch(processed, synth.batch_size)
            batch_x, lab = batch_x[:, : -synth.label_dim], batch_x[:, -synth.label_dim :]
            losses = synth.train_step((batch_x, lab), optimizers)
        float(losses[0])

    (timing,) = time_interleaved([Contender(run, args.steps, args.warmup)], args.repeats)
    flops = None
    try:
        from scripts.bench.peers.flops import count_flops

        sample = synth.get_data_batch(processed, size.batch)
        concrete = synth.update_gradients.get_concrete_function(
            (sample[:, :-1], sample[:, -1:]), *optimizers
        )
        flops = float(count_flops(concrete).flops)
    except Exception as err:  # noqa: BLE001 - the figure is optional, the reason is recorded
        notes.append(f"FLOPs not counted: {type(err).__name__}: {err}"[:200])

    record = Record.measured(
        timing,
        size,
        system=SYSTEM,
        variant=VARIANT + (" native" if size is NATIVE else ""),
        flops_per_gen_step=flops,
        settings={
            **settings,
            **versions("tensorflow", "numpy", "ydata_synthetic"),
            "preprocess_s": preprocess_s,
            "rows": len(frame),
        },
        notes=notes,
    )
    record.extra = {"preprocess_s": preprocess_s, "same_rows_every_step": same_rows}
    return record


def prepare(args: argparse.Namespace) -> Callable[[str], Record]:
    """Check and patch its shipped ``fit`` once; each size then starts from its own networks."""
    from ydata_synthetic.synthesizers.regular.cwgangp import model as cw

    shipped_networks = (cw.Generator, cw.Critic)
    notes: list[str] = []
    frame = load_frame(args.data, notes)
    shipped_error = patch_shipped_fit(frame)
    patched = "patched: BaseModel.fit = BaseGANModel.fit"
    notes.insert(0, f"{patched}; as shipped, fit raised {shipped_error}"[:240])

    def one(name: str) -> Record:
        cw.Generator, cw.Critic = shipped_networks
        record = measure(NATIVE if name == "native" else SIZES[name], frame, args, notes)
        record.extra["shipped_fit_error"] = shipped_error
        return record

    return one


if __name__ == "__main__":
    options = peer_parser("python -m scripts.bench.peers.ydata_cwgangp", __doc__.splitlines()[0])
    options.add_argument("--steps", type=int, default=100)
    options.add_argument("--repeats", type=int, default=3)
    options.add_argument("--warmup", type=int, default=10)
    peer_main(SYSTEM, VARIANT, options, prepare)
