"""The code file of a history model's ``synthesizer`` pyfunc model (models from code, no pickle)."""

import mlflow

from wgangp.serving.history_pyfunc import HistoryModel

mlflow.models.set_model(HistoryModel())
