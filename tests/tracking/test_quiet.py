"""MLflow's own console lines are quiet by default, the user's settings win, and warnings about
the run itself still show (:mod:`wgangp.tracking.quiet`)."""

from __future__ import annotations

import logging

import pytest

from wgangp.tracking.quiet import QUIET_ENV, QUIET_LOGGERS, quiet_mlflow


@pytest.fixture
def fresh_loggers():
    """The quieted loggers' levels restored after the test (other tests log through them)."""
    names = [*QUIET_LOGGERS, "mlflow.tracking.client"]
    saved = {name: logging.getLogger(name).level for name in names}
    for name in names:
        logging.getLogger(name).setLevel(logging.NOTSET)
    yield
    for name, level in saved.items():
        logging.getLogger(name).setLevel(level)


def test_environment_inference_and_bars_are_off_by_default(fresh_loggers) -> None:
    environ: dict[str, str] = {}
    quiet_mlflow(environ)
    assert environ == {"MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR": "false"}
    environment = logging.getLogger("mlflow.utils.environment")
    assert not environment.isEnabledFor(logging.WARNING)  # "Failed to resolve ... pip version"
    assert not logging.getLogger("mlflow.utils.uv_utils").isEnabledFor(logging.WARNING)
    assert not logging.getLogger("mlflow.pyfunc").isEnabledFor(logging.INFO)
    assert logging.getLogger("mlflow.pyfunc").isEnabledFor(logging.WARNING)  # still shown
    assert logging.getLogger("mlflow.tracking.client").level == logging.NOTSET  # untouched


def test_the_users_settings_win(fresh_loggers) -> None:
    environ = {name: "true" for name in QUIET_ENV}
    logging.getLogger("mlflow.utils.environment").setLevel(logging.DEBUG)
    quiet_mlflow(environ)
    assert environ == {name: "true" for name in QUIET_ENV}
    assert logging.getLogger("mlflow.utils.environment").level == logging.DEBUG
