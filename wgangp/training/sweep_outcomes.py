"""How each job of a Hydra sweep (``-m``) ended, so the sweep's exit code can say a job failed.

A failed job does not stop a sweep (its line is printed, its MLflow run FAILED, the next job
starts), and Hydra then exits 0 whatever happened. Each job appends one JSON line to a ledger the
launching process names in ``WGANGP_SWEEP_LEDGER`` (inherited by the joblib launcher's worker
processes; one short ``O_APPEND`` write per job); after the sweep the launcher reads it back and
ends non-zero with one line naming the failed jobs.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from wgangp.errors import WgangpError
from wgangp.redaction import redact

LEDGER_ENV = "WGANGP_SWEEP_LEDGER"


class SweepFailed(WgangpError):
    """One or more jobs of a sweep failed (each printed its own line when it did)."""

    reason = "sweep"


def open_ledger() -> Path:
    """A fresh, empty ledger for this launch, named in the environment for the jobs."""
    fd, name = tempfile.mkstemp(prefix="wgangp-sweep-", suffix=".jsonl")
    os.close(fd)
    os.environ[LEDGER_ENV] = name
    return Path(name)


def record_job(job: str, overrides: list[str], failure: str | None) -> None:
    """Append how one job ended (``failure``: its one line, None when it finished)."""
    name = os.environ.get(LEDGER_ENV)
    if not name:
        return
    entry = {"job": job, "overrides": overrides, "failure": failure}
    line = (json.dumps(entry) + "\n").encode()
    fd = os.open(name, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def close_ledger(path: Path) -> None:
    """Read the ledger, remove it, and raise :class:`SweepFailed` when a job failed (each named
    by the overrides that set it apart from the other jobs)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        lines = []
    finally:
        path.unlink(missing_ok=True)
        os.environ.pop(LEDGER_ENV, None)
    entries = [json.loads(line) for line in lines if line.strip()]
    failed = [e for e in entries if e.get("failure")]
    if not failed:
        return
    shared = set.intersection(*(set(e["overrides"]) for e in entries))
    names = ", ".join(
        f"#{e['job']} ({redact(' '.join(o for o in e['overrides'] if o not in shared)) or '-'})"
        for e in failed[:10]
    )
    more = f" and {len(failed) - 10} more" if len(failed) > 10 else ""
    raise SweepFailed(
        f"{len(failed)} of {len(entries)} sweep job(s) failed: {names}{more}; each job's line "
        "above says why (its MLflow run is FAILED)"
    )
