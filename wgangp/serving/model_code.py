"""The code file of the ``sampler`` pyfunc model (models from code, no pickle): see ``pyfunc``."""

import mlflow

from wgangp.serving.pyfunc import SamplerModel

mlflow.models.set_model(SamplerModel())
