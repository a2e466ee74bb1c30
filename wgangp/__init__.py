"""wgangp: a conditional WGAN-GP that synthesizes the rare class of a table.

In Python (docs/api.md): ``wgangp.fit(frame, label=...)`` trains and returns a
:class:`~wgangp.serving.synthesizer.Synthesizer`; ``wgangp.load(model_uri)`` loads one. Both are
imported on first use, so ``import wgangp`` stays fast (TensorFlow loads with the first fit).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wgangp.api import fit, load
    from wgangp.errors import WgangpError
    from wgangp.serving.synthesizer import Synthesizer

__all__ = ["Synthesizer", "WgangpError", "fit", "load"]

_WHERE = {
    "fit": "wgangp.api",
    "load": "wgangp.api",
    "Synthesizer": "wgangp.serving.synthesizer",
    "WgangpError": "wgangp.errors",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'wgangp' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_WHERE[name]), name)
