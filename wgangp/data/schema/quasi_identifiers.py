"""Quasi-identifiers: columns that single a customer out beside the others without naming them,
and how coarse they train (``coarsen``, :func:`~wgangp.data.schema.column_codes.coarsened`).

- **A date of birth** is kept as its year (``coarsen: year``): its exact dates would ship as a
  transform's point masses and bounds whenever a customer's rows repeat one, and come back in
  samples. A column is one when its name says so (``dob``, ``birth_date``, ``geburtsdatum``,
  ``date_naissance``, ``fecha_nacimiento``, ...) or its shape does: its latest dates are at least
  :data:`ADULT_YEARS` years before the earliest of the table's other dates (the customers were
  born; the transactions happened).
- **Coordinates** (``lat``, ``lon``, ``home_latitude``, ...) are kept to :data:`COORDINATE_STEP`
  degrees, about 11 km: a region, not a home.

A card number's last digits are an identifier (dropped: :mod:`.identifiers`). An edited schema
may delete ``coarsen``: that is the user's decision, and the exact values then train and ship.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from wgangp.data.schema.identifier_names import name_tokens
from wgangp.data.schema.table_schema import ColumnSchema

#: Name words of a date of birth, in the languages the product meets most.
BIRTH_TOKENS = frozenset(
    {"dob", "birth", "birthdate", "birthday", "bday", "born", "geburtsdatum", "geburtstag"}
    | {"geboren", "naissance", "nacimiento", "nascita", "geboortedatum", "nascimento"}
)
#: Name words of a latitude or a longitude (``long`` only beside a latitude).
LATITUDE_TOKENS = frozenset({"lat", "latitude", "breitengrad"})
LONGITUDE_TOKENS = frozenset({"lon", "lng", "longitude", "laengengrad"})
#: A date column this many years or more before every other date of the table is a birth date.
ADULT_YEARS = 16
#: Coordinates are kept to this many degrees.
COORDINATE_STEP = 0.1


def coarsening(column: ColumnSchema, others: Sequence[ColumnSchema]) -> str | float | None:
    """How coarse ``column`` (inferred, among ``others``) must train: ``year``, a step, None."""
    tokens = name_tokens(column.name)
    if column.kind == "datetime":
        return "year" if tokens & BIRTH_TOKENS or _before_the_rest(column, others) else None
    if column.kind != "continuous" or column.bounds is None:
        return None
    low, high = (abs(float(bound)) for bound in column.bounds)
    latitude = bool(tokens & LATITUDE_TOKENS)
    longitude = bool(tokens & LONGITUDE_TOKENS) or "long" in tokens and _has_latitude(others)
    limit = 90.0 if latitude else 180.0
    return COORDINATE_STEP if (latitude or longitude) and max(low, high) <= limit else None


def described(column: ColumnSchema) -> str:
    """What the coarsening keeps, completing "column X ..."."""
    if column.kind == "datetime":
        return "is a date of birth (a quasi-identifier): kept as its year (coarsen: year)"
    step = float(column.coarsen or 0.0)
    return (
        f"holds coordinates (a quasi-identifier): kept to {column.coarsen} degrees, about "
        f"{step * 111:.0f} km (coarsen: {column.coarsen})"
    )


def _before_the_rest(column: ColumnSchema, others: Sequence[ColumnSchema]) -> bool:
    dated = [c for c in others if c.kind == "datetime" and c.bounds is not None and c is not column]
    if column.bounds is None or not dated:
        return False
    latest = _utc(column.bounds[1])
    earliest = min(_utc(c.bounds[0]) for c in dated if c.bounds is not None)
    return latest <= earliest - pd.DateOffset(years=ADULT_YEARS)


def _utc(bound: object) -> pd.Timestamp:
    stamp = pd.Timestamp(str(bound))
    return stamp.tz_convert("UTC").tz_localize(None) if stamp.tzinfo is not None else stamp


def _has_latitude(columns: Sequence[ColumnSchema]) -> bool:
    return any(name_tokens(c.name) & LATITUDE_TOKENS for c in columns)
