"""The per-class JSON documents of a bundle (``calibration.json``, ``copula.json``): written and
read in one shape, ``{"format": ..., "classes": {"0": {...}, "1": {...}}}``, and their quantile
tables checked on load for meaning, not only for shape: a table edited and re-sealed in the
bundle's manifest still never samples."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from wgangp.data.schema.table_schema import CLASSES
from wgangp.data.transform.scales import QuantileScale, scale_from_dict
from wgangp.data.transform.stored import RETRAIN
from wgangp.errors import DataError

T = TypeVar("T")


def per_class_json(fmt: str, parts: dict[int, dict[str, Any]]) -> str:
    """The document of format ``fmt`` holding ``parts`` (plain JSON values) for each class."""
    classes = {str(label): parts[label] for label in sorted(parts)}
    return json.dumps({"format": fmt, "classes": classes}, allow_nan=False)


def load_per_class(
    path: Path, fmt: str, what: str, build: Callable[[dict[int, dict[str, Any]]], T]
) -> T:
    """``build`` applied to a saved document's parts by class; one DataError line naming the file
    when it is not a usable ``what`` (another format, a class missing, a bad table)."""
    try:
        return build(per_class_parts(path, fmt))
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise DataError(f"{path} is not a usable {what} ({err}); {RETRAIN}") from None


def per_class_parts(path: Path, fmt: str) -> dict[int, dict[str, Any]]:
    """A saved document's parts by class: of format ``fmt``, for both classes; ValueError (or
    KeyError, TypeError) otherwise, which the caller turns into one line naming the file."""
    payload = json.loads(Path(path).read_text())
    if payload.get("format") != fmt:
        raise ValueError(f"not a {fmt} document")
    classes = payload["classes"]
    if set(classes) != {str(c) for c in CLASSES}:
        raise ValueError(f"classes {sorted(classes)}")
    return {int(label): parts for label, parts in classes.items()}


def checked_quantiles(stored: dict, where: str, names: list[str]) -> QuantileScale:
    """A stored quantile table (``where`` names it, e.g. ``class 1 real quantiles``): one column
    per name of ``names`` (the networks' columns it maps), one knot per reference, finite,
    sorted, references from 0 to 1; ValueError naming the table and column otherwise (an
    unsorted table silently doubles a column's spread)."""
    scale = scale_from_dict(stored)
    width = len(names)
    if not isinstance(scale, QuantileScale) or {len(row) for row in scale.quantiles} != {width}:
        raise ValueError(f"{where} are not quantiles {width} columns wide")
    knots, references = len(scale.quantiles), len(scale.references)
    if knots != references or knots < 2:
        raise ValueError(f"{where} hold {knots} knots for {references} references")
    bad = scale.nonfinite_columns()
    if bad:
        raise ValueError(f"{where} of {names[next(iter(bad))]}: non-finite quantiles")
    senseless = scale.senseless_columns()
    if senseless:
        i, shown = next(iter(senseless.items()))
        raise ValueError(f"{where} of {names[i]}: {shown}")
    return scale
