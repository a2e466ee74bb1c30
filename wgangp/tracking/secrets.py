"""Secrets never reach params, tags, artifacts, logs or error lines: their values become ``***``.

What a secret is (a URL's user info and secret query values, the credentials' values) is
:mod:`wgangp.redaction`'s; here :func:`~wgangp.redaction.redact` is applied to files
(:func:`scrub_secrets`) and to log records (:class:`RedactingFilter`), whoever logs them. A
tracking server's password never stays in a URI MLflow holds (:func:`credentials_to_environment`):
MLflow prints that URI itself, out of any log, when a run ends.
"""

from __future__ import annotations

import logging
import os
import urllib.parse
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


#: Where MLflow reads a tracking server's basic-auth credentials besides the URI.
USERNAME_VAR, PASSWORD_VAR = "MLFLOW_TRACKING_USERNAME", "MLFLOW_TRACKING_PASSWORD"


def credentials_to_environment(uri: str) -> str:
    """``uri`` (an ``http(s)://user:password@host`` URL) without its user info, the user name
    and password moved to ``MLFLOW_TRACKING_USERNAME`` / ``MLFLOW_TRACKING_PASSWORD``, and
    ``$MLFLOW_TRACKING_URI`` rewritten the same way when it held that URI.

    MLflow writes the URI it holds to stdout when a run ends ("View run ... at: <uri>"), with
    ``print``, not a logger: only a URI without the password keeps it off the screen. MLflow sends
    the two variables as the same basic auth. Both set already, they win, as they did over the
    URI's user info; one alone MLflow never sent, so the URI's pair replaces it. Any other URI is
    returned as it is."""
    parts = urllib.parse.urlsplit(uri)
    if parts.scheme not in ("http", "https") or parts.password is None:
        return uri
    if basic_auth() is None:
        os.environ[USERNAME_VAR] = urllib.parse.unquote(parts.username or "")
        os.environ[PASSWORD_VAR] = urllib.parse.unquote(parts.password)
    bare = urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
    if os.environ.get("MLFLOW_TRACKING_URI") == uri:
        os.environ["MLFLOW_TRACKING_URI"] = bare
    return bare


def basic_auth() -> tuple[str, str] | None:
    """The basic-auth credentials MLflow sends to a tracking server from the environment."""
    user, password = os.environ.get(USERNAME_VAR), os.environ.get(PASSWORD_VAR)
    return (user, password) if user and password else None
