"""Do conditional rows read as the real rows of their slice? Moved rows against rejection's.

    python -m scripts.conditional_levels --runs OUT [--data DIR] [--min-real 20]

OUT is a tables benchmark's output folder run with ``--judge-on holdout`` (its ``runs/<table>-
seed<k>/synthesizer`` bundles; the held-out rows are carved again from each table's file with the
benchmark's own rule, so no row here was seen by training or by any step selection). For every
run, class and slice -- a categorical level, or the top 2% of a number column (a window above the
98th percentile of the held-out rows of that class) -- holding at least ``--min-real`` held-out
rows of that class, it draws as many rows under the slice's condition two ways:

- ``moved``: every row moved (:mod:`wgangp.serving.latent_moves` with ``moved_only``: what
  ``Synthesizer.sample(where=...)`` returns for the rows rejection's rounds did not find);
- ``rejection``: the unconditional rows filtered to the slice (:func:`.conditions.sample_where`),
  which may fail within its budget where the model rarely makes the slice;

and scores each against the slice's real rows by balanced detection (the benchmark's C2ST AUC;
0.5: cannot tell). Only slices the model makes in fewer than 1 row in MOVES (16) are judged:
above that share, ``sample`` returns rejection's rows. It prints one line per slice and the
paired difference (mean and standard error), with each way's generated rows per returned row.
docs/api.md keeps the figures.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

#: The window of a number column: rows above this quantile of the class's held-out rows.
TOP_QUANTILE = 0.98


@dataclass
class Slice:
    """One condition and the held-out rows of one class that meet it."""

    table: str
    seed: int
    klass: int
    where: dict
    real: pd.DataFrame

    @property
    def name(self) -> str:
        column, wanted = next(iter(self.where.items()))
        shown = wanted[0] if len(wanted) == 1 else f">= {wanted[0]:.4g}"
        return f"{column} {shown}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Path, required=True, help="the benchmark's output folder")
    parser.add_argument("--data", help="the shared data folder (default as the benchmark's)")
    parser.add_argument("--min-real", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)

    from scripts.tables_benchmark.tables import TABLES, shared_data_dir

    shared = shared_data_dir(args.data)
    results = []
    for run in sorted((args.runs / "runs").iterdir()):
        table, _, seed = run.name.rpartition("-seed")
        if table not in TABLES or not (run / "synthesizer").is_dir():
            continue
        spec = TABLES[table]
        results += judge_run(spec, shared, args.runs, int(seed), run, args)
    report(pd.DataFrame(results))


def judge_run(spec, shared: Path, out: Path, seed: int, run: Path, args) -> list[dict]:
    """Every slice of one run: its two draws, their detection and cost."""
    from scripts.tables_benchmark.split import _in_form, carve_holdout
    from wgangp.serving.synthesizer import Synthesizer

    synthesizer = Synthesizer.load(run / "synthesizer")
    with tempfile.TemporaryDirectory() as scratch:
        _, held = carve_holdout(spec, spec.path(shared, out), seed, Path(scratch))
    held = _in_form(held, synthesizer.schema)
    rows = []
    for piece in slices(spec.name, seed, synthesizer.schema, held, args.min_real):
        line = judge_slice(synthesizer, piece, args.repeats)
        rows.append(line)
        shown = f"{piece.table} seed{seed} class {piece.klass} {piece.name}"
        if np.isnan(line["moved"]):
            print(f"{shown}: model share {line['share']:.2%}, not judged", flush=True)
            continue
        print(
            f"{shown}: real {len(piece.real)}, model share {line['share']:.2%}, moved "
            f"{line['moved']:.3f} ({line['moved_rows_per_row']:.0f} rows/row, "
            f"{line['moved_s']:.2f} s), rejection {line['rejection']:.3f} "
            f"({line['rejection_rows_per_row']:.0f} rows/row)",
            flush=True,
        )
    return rows


def slices(table: str, seed: int, schema, held: pd.DataFrame, min_real: int) -> list[Slice]:
    """Each level and each number column's top window with enough held-out rows, per class."""
    features = [c.name for c in schema.features]
    classes = schema.classes(held[schema.label])
    found = []
    for klass in (1, 0):
        real = held.loc[classes == klass, features].reset_index(drop=True)
        for column in schema.features:
            values = real[column.name]
            if column.kind == "categorical":
                for level, count in values.value_counts().items():
                    if count >= min_real:
                        found.append(Slice(table, seed, klass, {column.name: [level]}, real))
            elif column.kind in ("continuous", "integer"):
                low = float(values.quantile(TOP_QUANTILE))
                if (values >= low).sum() >= min_real and values.nunique() > 20:
                    found.append(Slice(table, seed, klass, {column.name: [low, None]}, real))
    for piece in found:  # the real rows that meet the slice
        column, wanted = next(iter(piece.where.items()))
        values = piece.real[column]
        met = values.isin(wanted) if len(wanted) == 1 else values >= wanted[0]
        piece.real = piece.real[met.to_numpy()].reset_index(drop=True)
    return found


