"""The rows the evaluation is given, checked against the table's schema before any work.

Real frames and a sampler's rows must hold the schema's features (and real frames its label):
numbers that are numbers, gaps only where the schema allows them, no infinite value, every
category one of its column's levels. Each failure is one line (:class:`DataError`) naming the
frame and the column; a table of numbers only is checked as one float matrix. The evaluation
works on the features and, beside them, each row's class (1: the rare class): the class is
never a column, so no column name can collide with it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from wgangp.data.schema.table_schema import RARE, TableSchema
from wgangp.errors import DataError
from wgangp.evaluation.encoding import NUMBER_KINDS, level_codes, seconds

#: ``sample(n, seed)`` -> n generated rows of the rare class.
RareSampler = Callable[[int, int], pd.DataFrame]


def check_frame(
    frame: pd.DataFrame, name: str, schema: TableSchema
) -> tuple[pd.DataFrame, np.ndarray]:
    """The frame's features (numbers as float64, datetimes as datetimes, categories as they
    are) and each row's class (1: the rare class); one-line DataError when unusable."""
    if not isinstance(frame, pd.DataFrame):
        raise DataError(f"{name} must be a pandas DataFrame, got {type(frame).__name__}")
    columns = [c.name for c in schema.features]
    missing = [c for c in [*columns, schema.label] if c not in frame.columns]
    if missing:
        raise DataError(
            f"{name} lacks columns {missing[:5]}: pass frames with the table's "
            f"{len(columns)} feature columns and its label {schema.label}"
        )
    classes = schema.classes(frame[schema.label].reset_index(drop=True))
    values = checked_features(frame, schema, f"{name} has")
    return values.reset_index(drop=True), classes


def checked_features(frame: pd.DataFrame, schema: TableSchema, who: str) -> pd.DataFrame:
    """The schema's features of ``frame``; NaN only in nullable columns, no inf, every category
    one of its levels (``who`` starts each one-line DataError: "real_train has")."""
    features = schema.features
    if all(c.kind in ("continuous", "integer") and not c.nullable for c in features):
        try:  # a table of numbers only (Kaggle's): one float matrix
            values = frame.loc[:, [c.name for c in features]].astype(np.float64)
        except (TypeError, ValueError) as err:
            raise DataError(f"{who} non-numeric values ({err}): pass numeric columns") from err
        if not np.isfinite(values.to_numpy()).all():
            raise DataError(f"{who} NaN or infinite feature values: drop or fix those rows")
        return values
    out: dict[str, pd.Series] = {}
    for column in features:
        series = frame[column.name].reset_index(drop=True)
        if column.kind in NUMBER_KINDS:
            try:
                if column.kind == "datetime":
                    series = pd.to_datetime(series)
                    numbers = seconds(series)
                else:
                    series = series.astype(np.float64)
                    numbers = series.to_numpy()
            except (TypeError, ValueError) as err:
                raise DataError(
                    f"{who} values in {column.name!r} that are not {column.kind} ({err})"
                ) from err
            if np.isinf(numbers).any():
                raise DataError(f"{who} infinite values in {column.name!r}: drop or fix them")
        elif column.kind == "categorical":
            present = series.notna().to_numpy()
            unknown = present & (level_codes(series, column) < 0)
            if unknown.any():
                value = series[unknown].iloc[0]
                raise DataError(
                    f"{who} {column.name!r} = {value!r}, not one of its levels "
                    f"{list(column.levels or ())[:10]}"
                )
        if not column.nullable and series.isna().any():
            raise DataError(
                f"{who} NaN or gaps in {column.name!r}, which the schema says has none "
                "(nullable: false)"
            )
        out[column.name] = series
    return pd.DataFrame(out)


def checked_sampler(sample_rare: RareSampler, schema: TableSchema) -> RareSampler:
    """Wrap the sampler so a wrong shape, column or value fails with one clear line; the rows
    come back as their features."""
    features = [c.name for c in schema.features]

    def draw(n: int, seed: int) -> pd.DataFrame:
        rows = sample_rare(int(n), int(seed))
        if not isinstance(rows, pd.DataFrame) or len(rows) != n:
            got = len(rows) if isinstance(rows, pd.DataFrame) else type(rows).__name__
            raise DataError(
                f"the rare-class sampler returned {got} instead of a DataFrame of {n} rows"
            )
        missing = [c for c in features if c not in rows.columns]
        if missing:
            raise DataError(f"the rare-class sampler's rows lack columns {missing[:5]}")
        label = schema.label
        if label in rows.columns and not (schema.classes(rows[label]) == RARE).all():
            raise DataError(
                f"the rare-class sampler returned rows with {label} != {schema.positive}; it must "
                "draw rare-class rows only"
            )
        try:
            values = checked_features(rows, schema, "the rare-class sampler returned")
        except DataError as err:
            if "NaN or infinite" in str(err):
                raise DataError(
                    "the rare-class sampler returned NaN or infinite values: the generator diverged"
                ) from None
            raise
        return values.reset_index(drop=True)

    return draw
