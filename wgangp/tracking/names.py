"""MLflow metric names: ``section/name``, because the run page's charts group by what comes
before the first ``/`` (MLflow's convention).

Every module that logs or reads a metric takes its section from here, so no module writes a
prefix by hand and a section is renamed in one place. Tags keep dotted names (``nan.step``,
``selection.score``): tags are not charted.
"""

from __future__ import annotations

from collections.abc import Mapping

#: Per-step training curves, one point per window of ``tracking.log_every`` steps.
TRAIN = "train"
#: The training's summary, logged once at its last step: wall time, speed, skipped updates.
RUN = "run"
#: The step selection's probes of the validation split, every ``select.every`` steps.
VAL = "val"
#: The kept step's score, logged once.
SELECTION = "selection"
#: The test-split evaluation of what ships (end of run, or ``python -m wgangp.evaluate``).
EVAL = "eval"
#: The refit's own sections go under this one: ``refit/train/critic_loss``.
REFIT = "refit"

SEPARATOR = "/"


def metric(section: str, name: str) -> str:
    """``section/name``."""
    return f"{section}{SEPARATOR}{name}"


def in_section(section: str, metrics: Mapping[str, float]) -> dict[str, float]:
    """``metrics`` with every key put in ``section``."""
    return {metric(section, key): value for key, value in metrics.items()}


def section_of(key: str) -> str:
    """The section of ``key`` (``""`` when it has none)."""
    return key.split(SEPARATOR, 1)[0] if SEPARATOR in key else ""


def name_in(section: str, key: str) -> str:
    """The name of ``key`` without its ``section/`` (``key`` itself when it is not there)."""
    return key.removeprefix(section + SEPARATOR)


#: The metrics other modules read back by name.
CRITIC_LOSS = metric(TRAIN, "critic_loss")
WASSERSTEIN = metric(TRAIN, "wasserstein_estimate")
STEPS_PER_SEC = metric(RUN, "steps_per_sec")
WALL_TIME = metric(RUN, "wall_time_s")
NAN_STEP = metric(RUN, "nan_step")
VAL_SCORE = metric(VAL, "score")
SELECTION_SCORE = metric(SELECTION, "score")

#: A private run's guarantee (``privacy.epsilon``): the epsilon it spent and its delta.
PRIVACY = "privacy"
PRIVACY_EPSILON = metric(PRIVACY, "epsilon")
PRIVACY_DELTA = metric(PRIVACY, "delta")
