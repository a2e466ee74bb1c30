"""``python -m scripts.history_memory``: the peak memory of ``sample_histories`` per history,
measured against the estimate the product refuses draws by (:func:`wgangp.serving.memory.
draw_memory` with ``rows_each``: every padded slot of a history's window as a row).

A history model as training assembles one (networks untrained: the weights do not change the
arrays' shapes, only how many rows come back) on the tests' customer table, at each
``--max-length``; each draw runs in a fresh process at two sizes and the peak RSS growth between
them over the histories between is the cost of one. The estimate must not be below it.

    python -m scripts.history_memory [--max-length 16,64] [--histories 2000,8000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_DRAW = """
import json, resource, sys
sys.path.insert(0, sys.argv[1])
from support.histories import customer_transactions, untrained_history_synthesizer
from wgangp.serving.memory import draw_bytes_per_row
from wgangp.serving.histories import PHASES
model = untrained_history_synthesizer(customer_transactions(80, 28), sys.argv[3])
rows = len(model.sample_histories(int(sys.argv[2]), seed=0))
enc = model.encoding
first, cells, step = model.noise_shape
latent = -(-(first + cells * step) // enc.max_length)
width = enc.record_width + enc.attribute_width + PHASES + 1
estimate = draw_bytes_per_row(latent, width, len(model.columns)) * enc.max_length
print(json.dumps({"peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "rows": rows, "estimate": estimate}))
"""


def draw(histories: int, max_length: int) -> dict:
    """One draw in a fresh process: its peak RSS, rows and the per-history estimate."""
    done = subprocess.run(
        [sys.executable, "-c", _DRAW, str(REPO / "tests"), str(histories),
         f"history.max_length={max_length}"],
        capture_output=True, text=True, check=True, cwd=REPO,
    )  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-length", default="16,64")
    parser.add_argument("--histories", default="2000,8000")
    args = parser.parse_args()
    small, large = (int(n) for n in args.histories.split(","))
    print("| window | rows a history | measured bytes a history | estimate | estimate / measured |")
    print("|---|---|---|---|---|")
    for max_length in (int(x) for x in args.max_length.split(",")):
        low, high = draw(small, max_length), draw(large, max_length)
        measured = (high["peak_kib"] - low["peak_kib"]) * 1024 / (large - small)
        rows = (high["rows"] - low["rows"]) / (large - small)
        ratio = high["estimate"] / measured
        print(
            f"| {max_length} | {rows:.1f} | {measured:,.0f} | {high['estimate']:,} | {ratio:.2f} |"
        )


if __name__ == "__main__":
    main()
