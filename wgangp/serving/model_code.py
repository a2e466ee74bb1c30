"""The code file of the ``synthesizer`` pyfunc model (models from code, no pickle)."""

import mlflow

from wgangp.serving.pyfunc import SynthesizerModel

mlflow.models.set_model(SynthesizerModel())
