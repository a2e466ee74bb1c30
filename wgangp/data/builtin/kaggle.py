"""Download Kaggle's credit-card fraud file with the ``kaggle`` package, imported lazily.

``import kaggle`` authenticates on import (and older releases call ``exit(1)`` when that fails), so
it happens only inside :func:`download_creditcard`, and every failure becomes one DataError line.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wgangp.errors import DataError
from wgangp.redaction import redact

DATASET = "mlg-ulb/creditcardfraud"
CSV_NAME = "creditcard.csv"
ARCHIVE_NAME = "creditcardfraud.zip"
_FIX = (
    "set KAGGLE_USERNAME and KAGGLE_KEY (or ~/.kaggle/kaggle.json), "
    "or download creditcard.csv yourself and pass data.path=/path/to/creditcard.csv, "
    "or use data=simulated"
)


def kaggle_credentials_available(
    env: Mapping[str, str] | None = None, home: Path | None = None
) -> bool:
    """True when the kaggle package (2.2) would find credentials, checked without importing it.

    Mirrors kaggle 2.2's lookup: KAGGLE_USERNAME + KAGGLE_KEY, KAGGLE_API_TOKEN, the access-token
    and OAuth files in ~/.kaggle, and kaggle.json in KAGGLE_CONFIG_DIR, else ~/.kaggle (when it
    exists), else $XDG_CONFIG_HOME/kaggle (default ~/.config/kaggle).
    """
    env = os.environ if env is None else env
    home = Path(os.path.expanduser("~")) if home is None else Path(home)
    if env.get("KAGGLE_USERNAME") and env.get("KAGGLE_KEY"):
        return True
    if env.get("KAGGLE_API_TOKEN"):
        return True
    legacy_dir = home / ".kaggle"
    token_files = ("access_token", "access_token.txt", "credentials.json")
    if any(_non_empty_file(legacy_dir / name) for name in token_files):
        return True
    if env.get("KAGGLE_CONFIG_DIR"):
        config_dir = Path(env["KAGGLE_CONFIG_DIR"])
    elif legacy_dir.exists():
        config_dir = legacy_dir
    else:
        config_dir = Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "kaggle"
    return _non_empty_file(config_dir / "kaggle.json")


def download_creditcard(cache_dir: Path) -> Path:
    """Return ``cache_dir/creditcard.csv``, downloading it from Kaggle first when absent."""
    cache_dir = Path(cache_dir)
    cached = cache_dir / CSV_NAME
    if cached.is_file():
        return cached
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise DataError(
            f"cannot create the Kaggle download folder {cache_dir} ({err.strerror}); "
            f"make it writable, or {_FIX}"
        ) from err

    api = _kaggle_api()
    try:
        api.dataset_download_files(DATASET, path=str(cache_dir), unzip=True)
    except (Exception, SystemExit) as err:
        raise DataError(
            f"downloading {DATASET} from Kaggle failed ({_describe(err)}); check the network "
            f"and your Kaggle credentials, or {_FIX}"
        ) from err

    if cached.is_file():
        return cached
    if (cache_dir / ARCHIVE_NAME).is_file():
        return cache_dir / ARCHIVE_NAME
    raise DataError(
        f"the Kaggle download of {DATASET} finished but {CSV_NAME} is not in {cache_dir}; "
        f"delete that folder and retry, or {_FIX}"
    )


def _kaggle_api() -> Any:
    """Import kaggle (which authenticates), hiding its printed help and trapping its exit()."""
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            kaggle = importlib.import_module("kaggle")
    except ImportError as err:
        raise DataError(
            f"cannot import the kaggle package ({_describe(err)}); install it with "
            f"`pip install 'kaggle>=2.2,<2.3' six`, or {_FIX}"
        ) from err
    except (Exception, SystemExit) as err:
        raise DataError(f"Kaggle authentication failed ({_describe(err)}); {_FIX}") from err
    api = getattr(kaggle, "api", None)
    if api is None or getattr(api, "_authenticated", True) is False:
        raise DataError(f"Kaggle found no valid credentials; {_FIX}")
    return api


def _describe(err: BaseException) -> str:
    """The exception as a short single line, with any credential value masked."""
    text = f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
    text = " ".join(redact(text).split())
    return text if len(text) <= 200 else text[:197] + "..."


def _non_empty_file(path: Path) -> bool:
    try:
        return path.is_file() and path.stat().st_size > 0
    except OSError:
        return False
