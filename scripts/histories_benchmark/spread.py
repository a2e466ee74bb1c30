"""How far real data is from itself: the real training customers scored as a system over many
customer splits, with no training, so a single seed's ratio can be read against real data's own
spread at the tables' sizes.

    python -m scripts.histories_benchmark.spread [--tables own,synccfd,aml] [--splits 12]
        [--data DIR]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from scripts.histories_benchmark.split import entity_split
from scripts.histories_benchmark.tables import TABLES, chosen_tables, data_dir, ensure_table
from scripts.histories_benchmark.tables import read_table as read_history_table
from wgangp.histories.behavior import behavioral_fidelity


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.histories_benchmark.spread")
    parser.add_argument("--tables", default=",".join(TABLES))
    parser.add_argument("--splits", type=int, default=12)
    parser.add_argument("--data", default=None)
    args = parser.parse_args(argv)
    folder = data_dir(args.data, Path("histories-benchmark").resolve())
    print(
        "| table | splits | real training customers' geo. mean: min - max | median | "
        "geometric mean |\n|---|---|---|---|---|"
    )
    for table in chosen_tables(args.tables):
        frame = read_history_table(table, ensure_table(table, folder))
        ratios = []
        for seed in range(args.splits):
            split = entity_split(frame, table.cols, seed)
            figures = behavioral_fidelity(split.test, split.floor, split.train, table.cols, seed)
            ratios.append(figures["geometric_mean"])
        ratios = np.array(ratios)
        print(
            f"| {table.name} | {args.splits} | {ratios.min():.2f} - {ratios.max():.2f} | "
            f"{np.median(ratios):.2f} | {np.exp(np.log(ratios).mean()):.2f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
