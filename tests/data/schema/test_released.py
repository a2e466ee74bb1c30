"""The schema a private run ships (:mod:`wgangp.data.schema.released`): levels by thresholded
selection, no bounds and no counts read off the rows; a given schema's levels and bounds kept."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from wgangp.data.schema.inference import infer_schema
from wgangp.data.schema.released import released_schema

THRESHOLD = 12.0


def _frame() -> pd.DataFrame:
    """300 rows, one entity each but for ``solo`` (one entity's 40 rows): levels held by 200,
    90 and 6 entities; ``gap`` empty in some rows."""
    rng = np.random.default_rng(0)
    city = ["paris"] * 200 + ["lyon"] * 90 + ["nice"] * 6 + ["solo"] * 40
    frame = pd.DataFrame(
        {
            "city": city,
            "amount": rng.lognormal(3, 1, len(city)).round(2),
            "gap": np.where(rng.random(len(city)) < 0.1, np.nan, rng.normal(size=len(city))),
            "flag": rng.random(len(city)) < 0.5,
            "status": np.where(np.arange(len(city)) % 10 == 0, "bad", "good"),
        }
    )
    return frame


def _entities(frame: pd.DataFrame) -> np.ndarray:
    entities = np.arange(len(frame))
    entities[frame["city"].eq("solo").to_numpy()] = -1
    return entities


def _release(frame: pd.DataFrame, *, inferred: bool = True, seed: int = 0):
    schema = infer_schema(frame, "status", "bad")
    return schema, released_schema(
        schema,
        frame,
        _entities(frame),
        inferred=inferred,
        noise_multiplier=1.0,
        threshold=THRESHOLD,
        min_entities=5,
        rng=np.random.default_rng(seed),
    )


def test_levels_few_entities_hold_are_not_released_whatever_their_rows() -> None:
    schema, (released, events, selections) = _release(_frame())
    assert "solo" in schema.column("city").levels  # 40 rows: the k-row rule lists it
    city = released.column("city")
    assert city.levels == ("lyon", "paris", "other") and city.other == "other"
    assert released.column("flag").levels == schema.column("flag").levels  # booleans: public
    assert released.column("status").levels == ("bad", "good")
    assert selections == 2 and len(events) == 2  # city and the label


def test_no_bound_and_no_count_is_read_off_the_rows() -> None:
    schema, (released, _, _) = _release(_frame())
    assert schema.column("amount").bounds is not None and schema.column("gap").missing > 0
    for column in released.columns:
        assert column.missing == 0
        assert column.kind == "categorical" or column.bounds is None
    assert released.column("gap").nullable  # the table's description: public
    assert released.rows is None and released.label_counts == ()
    text = released.to_yaml()
    assert "solo" not in text and "nice" not in text


def test_the_class_to_synthesize_stays_however_few_hold_it() -> None:
    frame = _frame()
    frame.loc[:2, "status"] = "rare"
    schema = infer_schema(frame, "status", "rare")
    released, _, _ = released_schema(
        schema,
        frame,
        _entities(frame),
        inferred=True,
        noise_multiplier=1.0,
        threshold=THRESHOLD,
        min_entities=5,
        rng=np.random.default_rng(0),
    )
    assert released.positive == "rare" and "rare" in released.column("status").levels


@pytest.mark.parametrize("seed", range(3))
def test_a_given_schema_is_public_its_counts_are_not(seed: int) -> None:
    schema, (released, events, _) = _release(_frame(), inferred=False, seed=seed)
    assert events == []
    for column, given in zip(released.columns, schema.columns, strict=True):
        assert (column.levels, column.bounds) == (given.levels, given.bounds)
        assert column.missing == 0
