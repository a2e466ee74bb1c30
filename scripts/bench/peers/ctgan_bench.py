"""Peer: CTGAN 0.12.1 (PyTorch) on all the fraud rows; preprocessing timed apart from training.

Runs in ``.bench-envs/ctgan`` (CPU torch); prints one JSON record on stdout.

    .bench-envs/ctgan/bin/python -m scripts.bench.peers.ctgan_bench --json --size native

from the repo root, which puts ``scripts`` on the path (``scripts.bench.common`` is the only
project module it imports: numpy and the standard library).

Preprocessing = fitting its ``DataTransformer`` (a Bayesian GMM per continuous column) and
transforming the rows; it is done once, timed, and then handed to ``CTGAN.fit`` (its module's
``DataTransformer`` is replaced by a factory returning the fitted one) so that every timed
``fit(epochs=E)`` measures training only. Training runs whole epochs (its loop has no step hook):
``steps = epochs x len(rows) // batch`` generator steps, each with ``discriminator_steps`` critic
updates. ``--size native`` = its defaults (batch 500, 256-256, embedding 128, pac 10, 1 critic
step); ``default``/``small`` use the size's batch, widths, latent and n_critic with pac 8 (the
batch must be a multiple of pac). Its generator has residual blocks with batch norm and its rows
are wider after mode-specific normalization, so FLOPs per step differ from the naive loop's.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from typing import TYPE_CHECKING

from scripts.bench.common import (
    SIZES,
    Record,
    emit_json,
    read_frame,
    real_sample_path,
    time_steps,
    timing_record,
    versions,
)

if TYPE_CHECKING:
    import pandas as pd

NATIVE = {
    "batch": 500,
    "gen_widths": (256, 256),
    "critic_widths": (256, 256),
    "latent": 128,
    "n_critic": 1,
    "pac": 10,
}


def load_frame(args: argparse.Namespace, notes: list[str]) -> pd.DataFrame:
    path = real_sample_path(args.data)
    if path.is_file():
        frame = read_frame(path)
        notes.append(f"real rows: {len(frame)} from {path}")
    else:
        import pandas as pd

        from scripts.bench.common import simulated_rows

        rows = simulated_rows(30_172)
        frame = pd.DataFrame(rows.features, columns=[f"F{i}" for i in range(30)])
        frame["Class"] = rows.labels
        notes.append("SIMULATED DATA: real sample not found")
    if args.max_rows:
        frame = frame.sample(n=min(args.max_rows, len(frame)), random_state=0)
        notes.append(f"subsample of {len(frame)} rows (--max-rows)")
    return frame


def spec_for(size_name: str) -> tuple[dict, str]:
    if size_name == "native":
        return dict(
            NATIVE
        ), "its defaults: batch 500, G/D 256-256, embedding 128, pac 10, 1 critic step"
    size = SIZES[size_name]
    spec = {
        "batch": size.batch,
        "gen_widths": size.gen_widths,
        "critic_widths": size.critic_widths,
        "latent": size.latent,
        "n_critic": size.n_critic,
        "pac": 8,
    }
    return spec, "size's batch/widths/latent/n_critic; pac 8 (batch must be a multiple of pac)"


def measure(
    size_name: str, frame, args: argparse.Namespace, notes: list[str], prep: dict
) -> Record:
    """Training throughput at one size, with the transformer fitted beforehand."""
    import torch
    from ctgan import CTGAN

    spec, note = spec_for(size_name)
    notes = [*notes, note]
    steps_per_epoch = max(len(frame) // spec["batch"], 1)

    def make(epochs: int) -> CTGAN:
        return CTGAN(
            embedding_dim=spec["latent"],
            generator_dim=tuple(spec["gen_widths"]),
            discriminator_dim=tuple(spec["critic_widths"]),
            batch_size=spec["batch"],
            discriminator_steps=spec["n_critic"],
            pac=spec["pac"],
            epochs=epochs,
            enable_gpu=False,
        )

    def run(steps: int) -> None:
        make(max(1, math.ceil(steps / steps_per_epoch))).fit(frame, ["Class"])

    timing = time_steps(run, args.epochs * steps_per_epoch, args.repeats, warmup=1)
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

    record = timing_record(
        "ctgan",
        "ctgan-0.12.1" + (" native" if size_name == "native" else ""),
        size_name,
        timing,
        spec["batch"],
        spec["n_critic"],
        flops,
        {
            "gen_widths": list(spec["gen_widths"]),
            "critic_widths": list(spec["critic_widths"]),
            "latent": spec["latent"],
            "pac": spec["pac"],
            "rows": len(frame),
            "steps_per_epoch": steps_per_epoch,
            "torch_threads": torch.get_num_threads(),
            **versions("torch", "ctgan", "numpy"),
        },
        notes,
    )
    record.extra = dict(prep)
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m scripts.bench.peers.ctgan_bench", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--json", action="store_true", help="print JSON records (the default)")
    parser.add_argument(
        "--size",
        default="native",
        help="comma-separated: native, default, small (one record line each)",
    )
    parser.add_argument("--data", default=None)
    parser.add_argument("--epochs", type=int, default=2, help="epochs per timed repeat")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-rows", type=int, default=0, help="0 = all rows")
    parser.add_argument("--no-flops", action="store_true")
    args = parser.parse_args(argv)
    sizes = [s for s in args.size.split(",") if s]
    unknown = [s for s in sizes if s not in ("native", *SIZES)]
    if unknown:
        parser.error(f"unknown size(s) {unknown}")
    warnings.filterwarnings("ignore")

    from ctgan.data_transformer import DataTransformer
    from ctgan.synthesizers import ctgan as ctgan_module

    notes: list[str] = []
    frame = load_frame(args, notes)
    start = time.perf_counter()
    transformer = DataTransformer()
    transformer.fit(frame, ["Class"])
    fit_transformer_s = time.perf_counter() - start
    start = time.perf_counter()
    transformed = transformer.transform(frame)
    transform_s = time.perf_counter() - start
    notes.append(
        f"preprocessing (separate, not in throughput): DataTransformer.fit {fit_transformer_s:.1f}s"
        f" + transform {transform_s:.1f}s; {transformed.shape[1]} columns after encoding"
    )
    prep = {
        "preprocess_fit_s": round(fit_transformer_s, 3),
        "preprocess_transform_s": round(transform_s, 3),
        "encoded_columns": int(transformed.shape[1]),
    }

    class Prefitted:
        """Stands in for DataTransformer inside CTGAN.fit: already fitted, transform cached."""

        def __getattr__(self, name):
            return getattr(transformer, name)

        def fit(self, *_, **__):
            return None

        def transform(self, *_, **__):
            return transformed

    ctgan_module.DataTransformer = Prefitted
    status = 0
    for size_name in sizes:
        try:
            record = measure(size_name, frame, args, notes, prep)
        except Exception as err:  # noqa: BLE001 - the harness needs a record, not a traceback
            record = Record(
                "ctgan",
                "ctgan-0.12.1",
                size_name,
                status="failed",
                notes=[f"{type(err).__name__}: {err}"[:500]],
            )
            status = 1
        emit_json(record)
    return status


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as err:  # noqa: BLE001 - the harness needs a record, not a traceback
        emit_json(
            Record(
                "ctgan",
                "ctgan-0.12.1",
                "?",
                status="failed",
                notes=[f"{type(err).__name__}: {err}"[:500]],
            )
        )
        sys.exit(1)
