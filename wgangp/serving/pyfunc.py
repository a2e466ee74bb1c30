"""The synthesizer as an MLflow pyfunc model: ``predict`` takes requests, returns rows.

Logged as a "model from code" (``wgangp/serving/model_code.py``), so nothing is pickled: MLflow
copies that file and the synthesizer bundle (Keras native format + JSON) into the model. Loading
it needs the ``wgangp`` package installed (``mlflow models serve --env-manager local`` from this
project's environment, or the Docker image).

Each input row is one request: ``n`` rows of class ``label`` (a value of the label column; default
the rare class: 1, fraud, for Kaggle's file) drawn with
``seed`` (default: the row's position). The answer is the requested rows stacked in input order,
in original units with the original column names; a gap (a user's table's empty cell) is None,
JSON ``null`` on the wire. The param ``where`` (JSON text: ``{"amount": [500, null]}``) asks
every request for rows that meet its conditions (:mod:`wgangp.serving.conditions`); any other
param is refused (HTTP 400), where MLflow alone would drop it with a warning and answer 200.
"""

from __future__ import annotations

import ast
import difflib
import json
import logging
import re
import threading
from pathlib import Path
from typing import Any

import mlflow.pyfunc
import numpy as np
import pandas as pd

from wgangp.config import MAX_SEED
from wgangp.data.schema.table_schema import RARE, TableSchema
from wgangp.errors import WgangpError
from wgangp.serving.bundle import BUNDLE, META_FILE, MODEL_NAME, SCHEMA_FILE
from wgangp.serving.conditions import Condition, ConditionError
from wgangp.serving.labels import LabelError, label_class
from wgangp.serving.memory import release_after_large_answer
from wgangp.serving.synthesizer import Synthesizer

#: Most rows one request (all input rows together) may ask for: what the scoring server draws and
#: encodes as JSON well inside its 60 s timeout on 2 cores (docs/reliability.md measures it).
MAX_ROWS_PER_CALL = 250_000
#: From this many rows on, the heap is trimmed after the answer (:mod:`.memory`).
LARGE_ANSWER_ROWS = 50_000
_MODEL_CODE = Path(__file__).with_name("model_code.py")
#: The params the model takes (its signature's); any other is a mistake, refused.
PARAMS = ("where",)


def _bad_request(message: str) -> Exception:
    """An error MLflow's scoring server answers as HTTP 400 with this message."""
    from mlflow.exceptions import MlflowException

    return MlflowException.invalid_parameter_value(message)


def _server_error(message: str) -> Exception:
    """An error MLflow's scoring server answers as HTTP 500 with this message."""
    from mlflow.exceptions import MlflowException
    from mlflow.protos.databricks_pb2 import INTERNAL_ERROR

    return MlflowException(message, error_code=INTERNAL_ERROR)


def parse_requests(model_input: pd.DataFrame, table: TableSchema) -> list[tuple[int, int, int]]:
    """Input rows -> ``(n, class, seed)`` triples, checked; raises a 400-style error. ``label``
    is a value of ``table``'s label column (Kaggle's file: 0 or 1)."""
    if not isinstance(model_input, pd.DataFrame):
        model_input = pd.DataFrame(model_input)
    if "n" not in model_input.columns:
        raise _bad_request(
            "synthesizer input needs a column n (rows to draw); optional columns: label (a value "
            "of the label column, default the class to synthesize) and seed (default: the input "
            "row's position)"
        )
    requests = []
    for i, row in enumerate(model_input.to_dict("records")):
        n = _whole(row.get("n"), "n", i, None)
        label = _class(row.get("label"), i, table)
        seed = _whole(row.get("seed"), "seed", i, i)
        if n < 0:
            raise _bad_request(f"input row {i}: n must be >= 0, got {n}")
        if not 0 <= seed <= MAX_SEED:
            raise _bad_request(f"input row {i}: seed must be in [0, {MAX_SEED}], got {seed}")
        requests.append((n, label, seed))
    total = sum(n for n, _, _ in requests)
    if total > MAX_ROWS_PER_CALL:
        raise _bad_request(
            f"{total} rows requested in one call; at most {MAX_ROWS_PER_CALL}: split the request"
        )
    return requests


