"""The bounds an inferred schema ships, that name no entity: the means of the 5 most extreme
entities' values (:func:`~wgangp.data.knots.private_range`), dates in whole units of their
resolution, a coarsened column's (``coarsen``) on its grid and rounded inward, so that values
clipped into them stay on it. Inference writes them; the check of an edited schema's bounds
reads them again (:mod:`wgangp.data.schema.validation`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from wgangp.data.knots import DEFAULT_MIN_ROWS, private_range
from wgangp.data.schema.column_codes import (
    coarsened,
    coarsened_inside,
    from_seconds,
    to_seconds,
)
from wgangp.data.schema.table_schema import ColumnSchema

#: A datetime column's resolutions, coarsest first, in seconds: its bounds are whole units.
_RESOLUTIONS = (86400.0, 3600.0, 60.0, 1.0)


def private_number_range(
    values: np.ndarray,
    owners: np.ndarray | None = None,
    *,
    whole: bool = False,
    coarsen: str | float | None = None,
) -> tuple[float, float]:
    """A number column's inferred bounds (:func:`~wgangp.data.knots.private_range`); a
    coarsened column's on its grid, rounded inward, so values clipped into them stay on it."""
    low, high = private_range(values, DEFAULT_MIN_ROWS, whole=whole, owners=owners)
    if coarsen is None:
        return low, high
    return coarsened_inside(low, high, ColumnSchema(name="x", kind="continuous", coarsen=coarsen))


def private_date_range(
    dates: pd.Series, owners: np.ndarray | None = None, zone: str | None = None
) -> tuple[float, float]:
    """A datetime column's (low, high) in seconds since 1970 UTC that names no entity: the means
    of its 5 earliest and 5 latest entities' values, in whole units of its resolution (day, hour,
    minute, second: the coarsest every value has), never a unit fewer than 5 entities hold."""
    seconds = to_seconds(pd.to_datetime(dates), zone)
    step = next((r for r in _RESOLUTIONS if np.all(np.mod(seconds, r) == 0)), None)
    if step is None:
        return private_range(seconds, DEFAULT_MIN_ROWS, whole=False, owners=owners)
    low, high = private_range(seconds / step, DEFAULT_MIN_ROWS, whole=True, owners=owners)
    return low * step, high * step


def date_text(seconds: float, zone: str | None = None) -> str:
    """Seconds since 1970 UTC as ISO text: in ``zone`` with its offset, or naive (UTC)."""
    stamp = pd.Timestamp(int(round(seconds * 1e9)), unit="ns")
    if zone is not None:
        stamp = stamp.tz_localize("UTC").tz_convert(zone)
    return stamp.isoformat()


def zone_of(dates: pd.Series) -> str | None:
    """The time zone of zone-aware dates, as a schema names it (``Europe/Paris``,
    ``UTC+01:00``); None for naive ones."""
    tz = getattr(pd.to_datetime(dates).dt, "tz", None)
    return None if tz is None else str(tz)


def date_bounds(
    dates: pd.Series,
    owners: np.ndarray | None = None,
    zone: str | None = None,
    coarsen: str | float | None = None,
) -> tuple[str, str]:
    """A datetime column's inferred bounds as ISO text: its private range, and for a coarsened
    column (``coarsen: year``) that range in whole years, rounded inward."""
    if coarsen is None:
        low, high = private_date_range(dates, owners)
        return date_text(low, zone), date_text(high, zone)
    probe = ColumnSchema(name="date", kind="datetime", coarsen=coarsen, zone=zone)
    seconds = coarsened(to_seconds(pd.to_datetime(dates), zone), probe)
    years = pd.Series(from_seconds(seconds, zone).to_numpy(), index=dates.index)
    low, high = coarsened_inside(*private_date_range(years, owners, zone), probe)
    return date_text(low, zone), date_text(high, zone)
