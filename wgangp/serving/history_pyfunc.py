"""A history model as an MLflow pyfunc model: each input row asks for ``n`` histories.

As :mod:`.pyfunc` serves rows, with histories: an input row ``{"n": 20, "label": 1, "seed": 0}``
asks for 20 synthetic customers of the class the label value names (without ``label``: both
classes at the training share), and the answer is their rows in the table's columns, entity and
time included, requests stacked in input order; the ``where`` param conditions the attributes.
Logged as a model from code (``history_model_code.py``), nothing pickled."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
from mlflow.pyfunc.model import PythonModel

from wgangp.data.schema.table_schema import TableSchema
from wgangp.errors import WgangpError
from wgangp.serving.bundle import BUNDLE, HISTORIES_FILE, MODEL_NAME, SCHEMA_FILE
from wgangp.serving.conditions import ConditionError
from wgangp.serving.histories import HistorySynthesizer
from wgangp.serving.pyfunc import (
    MAX_ROWS_PER_CALL,
    _bad_request,
    _requirements,
    _server_error,
    null_gaps,
    parse_requests,
)

_MODEL_CODE = Path(__file__).with_name("history_model_code.py")


class HistoryModel(PythonModel):
    """pyfunc body: each input row asks for ``n`` histories of class ``label`` (module doc)."""

    def load_context(self, context: Any) -> None:
        self.synthesizer = HistorySynthesizer.load(Path(context.artifacts[BUNDLE]))

    def predict(
        self, context: Any, model_input: pd.DataFrame, params: dict[str, Any] | None = None
    ) -> pd.DataFrame:
        model = self.synthesizer
        labelled = isinstance(model_input, pd.DataFrame) and "label" in model_input.columns
        requests = parse_requests(model_input, model.schema)
        most = MAX_ROWS_PER_CALL // model.encoding.max_length
        if sum(n for n, _, _ in requests) > most:
            raise _bad_request(f"at most {most} histories per call: split the request")
        where = (params or {}).get("where")
        try:
            where = json.loads(where) if isinstance(where, str) and where else where or None
        except ValueError:
            raise _bad_request(
                f'params where={where} is not JSON; e.g. {{"home": ["paris"]}}'
            ) from None
        frames = []
        try:
            for i, (n, klass, seed) in enumerate(requests):
                given = labelled and pd.notna(model_input["label"].iloc[i])
                conditions = model.conditions(where) if where else ()
                chosen = klass if given else None
                frames.append(
                    model._draw_where(n, chosen, seed, conditions)
                    if conditions else model.draw(n, chosen, seed)
                )  # fmt: skip
        except ConditionError as err:
            raise _bad_request(str(err)) from None
        except WgangpError as err:
            raise _server_error(str(err)) from None
        frames = [f for f in frames if len(f)] or [model.draw(0, None, 0)]
        return null_gaps(pd.concat(frames, ignore_index=True))


def history_signature(bundle_dir: Path, columns: list[str], roles: dict[str, Any]) -> Any:
    """Input: n (histories), label and seed (optional); param ``where``; output: the columns."""
    from mlflow.models import ModelSignature
    from mlflow.types import ColSpec, DataType, ParamSchema, ParamSpec, Schema
    from mlflow.types.schema import AnyType

    table = TableSchema.load(Path(bundle_dir) / SCHEMA_FILE)
    inputs = Schema([ColSpec(AnyType(), "n"), ColSpec(AnyType(), "label", required=False),
                     ColSpec(AnyType(), "seed", required=False)])  # fmt: skip
    ids = {roles["entity"], *roles["shared"]}
    outputs = Schema([
        ColSpec("string" if name in ids else table.column(name).value_type, name)
        for name in columns
    ])  # fmt: skip
    params = ParamSchema([ParamSpec("where", DataType.string, "")])
    return ModelSignature(inputs=inputs, outputs=outputs, params=params)


def history_model_spec(bundle_dir: Path) -> dict[str, Any]:
    """The pyfunc model of a history bundle, as the JSON the tracker logs."""
    parts = json.loads((Path(bundle_dir) / HISTORIES_FILE).read_text(encoding="utf-8"))
    roles = parts["encoding"]["roles"]
    table = TableSchema.load(Path(bundle_dir) / SCHEMA_FILE)
    return {
        "metadata": {"kind": "histories"},
        "name": MODEL_NAME,
        "python_model": str(_MODEL_CODE),
        "artifacts": {BUNDLE: str(Path(bundle_dir).resolve())},
        "signature": history_signature(bundle_dir, list(roles["order"]), roles).to_dict(),
        "input_example": {"n": [2], "label": [table.positive], "seed": [0]},
        "pip_requirements": _requirements(),
    }