def judge_slice(synthesizer, piece: Slice, repeats: int) -> dict:
    """Both draws of one slice against its real rows."""
    from scripts.tables_benchmark import scores
    from wgangp.errors import WgangpError
    from wgangp.evaluation.encoding import TableEncoding
    from wgangp.serving.conditions import sample_where
    from wgangp.serving.latent_moves import MOVES, sample_conditioned
    from wgangp.serving.synthesizer import ClassLatent

    conditions = synthesizer.conditions(piece.where)
    count = len(piece.real)
    counted = _Counting(synthesizer)
    pilot = synthesizer.sample_class(200_000, piece.klass, seed=99)
    share = float(np.mean(np.all([c.met(pilot) for c in conditions], axis=0)))
    features = list(piece.real.columns)
    encoding = TableEncoding(synthesizer.schema, piece.real)
    real = encoding.model_matrix(piece.real)

    def detect(rows: pd.DataFrame) -> float:
        generated = encoding.model_matrix(rows.loc[:, features])
        return scores.detection(real, generated, repeats=repeats, gbm_max_iter=200, seed=0)

    line = {"table": piece.table, "seed": piece.seed, "class": piece.klass}
    line |= {"slice": piece.name, "real": count, "share": share}
    if share * MOVES >= 1:
        return line | {"moved": float("nan")}
    counted.reset()
    started = time.perf_counter()
    latent = ClassLatent(synthesizer, piece.klass, 8192)
    moved = sample_conditioned(latent, count, conditions, seed=1, moved_only=True)
    line["moved_s"] = time.perf_counter() - started
    line["moved_rows_per_row"] = counted.rows / count
    line["moved"] = detect(moved)
    counted.reset()
    draw = lambda rows, s: synthesizer.sample_class(rows, piece.klass, s)  # noqa: E731
    try:
        filtered = sample_where(draw, count, conditions, seed=1)
        line["rejection"] = detect(filtered)
    except WgangpError:
        line["rejection"] = float("nan")
    line["rejection_rows_per_row"] = counted.rows / count
    counted.restore()
    return line


class _Counting:
    """Counts the generator rows a synthesizer decodes (its ``generate_from``)."""

    def __init__(self, synthesizer) -> None:
        self.synthesizer, self.rows = synthesizer, 0
        self.original = synthesizer.generate_from

        def counted(z, *args, **kwargs):
            self.rows += len(z)
            return self.original(z, *args, **kwargs)

        synthesizer.generate_from = counted

    def reset(self) -> None:
        self.rows = 0

    def restore(self) -> None:
        self.synthesizer.generate_from = self.original


def report(frame: pd.DataFrame) -> None:
    judged = frame.dropna(subset=["moved"]) if "moved" in frame else frame.iloc[:0]
    print(f"\n{len(frame)} slices; {len(judged)} made by the model in < 1 row in 16: judged")
    if judged.empty:
        return
    both = judged.dropna(subset=["rejection"])
    print(
        f"moved {judged['moved'].mean():.3f}, rejection {both['rejection'].mean():.3f} (where it "
        f"found the rows); generated rows per row (medians): moved "
        f"{judged['moved_rows_per_row'].median():.0f}, rejection "
        f"{judged['rejection_rows_per_row'].median():.0f}"
    )
    for table, part in both.groupby("table"):
        diff = (part["moved"] - part["rejection"]).to_numpy()
        print(f"  {table}: {len(part)} slices, moved minus rejection {diff.mean():+.3f}")
    if len(both) > 1:
        diff = (both["moved"] - both["rejection"]).to_numpy()
        se = statistics.stdev(diff) / np.sqrt(len(diff))
        print(
            f"moved minus rejection, paired over {len(both)} slices: {diff.mean():+.3f} "
            f"± {se:.3f} s.e. (moved lower on {(diff < 0).sum()})"
        )
    print(f"rejection failed within its budget on {int(judged['rejection'].isna().sum())} slices")


if __name__ == "__main__":
    main()
