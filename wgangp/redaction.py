"""What is a secret in text: a URL's user info and secret query values, and the secret
environment variables' values. :func:`redact` replaces them by ``***``.

It sits in the lowest layer so that the one error line (:func:`wgangp.errors.report_error`) is
redacted too; :mod:`wgangp.tracking.secrets` applies it to files and log records.
"""

from __future__ import annotations

import os
import re
from typing import Any

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

#: URL query parameters whose values are secrets (compared lower-cased): presigned S3 and GCS
#: URLs, Azure SAS, OAuth, the usual API keys.
SECRET_PARAMS = frozenset(
    {
        "x-amz-signature",
        "x-amz-credential",
        "x-amz-security-token",
        "x-goog-signature",
        "x-goog-credential",
        "sig",
        "signature",
        "token",
        "access_token",
        "id_token",
        "refresh_token",
        "key",
        "api_key",
        "apikey",
        "password",
        "passwd",
        "pwd",
        "secret",
        "client_secret",
        "auth",
        "credential",
        "code",
    }
)
#: Any parameter named ``...token``, ``...secret``, ``...signature``, ``...password``, ``...key``.
SECRET_PARAM_SUFFIXES = ("token", "secret", "signature", "password", "key")

#: A URL inside text: from its scheme to the first space, quote, backquote or angle bracket (what
#: ends a URL in a log line, a YAML or JSON string, an error line).
_URL = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>`]*")
#: A URL's user info, up to the authority's last ``@`` (a password may hold one).
_USER_INFO = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)[^/?#\s'\"<>`]*@")
#: One ``name=value`` of a URL's query (or fragment, where OAuth puts its tokens).
_PARAM = re.compile(r"(?<=[?&;#])(?P<name>[^=&;#/?\s]+)=(?P<value>[^&;#\s'\"<>`]*)")


def is_secret_param(name: str) -> bool:
    """Whether a URL query parameter called ``name`` carries a secret."""
    name = name.lower()
    return name in SECRET_PARAMS or name.endswith(SECRET_PARAM_SUFFIXES)


def _masked_param(match: re.Match[str]) -> str:
    if not match["value"] or not is_secret_param(match["name"]):
        return match[0]
    return f"{match['name']}=***"


def _redact_url(match: re.Match[str]) -> str:
    url = _USER_INFO.sub(r"\g<scheme>***@", match[0])
    return _PARAM.sub(_masked_param, url) if "=" in url else url


def redact(value: Any) -> Any:
    """``value`` (a str) with the secret environment variables' values, the user info of each
    URL in it and the values of its URLs' secret query parameters replaced by ``***``; anything
    else (text outside URLs, a non-str) as it is. Cheap on text without ``://``: it runs on
    every MLflow param and tag."""
    if not isinstance(value, str):
        return value
    if "://" in value:
        value = _URL.sub(_redact_url, value)
    for name in SECRET_ENV_VARS:
        secret = os.environ.get(name)
        if secret and len(secret) >= 4 and secret in value:
            value = value.replace(secret, "***")
    return value
