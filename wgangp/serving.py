"""The synthesizer as an MLflow pyfunc model: ``predict`` takes requests, returns rows.

Logged as a "model from code" (``wgangp/serving_model.py``), so nothing is pickled: MLflow copies
that file and the synthesizer bundle (Keras native format + JSON) into the model.
"""

from __future__ import annotations

from pathlib import Path

import mlflow.pyfunc
import pandas as pd

from wgangp.data.schema import COLUMNS

#: Name of the pyfunc model inside a training run.
MODEL_NAME = "sampler"
_MODEL_CODE = Path(__file__).with_name("serving_model.py")


class SamplerModel(mlflow.pyfunc.PythonModel):
    """pyfunc body: each input row asks for ``n`` rows of class ``label`` (seed optional)."""

    def load_context(self, context) -> None:
        from wgangp.synthesizer import Synthesizer

        self.synthesizer = Synthesizer.load(Path(context.artifacts["synthesizer"]))

    def predict(self, context, model_input: pd.DataFrame, params=None) -> pd.DataFrame:
        from wgangp.errors import WgangpError

        if "n" not in model_input.columns:
            raise WgangpError("sampler input needs a column n (rows to draw); label defaults to 1")
        frames = []
        for i, request in enumerate(model_input.to_dict("records")):
            label = int(request.get("label", 1) if pd.notna(request.get("label", 1)) else 1)
            seed = request.get("seed", i)
            seed = int(seed) if pd.notna(seed) else i
            frames.append(self.synthesizer.sample(int(request["n"]), label=label, seed=seed))
        if not frames:
            return pd.DataFrame(columns=list(COLUMNS))
        return pd.concat(frames, ignore_index=True)


def _requirements() -> list[str]:
    from importlib.metadata import PackageNotFoundError, version

    pins = []
    for package in ("tensorflow", "keras", "pandas", "numpy", "mlflow"):
        try:
            pins.append(f"{package}=={version(package)}")
        except PackageNotFoundError:
            continue
    return pins


def log_sampler_model(synthesizer_dir: Path, run_id: str, tracking_uri: str) -> str:
    """Log the pyfunc model into ``run_id``; returns its ``models:/`` URI."""
    import mlflow
    from mlflow.models import infer_signature

    example = pd.DataFrame({"n": [3], "label": [1], "seed": [0]})
    from wgangp.synthesizer import Synthesizer

    output = Synthesizer.load(synthesizer_dir).sample(3, label=1, seed=0)
    signature = infer_signature(example, output)
    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(tracking_uri)
    try:
        with mlflow.start_run(run_id=run_id):
            info = mlflow.pyfunc.log_model(
                name=MODEL_NAME,
                python_model=str(_MODEL_CODE),
                artifacts={"synthesizer": str(synthesizer_dir)},
                signature=signature,
                input_example=example,
                # Explicit: inferring them re-imports TensorFlow in a subprocess (~1 min).
                pip_requirements=_requirements(),
            )
    finally:
        mlflow.set_tracking_uri(previous)
    return info.model_uri
