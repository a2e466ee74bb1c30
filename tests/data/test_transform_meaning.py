"""A saved ``preprocessing.json`` of finite numbers no fit writes is refused on load.

A std of 0 makes a column constant, 1e300 makes it absurd, unsorted quantiles double its spread, a
negative Amount cap or a reversed Time range clips every row onto nonsense: each is one line
naming the file, the scale's class and column, and the fix (docs/errors.md lists them).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from wgangp.data.mixture_scale import GaussianMixtureScale
from wgangp.data.scales import QuantileScale
from wgangp.data.schema import FEATURES, MAX_ABS_VALUE
from wgangp.data.simulated import simulate_creditcard
from wgangp.data.transform import RETRAIN, TabularTransformer
from wgangp.errors import DataError

#: The product's transform (conf/preprocess/standard.yaml): per class, Amount and Time through
#: their quantiles (the mixed scale's columns 29 and 0, in that order).
PRODUCT = {"per_class": True, "quantile_columns": ["Amount", "Time"]}


@pytest.fixture(scope="module")
def frame():
    return simulate_creditcard(3000, seed=1)


def _saved(frame, tmp_path: Path, **options) -> Path:
    return TabularTransformer(**options).fit(frame).save(tmp_path / "preprocessing.json")


def _refused(path: Path, edit: Callable[[dict], object]) -> str:
    payload = json.loads(path.read_text())
    edit(payload)
    path.write_text(json.dumps(payload))
    with pytest.raises(DataError) as err:
        TabularTransformer.load(path)
    return str(err.value)


def _set(key: str, i: int, value: float) -> Callable[[dict], None]:
    return lambda p: p[key].__setitem__(i, value)


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (_set("std", 3, 0.0), "holds the scale of V3 with std 0, not in (0, 1e+16]"),
        (_set("std", 3, -2.5), "holds the scale of V3 with std -2.5, not in (0, 1e+16]"),
        (_set("std", 1, 1e300), "holds the scale of V1 with std 1e+300, not in (0, 1e+16]"),
        (_set("mean", 0, -1e300), "holds the scale of Time with mean -1e+300 beyond 1e+16"),
        (
            lambda p: p.update(amount_max=-5.0),
            "holds amount_max -5, a negative cap for every generated Amount (amounts are >= 0)",
        ),
        (
            lambda p: p.update(time_min=p["time_max"], time_max=p["time_min"]),
            "holds time_min 172624 above time_max 96.6, so Time's range is reversed",
        ),
        (
            lambda p: p.update(time_max=1e300),
            "holds time_max 1e+300, beyond 1e+16, larger than any value of the table",
        ),
    ],
    ids=["std 0", "std negative", "std 1e300", "mean 1e300", "amount_max", "time", "time 1e300"],
)
def test_a_standard_scale_no_fit_writes_is_one_line(frame, tmp_path, edit, says: str) -> None:
    path = _saved(frame, tmp_path)
    assert _refused(path, edit) == f"{path} {says}; {RETRAIN}"


def _time_knots(edit: Callable[[list[list[float]], list[float]], None]) -> Callable[[dict], None]:
    """Edit the fraud class's quantile table of Time (the mixed scale's second column)."""

    def apply(payload: dict) -> None:
        table = payload["scales"]["1"]["quantile"]
        edit(table["quantiles"], table["references"])

    return apply


def _reverse_time(quantiles: list[list[float]], _: list[float]) -> None:
    for row, value in zip(quantiles, [row[1] for row in quantiles][::-1], strict=True):
        row[1] = value


def _swap_time_and_references(quantiles: list[list[float]], references: list[float]) -> None:
    for i, row in enumerate(quantiles):
        row[1], references[i] = references[i], row[1]


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (_time_knots(_reverse_time), "holds class 1's scale of Time with quantiles not sorted"),
        (
            _time_knots(_swap_time_and_references),
            "holds class 1's scale of Amount with references from ",
        ),
        (
            lambda p: p["scales"]["0"]["base"]["std"].__setitem__(5, 0.0),
            "holds class 0's scale of V5 with std 0, not in (0, 1e+16]",
        ),
    ],
    ids=["unsorted", "swapped with references", "class std 0"],
)
def test_the_products_per_class_scales_are_checked(frame, tmp_path, edit, says: str) -> None:
    path = _saved(frame, tmp_path, **PRODUCT)
    TabularTransformer.load(path)  # as fitted, it loads
    message = _refused(path, edit)
    assert message.startswith(f"{path} {says}") and message.endswith(f"; {RETRAIN}")
    assert "\n" not in message


def test_a_mixture_scale_no_fit_writes_is_one_line(frame, tmp_path) -> None:
    """Two components per column (fitted ones load: tests/data/test_mixture_scale.py)."""
    fitted = TabularTransformer().fit(frame)
    mixture = GaussianMixtureScale(
        [[0.25, 0.75]] * len(FEATURES),
        [[m - s, m + s] for m, s in zip(fitted.mean, fitted.std, strict=True)],
        [[s / 2, s / 2] for s in fitted.std],
    )
    stored = TabularTransformer(
        scaling="gmm", scales={"all": mixture.to_dict()}, amount_max=fitted.amount_max
    )
    text = stored.to_json()
    path = tmp_path / "preprocessing.json"
    path.write_text(text)
    TabularTransformer.load(path)  # as fitted, it loads
    halve = lambda p: p["scales"]["all"].__setitem__(  # noqa: E731
        "weights", [[w / 2 for w in column] for column in p["scales"]["all"]["weights"]]
    )
    assert _refused(path, halve) == (
        f"{path} holds the scale of Time with mixture weights summing to 0.5, not 1 (and 29 more "
        f"column(s)); {RETRAIN}"
    )
    path.write_text(text)
    far = lambda p: p["scales"]["all"]["means"][4].__setitem__(0, 1e300)  # noqa: E731
    assert _refused(path, far) == (
        f"{path} holds the scale of V4 with mixture parameter 1e+300 beyond 1e+16; {RETRAIN}"
    )


def test_references_that_are_not_numbers_are_one_line(frame, tmp_path) -> None:
    """References are read by the meaning check alone: text there is refused, not a traceback."""
    path = _saved(frame, tmp_path, **PRODUCT)
    edit = lambda p: p["scales"]["0"]["quantile"]["references"].__setitem__(3, "x")  # noqa: E731
    assert _refused(path, edit) == f"{path} holds parameters that are not numbers; {RETRAIN}"


@pytest.mark.parametrize(
    "options",
    [
        {"per_class": True, "quantile_columns": ["V5", "V6"]},
        {"scaling": "quantile", "per_class": True},
    ],
    ids=["mixed", "quantile"],
)
def test_a_fit_on_values_at_the_validated_limit_loads(frame, tmp_path, options) -> None:
    """Knots extended past the outermost groups reach beyond 1e15, the largest value validation
    lets in (a constant column's by as much again): a real fit is never refused."""
    rng = np.random.default_rng(0)
    at_limit = frame.assign(V5=rng.uniform(-MAX_ABS_VALUE, MAX_ABS_VALUE, len(frame)))
    at_limit["V6"] = MAX_ABS_VALUE
    path = _saved(at_limit, tmp_path, **options)
    scale = json.loads(path.read_text())["scales"]["0"]
    knots = np.abs((scale if "scaling" in options else scale["quantile"])["quantiles"])
    assert knots.max() > MAX_ABS_VALUE
    TabularTransformer.load(path)


def test_a_knot_a_rounding_below_the_one_before_counts_as_sorted() -> None:
    """np.nanpercentile (scikit-learn's quantiles) does not promise monotone knots to the bit."""
    knots = [[0.0], [1e5], [1e5 - 1e-8], [2e5]]
    assert not QuantileScale(knots, [0.0, 0.3, 0.6, 1.0]).senseless_columns()
    knots[2] = [1e5 - 1.0]
    assert QuantileScale(knots, [0.0, 0.3, 0.6, 1.0]).senseless_columns() == {
        0: "quantiles not sorted (knot 3 of 4, 99999, below knot 2, 100000)"
    }
