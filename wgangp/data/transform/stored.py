"""Read a saved table transform back, checked: a wrong file is one line, never a misread scale.

A transform loaded with a scale of the wrong width, a non-finite parameter, finite ones no fit
writes (a std of 0 or 1e300, unsorted quantiles), reversed bounds or a fill outside its column's
bounds would quietly turn every generated row into nonsense; each such problem is a
:class:`~wgangp.errors.DataError` naming the file, the column and the fix.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, NoReturn

from wgangp.config import SCALINGS
from wgangp.data.numbers import short_number
from wgangp.data.schema.cells import repeated_names
from wgangp.data.schema.column_codes import bound_seconds, level_of
from wgangp.data.schema.table_schema import CLASSES, ColumnSchema, Value
from wgangp.data.transform.fitted_column import ALL_ROWS, FittedColumn
from wgangp.data.transform.scales import QuantileScale, Scale, scale_from_dict
from wgangp.errors import ConfigError, DataError

#: The version of the layout written by :meth:`TableTransform.to_dict`; a file of another (an
#: earlier wgangp's, or Kaggle's transform before every table had one) is refused with RETRAIN.
FORMAT = "wgangp.table_transform/2"
#: The fix in every line refusing a saved file (a transform, a calibration, a copula).
RETRAIN = "it was not written by wgangp's training or was edited: retrain to get a new one"
_KEYS = ("format", "scaling", "per_class", "quantile_columns", "columns")
_COLUMN_KEYS = {
    "categorical": ("schema", "fill"),
    "continuous": ("schema", "fill", "scales"),
    "integer": ("schema", "fill", "scales"),
    "datetime": ("schema", "fill", "scales", "step"),
}


def checked_parts(raw: Any, source: str) -> dict[str, Any]:
    """The arguments of the TableTransform ``raw`` (its ``to_dict``) holds; DataError otherwise."""
    if not isinstance(raw, Mapping) or raw.get("format") != FORMAT:
        _refuse(source, f"is not a {FORMAT} document")
    unknown = sorted(set(raw) - set(_KEYS))
    absent = [key for key in _KEYS if key not in raw]
    if unknown or absent:
        _refuse(source, f"has unknown key(s) {unknown} or lacks {absent}")
    if raw["scaling"] not in SCALINGS:
        _refuse(source, f"has scaling {raw['scaling']!r}, not one of {', '.join(SCALINGS)}")
    if not isinstance(raw["per_class"], bool):
        _refuse(source, f"has per_class {raw['per_class']!r}, not true or false")
    entries = raw["columns"]
    if not isinstance(entries, list) or not entries:
        _refuse(source, "has no columns")
    keys = {ALL_ROWS, *(str(c) for c in CLASSES)}
    columns = [_column(entry, i, keys, source) for i, entry in enumerate(entries)]
    names = [column.name for column in columns]
    repeated = repeated_names(names)
    if repeated:
        _refuse(source, f"lists column(s) {', '.join(repeated)} twice")
    quantile = raw["quantile_columns"]
    scaled = {column.name for column in columns if column.kind != "categorical"}
    if not isinstance(quantile, list) or not set(quantile) <= scaled:
        _refuse(source, f"has quantile_columns {quantile!r}, not numeric columns of the table")
    for column in columns:
        column.quantile = column.name in quantile
        if column.quantile and not all(
            isinstance(scale, QuantileScale) for scale in column.scales.values()
        ):
            _refuse(source, f"maps column {column.name} through quantiles it does not hold")
    return {
        "columns": columns,
        "scaling": raw["scaling"],
        "per_class": raw["per_class"],
        "quantile_columns": quantile,
    }


def parsed_json(text: str, source: str) -> Any:
    """A saved file's JSON; one DataError line naming ``source`` when it is not JSON."""
    try:
        return json.loads(text)
    except ValueError as err:
        raise DataError(f"{source} is not valid JSON ({err}); {RETRAIN}") from None


def _column(entry: Any, i: int, keys: set[str], source: str) -> FittedColumn:
    where = f"columns entry {i + 1}"
    if not isinstance(entry, Mapping) or not isinstance(entry.get("schema"), Mapping):
        _refuse(source, f"{where} is not a mapping with a schema")
    try:
        schema = ColumnSchema.from_dict(entry["schema"], where)
    except ConfigError as err:
        _refuse(source, str(err))
    where = f"column {schema.name}"
    expected = _COLUMN_KEYS[schema.kind]
    if set(entry) != set(expected):
        _refuse(source, f"{where} ({schema.kind}) has keys {sorted(entry)}, not {list(expected)}")
    if schema.kind == "categorical":
        fill = level_of(schema.levels or (), entry["fill"])
        if fill is None:
            _refuse(source, f"{where} fills gaps with {entry['fill']!r}, not one of its levels")
        return FittedColumn(schema, fill=fill)
    if schema.bounds is None:
        _refuse(source, f"{where} has no bounds")
    step = entry.get("step", 0.0)
    if not _finite(step) or step < 0:
        _refuse(source, f"{where} has step {step!r}, not a number of seconds >= 0")
    column = FittedColumn(schema, fill=entry["fill"], step=float(step))
    column.scales.update(_scales(entry["scales"], keys, where, source))
    _check_fill(column, where, source)
    return column


def _scales(raw: Any, keys: set[str], where: str, source: str) -> dict[str, Scale]:
    if not isinstance(raw, Mapping) or ALL_ROWS not in raw or not set(raw) <= keys:
        shown = sorted(raw) if isinstance(raw, Mapping) else raw
        _refuse(source, f"{where} has scales for {shown}, not {ALL_ROWS} and the classes 0, 1")
    scales: dict[str, Scale] = {}
    for key, payload in raw.items():
        try:
            scale = scale_from_dict(payload)
            width, bad = scale.width(), scale.nonfinite_columns()
            senseless = scale.senseless_columns() if width == 1 and not bad else {}
        except (TypeError, ValueError, KeyError, AttributeError):
            _refuse(source, f"{where}: its scale of {key} holds parameters that are not numbers")
        if width != 1:
            _refuse(source, f"{where}: its scale of {key} is {width} columns wide, not 1")
        if bad:
            _refuse(source, f"{where}: its scale of {key} is non-finite ({bad[0]})")
        if senseless:
            _refuse(source, f"{where}: its scale of {key} makes no sense ({senseless[0]})")
        scales[key] = scale
    return scales


def _check_fill(column: FittedColumn, where: str, source: str) -> None:
    low, high = column.low_high()
    fill: Value = column.fill
    try:
        code = bound_seconds(fill) if column.kind == "datetime" else float(fill)
    except (TypeError, ValueError):
        _refuse(source, f"{where} fills gaps with {fill!r}, not a {column.kind} value")
    if isinstance(fill, bool) or not math.isfinite(code) or not low <= code <= high:
        _refuse(source, f"{where} fills gaps with {fill!r}, outside its bounds")
    if column.kind == "integer" and not float(code).is_integer():
        _refuse(source, f"{where} is integer but fills gaps with {short_number(code)}")


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _refuse(source: str, problem: str) -> NoReturn:
    raise DataError(f"{source} {problem}; {RETRAIN}")
