"""Peer: CTGAN 0.12.1 (PyTorch) on all the fraud rows; preprocessing timed apart from training.

Runs in ``.bench-envs/ctgan`` (CPU torch) from the repo root, one JSON record a ``--size``. Its
``DataTransformer`` is fitted once, timed, and handed to every timed ``CTGAN.fit(epochs=E)`` so
that they measure training only; ``steps = epochs x len(rows) // batch``. What ``native`` and the
sizes mean for it: docs/benchmark.md.
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

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

SYSTEM, VARIANT = "ctgan", "ctgan-0.12.1"
NATIVE = Size("native", (256, 256), (256, 256), latent=128, batch=500, n_critic=1)
NATIVE_NOTE = "its defaults: batch 500, G/D 256-256, embedding 128, pac 10, 1 critic step"
SIZE_NOTE = "size's batch/widths/latent/n_critic; pac 8 (batch must be a multiple of pac)"


def measure(size: Size, frame: pd.DataFrame, args: argparse.Namespace, notes: list[str]) -> Record:
    """Training throughput at one size, with the transformer fitted beforehand."""
    import torch
    from ctgan import CTGAN

    pac = 10 if size is NATIVE else 8
    notes = [*notes, NATIVE_NOTE if size is NATIVE else SIZE_NOTE]
    steps_per_epoch = max(len(frame) // size.batch, 1)

    def make(epochs: int) -> CTGAN:
        return CTGAN(
            embedding_dim=size.latent,
            generator_dim=size.gen_widths,
            discriminator_dim=size.critic_widths,
            batch_size=size.batch,
            discriminator_steps=size.n_critic,
            pac=pac,
            epochs=epochs,
            enable_gpu=False,
        )

    def run(steps: int) -> None:
        make(max(1, math.ceil(steps / steps_per_epoch))).fit(frame, ["Class"])

    contender = Contender(run, args.epochs * steps_per_epoch, warmup=1)
    (timing,) = time_interleaved([contender], args.repeats)
    flops = None
    if not args.no_flops:
        try:
            from torch.utils.flop_counter import FlopCounterMode

            counter = FlopCounterMode(display=False)
            with counter:
                make(1).fit(frame, ["Class"])
            flops = counter.get_total_flops() / steps_per_epoch
            notes.append("FLOPs: torch FlopCounterMode over one epoch / steps per epoch")
        except Exception as err:  # noqa: BLE001 - optional figure; the reason is recorded
            notes.append(f"FLOPs not counted: {type(err).__name__}: {err}"[:200])
    notes.append("each timed repeat is one CTGAN.fit(epochs) call: includes its per-fit setup")
    return Record.measured(
        timing,
        size,
        system=SYSTEM,
        variant=VARIANT + (" native" if size is NATIVE else ""),
        flops_per_gen_step=flops,
        settings={
            "pac": pac,
            "rows": len(frame),
            "steps_per_epoch": steps_per_epoch,
            "torch_threads": torch.get_num_threads(),
            **versions("torch", "ctgan", "numpy"),
        },
        notes=notes,
    )


def prefit(frame: pd.DataFrame, notes: list[str]) -> dict[str, Any]:
    """Fit and apply its ``DataTransformer`` once, timed; ``CTGAN.fit`` then gets it fitted."""
    from ctgan.data_transformer import DataTransformer
    from ctgan.synthesizers import ctgan as ctgan_module

    start = time.perf_counter()
    transformer = DataTransformer()
    transformer.fit(frame, ["Class"])
    fit_s = time.perf_counter() - start
    start = time.perf_counter()
    transformed = transformer.transform(frame)
    transform_s = time.perf_counter() - start
    notes.append(
        f"preprocessing (separate, not in throughput): DataTransformer.fit {fit_s:.1f}s"
        f" + transform {transform_s:.1f}s; {transformed.shape[1]} columns after encoding"
    )
    # What CTGAN.fit makes and fits is this one, already fitted, its transform cached.
    transformer.fit = lambda *_, **__: None
    transformer.transform = lambda *_, **__: transformed
    ctgan_module.DataTransformer = lambda: transformer
    return {
        "preprocess_fit_s": round(fit_s, 3),
        "preprocess_transform_s": round(transform_s, 3),
        "encoded_columns": int(transformed.shape[1]),
    }


def prepare(args: argparse.Namespace) -> Callable[[str], Record]:
    """Read the rows (``--max-rows`` of them) and fit the transformer once for every size."""
    warnings.filterwarnings("ignore")
    notes: list[str] = []
    frame = load_frame(args.data, notes)
    if args.max_rows:
        frame = frame.sample(n=min(args.max_rows, len(frame)), random_state=0)
        notes.append(f"subsample of {len(frame)} rows (--max-rows)")
    prep = prefit(frame, notes)

    def one(name: str) -> Record:
        record = measure(NATIVE if name == "native" else SIZES[name], frame, args, notes)
        record.extra = dict(prep)
        return record

    return one


if __name__ == "__main__":
    options = peer_parser("python -m scripts.bench.peers.ctgan_bench", __doc__.splitlines()[0])
    options.add_argument("--epochs", type=int, default=2, help="epochs per timed repeat")
    options.add_argument("--repeats", type=int, default=3)
    options.add_argument("--max-rows", type=int, default=0, help="0 = all rows")
    options.add_argument("--no-flops", action="store_true")
    peer_main(SYSTEM, VARIANT, options, prepare)