def _class(value, row: int, table: TableSchema) -> int:
    """The class an input row's ``label`` names (default: the rare class)."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return RARE
    try:
        return label_class(table, value)
    except LabelError as err:
        raise _bad_request(f"input row {row}: {err}") from None


def _whole(value, name: str, row: int, default: int | None) -> int:
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        if default is None:
            raise _bad_request(f"input row {row}: {name} is missing")
        return default
    if isinstance(value, bool | np.bool_):
        raise _bad_request(f"input row {row}: {name} must be an integer, got {value!r}")
    if isinstance(value, int | np.integer):
        return int(value)  # exact, however large (float() would round 2**63)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise _bad_request(f"input row {row}: {name} must be an integer, got {value!r}") from None
    if not number.is_integer():
        raise _bad_request(f"input row {row}: {name} must be an integer, got {value!r}")
    return int(number)


class DroppedParams(logging.Filter):
    """The params MLflow dropped before ``predict``: it enforces the signature's param schema
    itself and drops an unknown name (a misspelled ``wehre``) with only a warning on the logger
    ``mlflow.models.utils``, so the model would answer rows without the conditions asked for.
    This filter, on that logger, keeps the names it dropped for the same thread's next
    ``predict`` (MLflow logs them in that call, just before); it drops no record."""

    LOGGER = "mlflow.models.utils"
    _LINE = re.compile(
        r"Unrecognized params (\[.*?\]) are ignored.*Supported params are: (\{.*?\})"
    )

    def __init__(self) -> None:
        super().__init__()
        self._local = threading.local()

    def filter(self, record: logging.LogRecord) -> bool:
        found = self._LINE.search(record.getMessage())
        if found:
            try:
                names, supported = ast.literal_eval(found[1]), ast.literal_eval(found[2])
            except (ValueError, SyntaxError):
                return True
            if set(supported) == set(PARAMS):  # this model's schema, not another model's
                self._local.names = [str(name) for name in names]
        return True

    def take(self) -> list[str]:
        """The names dropped since the last call in this thread (then forgotten)."""
        names = getattr(self._local, "names", [])
        self._local.names = []
        return names

    @classmethod
    def installed(cls) -> DroppedParams:
        """The one filter on MLflow's logger, added on first use."""
        logger = logging.getLogger(cls.LOGGER)
        found = next((f for f in logger.filters if isinstance(f, cls)), None)
        if found is None:
            found = cls()
            logger.addFilter(found)
        return found


