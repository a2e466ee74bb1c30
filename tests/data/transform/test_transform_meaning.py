"""A saved ``preprocessing.json`` of finite numbers no fit writes is refused on load.

A std of 0 makes a column constant, 1e300 makes it absurd, unsorted quantiles double its spread,
reversed bounds clip every row onto nonsense: each is one line naming the file, the column and the
scale's class, and the fix (docs/errors.md lists them).
"""

from __future__ import annotations

import json
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
from support.creditcard import FEATURES, LABEL, MAX_ABS_VALUE, SCHEMA

from wgangp.data.builtin.simulated import simulate_creditcard
from wgangp.data.transform.mixture_scale import GaussianMixtureScale
from wgangp.data.transform.scales import QuantileScale
from wgangp.data.transform.stored import RETRAIN
from wgangp.data.transform.table_transform import TableTransform
from wgangp.errors import DataError

SOURCE = "preprocessing.json"


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    frame = simulate_creditcard(3000, fraud_rate=0.05, seed=1)
    frame.loc[frame.index[::10], "Amount"] = 1.0  # a point mass: Amount through its quantiles
    return frame


def _saved(frame: pd.DataFrame, **options) -> dict:
    fitted = TableTransform.fit(frame, SCHEMA, SCHEMA.classes(frame[LABEL]), **options)
    return json.loads(fitted.to_json())


def _refused(payload: dict, edit: Callable[[dict], object]) -> str:
    edited = json.loads(json.dumps(payload))
    edit(edited)
    with pytest.raises(DataError) as err:
        TableTransform.from_dict(edited, SOURCE)
    assert "\n" not in str(err.value)
    return str(err.value)


def _column(name: str) -> int:
    return FEATURES.index(name)


def _set(name: str, key: str, field: str, value: float) -> Callable[[dict], None]:
    return lambda p: p["columns"][_column(name)]["scales"][key].__setitem__(field, [value])


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (_set("V3", "all", "std", 0.0), "column V3: its scale of all makes no sense (std 0, not "),
        (_set("V3", "0", "std", -2.5), "column V3: its scale of 0 makes no sense (std -2.5, not"),
        (_set("V1", "1", "std", 1e300), "column V1: its scale of 1 makes no sense (std 1e+300,"),
        (_set("V2", "all", "mean", -1e300), "its scale of all makes no sense (mean -1e+300 beyond"),
        (
            lambda p: p["columns"][_column("Time")]["schema"].__setitem__("bounds", [9.0, 1.0]),
            "bounds are reversed (9.0 > 1.0)",
        ),
    ],
    ids=["std 0", "std negative", "std 1e300", "mean 1e300", "reversed bounds"],
)
def test_a_standard_scale_no_fit_writes_is_one_line(frame, edit, says: str) -> None:
    payload = _saved(frame)
    message = _refused(payload, edit)
    assert message.startswith(SOURCE) and says in message and message.endswith(RETRAIN)


def _amount_knots(edit: Callable[[list[list[float]], list[float]], None]) -> Callable[[dict], None]:
    """Edit the fraud class's quantile table of Amount (a column with a point mass)."""

    def apply(payload: dict) -> None:
        table = payload["columns"][_column("Amount")]["scales"]["1"]
        edit(table["quantiles"], table["references"])

    return apply


def _reverse(quantiles: list[list[float]], _: list[float]) -> None:
    values = [row[0] for row in quantiles][::-1]
    for row, value in zip(quantiles, values, strict=True):
        row[0] = value


def _swap_with_references(quantiles: list[list[float]], references: list[float]) -> None:
    for i, row in enumerate(quantiles):
        row[0], references[i] = references[i], row[0]


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (_amount_knots(_reverse), "its scale of 1 makes no sense (quantiles not sorted"),
        (_amount_knots(_swap_with_references), "its scale of 1 makes no sense (references from "),
    ],
    ids=["unsorted", "swapped with references"],
)
def test_the_quantile_scales_are_checked(frame, edit, says: str) -> None:
    payload = _saved(frame)
    assert "Amount" in payload["quantile_columns"]
    TableTransform.from_dict(payload, SOURCE)  # as fitted, it loads
    message = _refused(payload, edit)
    assert message.startswith(f"{SOURCE} column Amount: {says}"), message


def test_a_mixture_scale_no_fit_writes_is_one_line(frame) -> None:
    """Two components (fitted ones load: tests/data/transform/test_mixture_scale.py)."""
    payload = _saved(frame, per_class=False, point_masses=False)
    mixture = GaussianMixtureScale([[0.25, 0.75]], [[-1.0, 1.0]], [[0.5, 0.5]])
    payload["columns"][_column("V4")]["scales"]["all"] = mixture.to_dict()
    TableTransform.from_dict(payload, SOURCE)
    halve = lambda p: p["columns"][_column("V4")]["scales"]["all"].update(  # noqa: E731
        weights=[[0.125, 0.375]]
    )
    assert "column V4: its scale of all makes no sense (mixture weights summing to 0.5, not 1)" in (
        _refused(payload, halve)
    )
    far = lambda p: p["columns"][_column("V4")]["scales"]["all"]["means"][0].__setitem__(  # noqa: E731
        0, 1e300
    )
    assert "(mixture parameter 1e+300 beyond 1e+16)" in _refused(payload, far)


def test_references_that_are_not_numbers_are_one_line(frame) -> None:
    """References are read by the meaning check alone: text there is refused, not a traceback."""
    payload = _saved(frame)
    edit = _amount_knots(lambda _, references: references.__setitem__(3, "x"))
    assert "column Amount: its scale of 1 holds parameters that are not numbers" in _refused(
        payload, edit
    )


@pytest.mark.parametrize(
    "options",
    [{"quantile_columns": ["V5", "V6"]}, {"scaling": "quantile"}],
    ids=["quantile columns", "quantile"],
)
def test_a_fit_on_values_at_the_validated_limit_loads(frame, options) -> None:
    """Knots extended past the outermost groups reach beyond 1e15, the largest value validation
    lets in (a constant column's by as much again): a real fit is never refused."""
    rng = np.random.default_rng(0)
    at_limit = frame.assign(V5=rng.uniform(-MAX_ABS_VALUE, MAX_ABS_VALUE, len(frame)))
    at_limit["V6"] = MAX_ABS_VALUE
    payload = _saved(at_limit, **options)
    knots = np.abs(payload["columns"][_column("V5")]["scales"]["0"]["quantiles"])
    assert knots.max() > MAX_ABS_VALUE
    TableTransform.from_dict(payload, SOURCE)


def test_a_knot_a_rounding_below_the_one_before_counts_as_sorted() -> None:
    """np.nanpercentile (scikit-learn's quantiles) does not promise monotone knots to the bit."""
    knots = [[0.0], [1e5], [1e5 - 1e-8], [2e5]]
    assert not QuantileScale(knots, [0.0, 0.3, 0.6, 1.0]).senseless_columns()
    knots[2] = [1e5 - 1.0]
    assert QuantileScale(knots, [0.0, 0.3, 0.6, 1.0]).senseless_columns() == {
        0: "quantiles not sorted (knot 3 of 4, 99999, below knot 2, 100000)"
    }
