"""``python -m wgangp.report``: the ablation table from MLflow, as markdown and CSV.

One row per run (variant x seed -> status, first NaN step and source, steps completed, final
Wasserstein estimate) and a per-variant summary; see :mod:`wgangp.tracking.ablation`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from wgangp.cli import flags_of
from wgangp.errors import ConfigError, TrackingError, WgangpError, report_error
from wgangp.tracking.ablation import collect, write_report
from wgangp.tracking.store import resolve_tracking_uri


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m wgangp.report",
        description="Tabulate MLflow runs: variant x seed -> status, first NaN step, steps "
        "completed, final Wasserstein estimate (markdown + CSV).",
        epilog="Every option is also key=value (experiment=nan_ablation, output_dir=DIR).",
    )
    parser.add_argument(
        "--tracking-uri",
        default=None,
        help="MLflow store (default: $MLFLOW_TRACKING_URI, else sqlite:///./mlflow.db)",
    )
    parser.add_argument("--experiment", default="wgangp", help="MLflow experiment name")
    parser.add_argument(
        "--filter",
        default="",
        help="MLflow search filter, e.g. \"tags.experiment = 'tf_norm_nan'\"",
    )
    parser.add_argument("--output-dir", type=Path, default=Path("reports"))
    parser.add_argument("--title", default="NaN ablation")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(flags_of(sys.argv[1:] if argv is None else argv, parser))
    except ConfigError as err:
        report_error(err)
        return err.exit_code
    try:
        uri = resolve_tracking_uri(args.tracking_uri, Path.cwd())
        rows = collect(uri, args.experiment, args.filter)
        if not rows:
            raise TrackingError(
                f"experiment {args.experiment!r} at {uri} has no runs"
                + (f" matching {args.filter!r}" if args.filter else "")
                + "; run the sweep first (scripts/ablation_sweep.sh)"
            )
        md_path, csv_path, markdown = write_report(rows, args.output_dir, args.title)
    except WgangpError as err:
        report_error(err)
        return err.exit_code
    print(markdown)
    print(f"wrote {md_path} and {csv_path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
