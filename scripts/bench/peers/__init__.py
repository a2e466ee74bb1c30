"""What runs in the peers' own environments (``setup_envs.sh``): the peers, one module each, and
what they share with the harness (``record``, ``rows``, ``flops``). Nothing here imports
``wgangp`` or the rest of ``scripts``; the harness starts the peers in :func:`envs_dir`."""

from __future__ import annotations

import os
from pathlib import Path


def envs_dir() -> Path:
    """Where ``setup_envs.sh`` puts the peers' environments (it reads the same variable)."""
    default = Path(__file__).resolve().parents[3] / ".bench-envs"
    return Path(os.environ.get("WGANGP_BENCH_ENVS", default))
