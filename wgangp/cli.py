"""Command-line helpers shared by the entry points: override checks and one-line error reports."""

from __future__ import annotations

import difflib
import logging
import sys
import traceback
from collections.abc import Iterable
from typing import Any

from omegaconf import OmegaConf

from wgangp.errors import ConfigError, WgangpError

log = logging.getLogger("wgangp")

#: Top-level config groups selected as ``group=option`` (not dotted keys).
_GROUPS = {"data", "model", "trainer", "tracking", "gp", "preprocess", "evaluate", "experiment"}


def _schema_keys() -> set[str]:
    from wgangp.config import Config

    keys: set[str] = set()

    def walk(prefix: str, node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                full = f"{prefix}.{key}" if prefix else str(key)
                keys.add(full)
                walk(full, value)

    walk("", OmegaConf.to_container(OmegaConf.structured(Config)))
    return keys


def check_overrides(argv: Iterable[str]) -> None:
    """Reject ``trainer.stepz=5`` before Hydra starts, naming the closest valid key.

    Only plain ``key=value`` overrides are checked; ``+key``, ``~key``, ``hydra.*`` and group
    selections (``data=simulated``) are left to Hydra.
    """
    keys = _schema_keys()
    for arg in argv:
        if arg.startswith("-") or "=" not in arg:
            continue
        key = arg.split("=", 1)[0]
        if key.startswith(("+", "~", "hydra.", "hydra/")) or "/" in key:
            continue
        if key in keys or (key in _GROUPS and "." not in key):
            continue
        suggestion = difflib.get_close_matches(key, sorted(keys), n=1)
        hint = f"did you mean '{suggestion[0]}'?" if suggestion else "see conf/ for the valid keys"
        raise ConfigError(f"unknown config key '{key}' in override '{arg}'; {hint}")


def report_error(err: WgangpError, debug: bool = False) -> None:
    """Print the error as one line on stderr (plus the traceback with ``debug=true``)."""
    if debug:
        traceback.print_exception(err)
    message = " ".join(str(err).split())
    print(f"wgangp: error: {message}", file=sys.stderr, flush=True)
