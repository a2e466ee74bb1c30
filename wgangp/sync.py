"""``python -m wgangp.sync <output dir> [tracking_uri=URI]``: send a run's kept tracking calls.

When the MLflow store was away during training, the calls it missed (metrics, tags, artifacts,
the model, the final status) are in ``<output dir>/tracking_outbox.jsonl``. This replays them, in
order, into the same MLflow run; metric points already there are skipped, so it is safe to run
twice. Whatever still fails stays in the outbox.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from wgangp.cli import flags_of
from wgangp.errors import ConfigError, WgangpError, report_error
from wgangp.tracking.outbox import sync_outbox
from wgangp.tracking.quiet import quiet_mlflow


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m wgangp.sync",
        description=__doc__.split("\n")[0],
        epilog="Every argument is also key=value (output_dir=DIR tracking_uri=URI).",
    )
    parser.add_argument("output_dir", type=Path, help="the training run's output directory")
    parser.add_argument("--tracking-uri", default=None, help="the store (default: the run's)")
    try:
        args = parser.parse_args(flags_of(sys.argv[1:] if argv is None else argv, parser))
    except ConfigError as err:
        report_error(err)
        sys.exit(err.exit_code)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    quiet_mlflow()
    try:
        sent = sync_outbox(args.output_dir, args.tracking_uri)
    except WgangpError as err:
        report_error(err)
        sys.exit(err.exit_code)
    print(f"synced {sent} call(s)")


if __name__ == "__main__":
    main()
