"""The MLflow Model Registry: a run's selected generator as a version of a registered model, and
the ``champion`` alias that follows the best validation score.

``tracking.register_as=NAME`` queues one ``register`` call after the run's pyfunc model (so an
outage journals it and ``python -m wgangp.sync`` replays it). The call registers the model named
by the run's ``model.uri`` tag, tags the version with the run's selection (``selection.score``,
``selection.step``, ``selection.metric``) and moves ``champion`` to it only when there is no
champion yet or its score is strictly lower (the scores are validation detection AUCs or KS
means: lower is better). A champion scored by another metric is not comparable: it stays, with a
warning. A replay finds the version it registered before instead of adding a second one.
"""

from __future__ import annotations

import logging
import math
from typing import Any, NamedTuple

from wgangp.tracking.store import use_tracking_uri

log = logging.getLogger("wgangp.tracking")

CHAMPION = "champion"
SCORE_TAG = "selection.score"
STEP_TAG = "selection.step"
METRIC_TAG = "selection.metric"


class Registration(NamedTuple):
    version: str
    champion: bool  # the alias points at this version now


def register_run_model(
    client,
    tracking_uri: str | None,
    run_id: str,
    model_uri: str,
    name: str,
    score: float | None,
    step: int | None,
    metric: str | None,
) -> Registration:
    """Register ``model_uri`` (logged by ``run_id``) as a version of ``name``; move the champion
    when this version's score beats it. Idempotent per run."""
    import mlflow

    tags = {METRIC_TAG: metric or "none", SCORE_TAG: _text(score), STEP_TAG: _text(step)}
    existing = client.search_model_versions(f"name='{name}' and run_id='{run_id}'")
    if existing:
        version = str(existing[0].version)
    else:
        with use_tracking_uri(tracking_uri or mlflow.get_tracking_uri()):
            registered = mlflow.register_model(model_uri, name, tags=tags)
        version = str(registered.version)
    champion = _current_champion(client, name)
    held_by = str(champion.version) if champion is not None else None  # int or str by store
    moves = champion is None or (
        held_by != version and beats(score, metric, champion.tags, name, held_by)
    )
    if moves:
        client.set_registered_model_alias(name, CHAMPION, version)
    is_champion = moves or held_by == version
    client.set_tag(run_id, "registry.model", name)
    client.set_tag(run_id, "registry.version", version)
    client.set_tag(run_id, "registry.champion", str(is_champion).lower())
    log.info(
        "registered %s version %s%s",
        name, version, f"; alias {CHAMPION} -> {version}" if moves else f"; {CHAMPION} stays",
    )  # fmt: skip
    return Registration(version, is_champion)


def beats(
    score: float | None, metric: str | None, champion_tags: dict[str, str], name: str, version: str
) -> bool:
    """True when ``score`` is strictly lower than the champion's (a champion without a score is
    beaten by any score; one scored by another metric is never beaten automatically)."""
    if score is None or not math.isfinite(score):
        return False
    theirs = _number(champion_tags.get(SCORE_TAG))
    if theirs is None:
        return True
    if champion_tags.get(METRIC_TAG) not in (None, metric):
        log.warning(
            "%s@%s (version %s) was selected by %s, this run by %s: not comparable, the alias "
            "stays; move it with MlflowClient().set_registered_model_alias(%r, %r, VERSION)",
            name, CHAMPION, version, champion_tags.get(METRIC_TAG), metric, name, CHAMPION,
        )  # fmt: skip
        return False
    return score < theirs


def _current_champion(client, name: str) -> Any | None:
    from mlflow.exceptions import MlflowException

    try:
        return client.get_model_version_by_alias(name, CHAMPION)
    except MlflowException as err:
        if str(err.error_code) in ("RESOURCE_DOES_NOT_EXIST", "INVALID_PARAMETER_VALUE"):
            return None
        raise


def _text(value: float | int | None) -> str:
    return "none" if value is None else str(value)


def _number(text: str | None) -> float | None:
    try:
        value = float(text) if text not in (None, "none") else None
    except ValueError:
        return None
    return value if value is not None and math.isfinite(value) else None
