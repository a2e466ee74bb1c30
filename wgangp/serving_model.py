"""Model code for MLflow's models-from-code logging (no pickle): see :mod:`wgangp.serving`."""

import mlflow

from wgangp.serving import SamplerModel

mlflow.models.set_model(SamplerModel())
