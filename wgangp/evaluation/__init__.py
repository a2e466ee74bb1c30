"""Evaluation of synthetic fraud rows: fidelity, detectability, utility against SMOTE, privacy.

Importing this package stays cheap (the config schema imports :mod:`.settings`); the heavy parts
(scikit-learn, matplotlib) load on first use of :func:`run_evaluation`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wgangp.evaluation.settings import EvaluateConfig

if TYPE_CHECKING:
    from wgangp.evaluation.run import EvaluationResult, run_evaluation

__all__ = ["EvaluateConfig", "EvaluationResult", "run_evaluation"]


def __getattr__(name: str) -> Any:
    if name in ("EvaluationResult", "run_evaluation"):
        from wgangp.evaluation import run

        return getattr(run, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
