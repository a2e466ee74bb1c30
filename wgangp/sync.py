"""``python -m wgangp.sync <output dir> [--tracking-uri URI]``: send a run's kept tracking calls.

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

from wgangp.cli import report_error
from wgangp.errors import TrackingError, WgangpError
from wgangp.outbox import OUTBOX_FILE, Outbox

log = logging.getLogger("wgangp.sync")


def sync(output_dir: Path, tracking_uri: str | None = None) -> int:
    """Replay ``output_dir``'s outbox; returns the number of calls sent."""
    from mlflow.tracking import MlflowClient

    from wgangp.tracking import HTTP_RETRY_DEFAULTS, check_reachable, redact, replay

    outbox = Outbox(Path(output_dir) / OUTBOX_FILE)
    entries = list(outbox.entries())
    if not entries:
        log.info("nothing to sync: no kept tracking calls in %s", outbox.path)
        return 0
    uri = tracking_uri or entries[0].get("tracking_uri")
    if not uri or "***" in uri:
        raise TrackingError(
            f"{outbox.path} does not name a usable tracking store; pass --tracking-uri URI"
        )
    check_reachable(uri)
    if uri.startswith(("http://", "https://")):
        import os

        for name, value in HTTP_RETRY_DEFAULTS.items():
            os.environ.setdefault(name, value)
    sent, remaining = replay(outbox, MlflowClient(tracking_uri=uri), uri)
    if remaining:
        raise TrackingError(
            f"sent {sent} of {len(entries)} kept call(s) to {redact(uri)}, then the store failed; "
            f"the other {len(remaining)} stay in {outbox.path}: run this again later"
        )
    log.info("sent %d kept tracking call(s) to %s", sent, redact(uri))
    return sent


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m wgangp.sync", description=__doc__.split("\n")[0]
    )
    parser.add_argument("output_dir", type=Path, help="the training run's output directory")
    parser.add_argument("--tracking-uri", default=None, help="the store (default: the run's)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        sent = sync(args.output_dir, args.tracking_uri)
    except WgangpError as err:
        report_error(err)
        sys.exit(err.exit_code)
    print(f"synced {sent} call(s)")


if __name__ == "__main__":
    main()
