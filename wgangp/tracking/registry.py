"""The MLflow Model Registry: a run's selected generator as a version of a registered model, and
the ``champion`` alias that follows the best validation score.

``tracking.register_as=NAME`` queues one ``register`` call after the run's pyfunc model (so an
outage journals it and ``python -m wgangp.sync`` replays it). The call registers the model named
by the run's ``model.uri`` tag, tags the version with the run's selection (``selection.score``,
``selection.step``, ``selection.metric``) and points ``champion`` at the lowest-scored
version of that metric (the scores are validation detection AUCs or KS means: lower is better;
the earliest version wins a tie), so a version takes the alias only with a strictly lower score.
A champion scored by another metric is not comparable: it stays, with a warning. A replay finds
the version it registered before instead of adding a second one.

Two runs may register at the same instant, and the registry has no compare-and-set: each
registrar computes the best version from every version's tags, sets the alias, and re-reads until
the alias holds what it computed. Every version is tagged before its registrar computes, and the
last alias write is always followed by its writer's re-read, which sees every version, so the best
score always ends with the alias. Creating the registered model or the alias at once from two runs
can fail on a unique constraint: the call is retried.
"""

from __future__ import annotations

import logging
import math
import random
import time
from typing import TYPE_CHECKING, NamedTuple

from wgangp.tracking.store import use_tracking_uri

if TYPE_CHECKING:
    from mlflow.entities.model_registry import ModelVersion
    from mlflow.tracking import MlflowClient

log = logging.getLogger("wgangp.tracking")

CHAMPION = "champion"
SCORE_TAG = "selection.score"
STEP_TAG = "selection.step"
METRIC_TAG = "selection.metric"


class Registration(NamedTuple):
    version: str
    champion: bool  # the alias points at this version now


def register_run_model(
    client: MlflowClient,
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
    for attempt in range(REGISTER_ATTEMPTS):
        existing = client.search_model_versions(f"name='{name}' and run_id='{run_id}'")
        if existing:
            version = str(existing[0].version)
            break
        try:
            with use_tracking_uri(tracking_uri or mlflow.get_tracking_uri()):
                registered = mlflow.register_model(model_uri, name, tags=tags)
        except Exception as err:  # another run created the model or version at the same instant
            if attempt + 1 == REGISTER_ATTEMPTS or not _is_conflict(err):
                raise
            time.sleep(random.uniform(0.1, 0.5))
            continue
        version = str(registered.version)
        break
    moves = False
    for _ in range(ALIAS_ROUNDS):
        champion = _current_champion(client, name)
        held_by = str(champion.version) if champion is not None else None  # int or str by store
        target = _target(client, name, metric, version, champion, held_by)
        if target is None or target == held_by:
            break
        try:
            client.set_registered_model_alias(name, CHAMPION, target)
        except Exception as err:  # another run created the alias at the same instant
            if not _is_conflict(err):
                raise
        else:
            moves = moves or target == version
        time.sleep(random.uniform(0.05, 0.2))  # then re-read: another run may have moved it
    final = _current_champion(client, name)
    is_champion = final is not None and str(final.version) == version
    moves = moves and is_champion
    client.set_tag(run_id, "registry.model", name)
    client.set_tag(run_id, "registry.version", version)
    client.set_tag(run_id, "registry.champion", str(is_champion).lower())
    log.info(
        "registered %s version %s%s",
        name, version, f"; alias {CHAMPION} -> {version}" if moves else f"; {CHAMPION} stays",
    )  # fmt: skip
    return Registration(version, is_champion)


#: Attempts at registering a version, and rounds of setting and re-reading the alias.
REGISTER_ATTEMPTS = 5
ALIAS_ROUNDS = 8


def _is_conflict(err: Exception) -> bool:
    text = f"{type(err).__name__} {err} {getattr(err, 'error_code', '')}"
    return any(
        s in text for s in ("IntegrityError", "UNIQUE constraint", "RESOURCE_ALREADY_EXISTS")
    )


def _target(
    client: MlflowClient,
    name: str,
    metric: str | None,
    version: str,
    champion: ModelVersion | None,
    held_by: str | None,
) -> str | None:
    """The version the alias should hold (None: leave it): the lowest score of this run's metric,
    the earliest version on a tie; this version when nothing is champion and nothing scored."""
    if champion is not None and champion.tags.get(METRIC_TAG) not in (None, metric or "none"):
        beats(0.0, metric, champion.tags, name, held_by)  # warns: not comparable, stays
        return None
    scored = []
    for candidate in client.search_model_versions(f"name='{name}'"):
        value = _number(candidate.tags.get(SCORE_TAG))
        if value is not None and candidate.tags.get(METRIC_TAG) == (metric or "none"):
            scored.append((value, int(candidate.version)))
    if scored:
        return str(min(scored)[1])
    return version if champion is None else None


def beats(
    score: float | None,
    metric: str | None,
    champion_tags: dict[str, str],
    name: str,
    version: str | None,
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


def _current_champion(client: MlflowClient, name: str) -> ModelVersion | None:
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
