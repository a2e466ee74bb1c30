"""Secrets never reach params, tags, artifacts, logs or error lines: their values become ``***``.

What a secret is (a URL's user info and secret query values, the credentials' values) is
:mod:`wgangp.redaction`'s; here :func:`~wgangp.redaction.redact` is applied to files
(:func:`scrub_secrets`) and to log records (:class:`RedactingFilter`), whoever logs them.
"""

from __future__ import annotations

import logging
from pathlib import Path

from wgangp.files import write_text
from wgangp.redaction import redact


def scrub_secrets(directory: Path) -> None:
    """Rewrite the text files under ``directory`` with :func:`redact` applied, where it changes."""
    for path in Path(directory).rglob("*"):
        if not path.is_file() or path.stat().st_size > 1_000_000:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        clean = redact(text)
        if clean != text:
            write_text(path, clean)


class RedactingFilter(logging.Filter):
    """Redacts a record before any handler writes it: a URL reaches the log through a library's
    message or an exception as often as through ours."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: logging reports it when it formats it
            return True
        # Rendered once and stored back: every handler and formatter then sees the clean text.
        record.msg, record.args = redact(message), ()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


_FILTER = RedactingFilter()


def redact_logs() -> None:
    """Put :class:`RedactingFilter` on every handler configured now (the root logger's, as
    Hydra's job logging sets them up: the console and ``train.log``; any library logger's own),
    and on logging's last-resort handler; a handler that has it already is left alone."""
    loggers = [logging.getLogger()] + [
        logger for logger in logging.Logger.manager.loggerDict.values()
        if isinstance(logger, logging.Logger)
    ]  # fmt: skip
    handlers = [handler for logger in loggers for handler in logger.handlers]
    if logging.lastResort is not None:
        handlers.append(logging.lastResort)
    for handler in handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(_FILTER)
