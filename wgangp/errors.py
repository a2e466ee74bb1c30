"""User-facing errors: each carries one line that names the problem and the fix.

The entry points catch :class:`WgangpError`, print its message as a single line and exit
non-zero; anything else is a bug and keeps its traceback.

The line never shows a secret (it often quotes a URL as typed): :func:`~wgangp.redaction.redact`.
"""

from __future__ import annotations

import sys
import traceback

from wgangp.redaction import redact


class WgangpError(Exception):
    """An error the user caused and can fix; ``str(err)`` is the one line shown."""

    exit_code = 2
    reason = "error"
    #: Shown after ``wgangp:`` on the line (an interruption is no error the user made).
    label = "error"


class ConfigError(WgangpError):
    """The configuration is invalid (unknown key, bad value)."""

    reason = "config"


class DataError(WgangpError):
    """The input data is missing, malformed or fails schema validation."""

    reason = "data"


class TrackingError(WgangpError):
    """The MLflow tracking store is unreachable or unusable."""

    reason = "tracking"


class NonFiniteError(WgangpError):
    """Training produced a non-finite loss or gradient (``trainer.on_nan=raise``)."""

    exit_code = 3
    reason = "nan"


def report_error(err: WgangpError, debug: bool = False) -> None:
    """Print the error as one line on stderr (plus the traceback with ``debug=true``), secrets
    redacted."""
    if debug:
        sys.stderr.write(redact("".join(traceback.format_exception(err))))
    message = redact(" ".join(str(err).split()))
    label = f"{err.label}: " if err.label else ""
    print(f"wgangp: {label}{message}", file=sys.stderr, flush=True)