def unknown_params_line(names: list[str]) -> str:
    """The 400's line for params the model does not take (a close name suggested)."""
    close = difflib.get_close_matches(names[0], PARAMS, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return (
        f"params {', '.join(repr(n) for n in names)} not taken by this model; {hint}its one param "
        'is where, JSON text of conditions such as {"amount": [500, null]}'
    )


class SynthesizerModel(mlflow.pyfunc.PythonModel):
    """pyfunc body: each input row asks for ``n`` rows of class ``label`` (seed optional)."""

    def load_context(self, context) -> None:
        self.synthesizer = Synthesizer.load(Path(context.artifacts[BUNDLE]))
        self._dropped = DroppedParams.installed()

    def predict(self, context, model_input: pd.DataFrame, params=None) -> pd.DataFrame:
        dropped = self._dropped.take() if hasattr(self, "_dropped") else []
        unknown = dropped + [str(k) for k in (params or {}) if k not in PARAMS]
        if unknown:
            raise _bad_request(unknown_params_line(unknown))
        requests = parse_requests(model_input, self.synthesizer.schema)
        conditions = self._conditions((params or {}).get("where"))
        draw = self.synthesizer.sample_class
        try:
            frames = [draw(n, klass, seed, conditions=conditions) for n, klass, seed in requests]
        except ConditionError as err:  # conditions the model rarely meets: the request's
            raise _bad_request(str(err)) from None
        except WgangpError as err:  # a broken model (NaN rows): the server's fault, a 500
            raise _server_error(str(err)) from None
        if sum(n for n, _, _ in requests) >= LARGE_ANSWER_ROWS:
            release_after_large_answer()
        frames = [f for f in frames if len(f)]
        if not frames:
            return self.synthesizer.sample_class(0, seed=0)  # the table's columns and dtypes
        return null_gaps(pd.concat(frames, ignore_index=True))

    def _conditions(self, text: object) -> tuple[Condition, ...]:
        """The ``where`` param: JSON text of a map (or the map itself, from Python), checked
        against the schema; a bad one is a 400."""
        if text is None or text == "":
            return ()
        try:
            return self.synthesizer.conditions(json.loads(text) if isinstance(text, str) else text)
        except ValueError:
            raise _bad_request(
                f'params where={text} is not JSON; e.g. {{"amount": [500, null]}}'
            ) from None
        except ConditionError as err:
            raise _bad_request(str(err)) from None


def null_gaps(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every gap as None, so the scoring server writes it as JSON ``null``: it
    encodes rows with the standard library, which writes a float NaN as ``NaN`` and a NaT as
    ``"NaT"`` (not JSON). A column with a gap becomes an object column; the others keep their
    dtypes."""
    out = frame.copy()
    for name in frame.columns:
        gaps = frame[name].isna().to_numpy()
        if gaps.any():
            column = frame[name].astype(object)
            column[gaps] = None
            out[name] = column
    return out


def model_signature(table: TableSchema):
    """Input: n (required), label and seed (optional); the param ``where`` (JSON text);
    output: the table's columns with their types."""
    from mlflow.models import ModelSignature
    from mlflow.types import ColSpec, DataType, ParamSchema, ParamSpec, Schema
    from mlflow.types.schema import AnyType

    # "any": a "long" column makes the server cast the JSON first (2.5 -> 2, 2**63 -> a negative
    # number) and predict could not refuse them; parse_requests checks every value instead.
    inputs = Schema(
        [
            ColSpec(AnyType(), "n"),
            ColSpec(AnyType(), "label", required=False),
            ColSpec(AnyType(), "seed", required=False),
        ]
    )
    outputs = Schema([ColSpec(c.value_type, c.name) for c in table.columns])
    params = ParamSchema([ParamSpec(PARAMS[0], DataType.string, "")])
    return ModelSignature(inputs=inputs, outputs=outputs, params=params)


def _requirements() -> list[str]:
    from importlib.metadata import PackageNotFoundError, version

    pins = []
    for package in ("tensorflow", "keras", "pandas", "numpy", "mlflow"):
        try:
            pins.append(f"{package}=={version(package)}")
        except PackageNotFoundError:
            continue
    return pins


def model_spec(bundle_dir: Path) -> dict[str, Any]:
    """The pyfunc model of a bundle, as the JSON the tracker logs (and journals in an outage)."""
    table = TableSchema.load(Path(bundle_dir) / SCHEMA_FILE)
    positive = table.positive
    meta = json.loads((Path(bundle_dir) / META_FILE).read_text(encoding="utf-8"))
    return {
        # The MLmodel file's metadata: a private model's guarantee, where a registry shows it.
        "metadata": {"privacy": meta["privacy"]} if "privacy" in meta else None,
        "name": MODEL_NAME,
        "python_model": str(_MODEL_CODE),
        "artifacts": {BUNDLE: str(Path(bundle_dir).resolve())},
        "signature": model_signature(table).to_dict(),
        "input_example": {"n": [3], "label": [positive], "seed": [0]},
        # Explicit: inferring them re-imports TensorFlow in a subprocess (about a minute).
        "pip_requirements": _requirements(),
    }
