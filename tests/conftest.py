"""Process-wide test settings; fixtures and harnesses live in tests/support (pytest plugins)."""

from __future__ import annotations

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from absl import logging as absl_logging  # noqa: E402

# absl (imported by TensorFlow) builds its log handler on sys.stderr as it is at import time:
# pytest's capture file here. Hydra's in-process main() reconfigures logging, which closes every
# handler, and absl's close() closes its stream unless it is the *current* sys.stderr, which
# killed pytest's capture ("I/O operation on closed file") after any in-process training.
absl_logging.get_absl_handler().python_handler.stream = sys.__stderr__

pytest_plugins = [
    "pytester",
    "support.plugin",
    "support.mlflow_server",
    "support.browser",
    "support.tracked_runs",
]
