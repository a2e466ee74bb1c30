"""MLflow's own console lines that a wgangp command does not need, off by default.

Logging a model makes MLflow infer the environment it would need elsewhere: it looks for pip
("Failed to resolve installed pip version" in a uv environment, which has none), for a uv project
in the working directory ("Detected uv project", "uv export"), and it checks the input example
against the signature; a download draws a progress bar per call, and a new sqlite store prints
its table set-up. None of that is about the run. :func:`quiet_mlflow` lowers exactly those
loggers and turns the artifact bars off, unless the user set them: MLflow's warnings about
the run itself (a store, a model, the registry) still show.
"""

from __future__ import annotations

import logging
import os
from collections.abc import MutableMapping

#: MLflow's loggers of what is not the run, and the lowest level each still shows.
QUIET_LOGGERS = {
    "mlflow.utils.environment": logging.ERROR,  # pip and conda specs of the logged model
    "mlflow.utils.uv_utils": logging.ERROR,  # the uv project MLflow finds in the working dir
    "mlflow.utils.requirements_utils": logging.ERROR,  # the model's inferred requirements
    "mlflow.pyfunc": logging.WARNING,  # "Validating input example against model signature"
    "mlflow.models.model": logging.WARNING,  # the logged model's own notices
    "mlflow.store.db.utils": logging.WARNING,  # "Creating initial MLflow database tables"
    "alembic.runtime.migration": logging.WARNING,  # the store's schema migrations
}
#: MLflow's settings a command sets when the user has not: no progress bar per download.
QUIET_ENV = {"MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR": "false"}


def quiet_mlflow(environ: MutableMapping[str, str] = os.environ) -> None:
    """Quiet :data:`QUIET_LOGGERS` and set :data:`QUIET_ENV`, each unless the user set it (a
    logger's own level, the environment variable); call before MLflow logs anything."""
    for name, value in QUIET_ENV.items():
        environ.setdefault(name, value)
    for name, level in QUIET_LOGGERS.items():
        logger = logging.getLogger(name)
        if logger.level == logging.NOTSET:
            logger.setLevel(level)
