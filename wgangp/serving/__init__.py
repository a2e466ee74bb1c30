"""The trained generator as a product: its saved bundle and where to find it, the synthesizer that
draws rows in original units, and the MLflow pyfunc model ``sampler`` that serves them."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    # Models logged by earlier versions carry a code file that imports SamplerModel from here.
    if name == "SamplerModel":
        from wgangp.serving.pyfunc import SamplerModel

        return SamplerModel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
