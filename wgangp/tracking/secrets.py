"""Secrets never reach params, tags, artifacts, logs or error lines: their values become ``***``."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from wgangp.files import write_text

#: Environment variables whose values must never be shown or logged.
SECRET_ENV_VARS = (
    "KAGGLE_USERNAME",
    "KAGGLE_KEY",
    "KAGGLE_API_TOKEN",
    "MLFLOW_TRACKING_TOKEN",
    "MLFLOW_TRACKING_USERNAME",
    "MLFLOW_TRACKING_PASSWORD",
    "DATABRICKS_TOKEN",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
)

_URI_PASSWORD = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<user>[^/@:\s]*):[^/@\s]*@")


def redact(value: Any) -> Any:
    """``value`` (a str) with secrets' values and passwords inside URIs replaced by ``***``."""
    if not isinstance(value, str):
        return value
    value = _URI_PASSWORD.sub(r"\g<scheme>\g<user>:***@", value)
    for name in SECRET_ENV_VARS:
        secret = os.environ.get(name)
        if secret and len(secret) >= 4 and secret in value:
            value = value.replace(secret, "***")
    return value


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
