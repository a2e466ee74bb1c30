"""A feature column's fitted numbers released under entity-level differential privacy.

:func:`~wgangp.data.transform.fitted_column.fit_column` keeps every stored number no entity's own
(means of >= k entities); under a privacy budget that is not enough, so :func:`fit_private_column`
releases each through :mod:`wgangp.privacy.mechanisms` instead and returns the releases'
``dp_accounting`` events for the run's accountant. Per column:

- a number or a datetime: first its bounds, unless the schema gives them, off the geometric grid
  (:func:`~wgangp.privacy.mechanisms.dp_bounds`: 0.1% and 99.9%, moved out to their bins'
  edges, weak evidence spread evenly: with a few hundred entities the tails are below the
  noise, and pulling them in would clip the column to its middle), a datetime's off
  :data:`DATE_GRID` instead, with weak evidence spread evenly at every width (noise that drowns
  every count gives the grid's whole span, never an instant pandas cannot hold); then one noisy
  quantile tree
  per scale (every row, and each class unless ``per_class`` is false) on 1,024 equal bins
  between the bounds, read with weak evidence spread evenly too (inside the bounds there are no
  empty reaches to avoid, and piling it into one bin would make the column of a few hundred
  entities a handful of values); the scale is a quantile scale on those knots, the fill its
  median. Quantile scales always, per class or not
  as the caller says: choosing a scale by the rows (point masses, a class's row count) would be
  a release of its own. Dates are not rounded to days (finding that every date is whole would
  read the rows).
- a categorical (its levels are the schema's, public or released before): its fill is the level
  of the largest noisy count, one noisy histogram.

Each release is a Gaussian mechanism of sensitivity 1 at ``noise_multiplier``: an entity's rows
weigh 1/m each, so the entity moves every histogram by at most 1 in L2.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import dp_accounting
import numpy as np
import pandas as pd

from wgangp.data.schema.column_codes import bound_seconds, column_codes
from wgangp.data.schema.table_schema import CLASSES, ColumnSchema
from wgangp.data.transform.fitted_column import (
    ALL_ROWS,
    FittedColumn,
    bounds_value,
    native_value,
    on_step,
)
from wgangp.data.transform.scales import QuantileScale
from wgangp.privacy.mechanisms import (
    BOUND_SPREAD,
    DEFAULT_GRID,
    dp_bounds,
    dp_quantiles,
    noisy_histogram,
)

#: The share of a column's entities fitted bounds leave out at either end.
BOUND_TAIL = 0.001


@dataclass
class PrivateFit:
    """How a transform is fitted under a budget: each release's noise multiplier, the random
    generator of its noise, and the events released so far (the accountant composes them)."""

    noise_multiplier: float
    rng: np.random.Generator
    events: list[dp_accounting.DpEvent] = field(default_factory=list)
    #: A scale per class besides every row's (two more releases a number): worth it only where
    #: each class has thousands of entities, as each release's noise is the same.
    per_class: bool = True


#: The probabilities of a scale's knots: its ends (a quantile scale spans 0 to 1; read as the
#: edges of the outermost bins given any share), the bounds' tails, then 63 evenly spaced.
KNOTS = np.concatenate([[0.0, BOUND_TAIL], np.linspace(0.01, 0.99, 63), [1 - BOUND_TAIL, 1.0]])
#: Equal bins between a column's released (or given) bounds, where its knots are read.
BINS = 1024
#: The public grid a datetime column's bounds are released on: 256 equal bins (2.15 years each)
#: from 1700 to 2250, a span that holds the dates of tables (birth dates, transactions) and that
#: pandas can write; dates outside it are clipped into it. The numbers' geometric grid is no grid
#: for dates (seconds since 1970): under heavy noise its tree read put a bound at +-1e15 s, no
#: date, or at 1e-8 s, every date 1970-01-01. docs/privacy.md compares the grids.
DATE_GRID = np.linspace(bound_seconds("1700-01-01"), bound_seconds("2250-01-01"), 257)
DATE_GRID.flags.writeable = False


def fit_private_column(
    values: pd.Series,
    column: ColumnSchema,
    classes: np.ndarray,
    entities: np.ndarray,
    *,
    noise_multiplier: float,
    rng: np.random.Generator,
    source: str,
    per_class: bool = True,
) -> tuple[FittedColumn, list[dp_accounting.DpEvent]]:
    """``column``'s fill, bounds and scales from DP releases of its present values (module doc),
    and the releases' events; ``entities``: each row's entity code (a row its own without one)."""
    # No present cell is no refusal here: a kind the noisy votes released that no training cell
    # has (a rare draw) leaves every cell a gap, and refusing would tell so. The releases below
    # are then noise alone; the column is learnt as always empty.
    codes, gaps = column_codes(values, column, source)
    present = codes[~gaps]
    owners = np.asarray(entities, np.int64)[~gaps]
    if column.kind == "categorical":
        levels = column.levels or ()
        edges = np.arange(len(levels) + 1, dtype=np.float64) - 0.5
        counts, event = noisy_histogram(present, owners, edges, noise_multiplier, rng)
        return FittedColumn(column, fill=levels[int(np.argmax(counts))]), [event]
    events: list[dp_accounting.DpEvent] = []
    if column.bounds is not None:  # the schema's: public
        low, high = FittedColumn(column, fill=0).low_high()
    else:
        dates = column.kind == "datetime"
        grid, spread = (DATE_GRID, len(DATE_GRID)) if dates else (DEFAULT_GRID, BOUND_SPREAD)
        (low, high), event = dp_bounds(
            present, owners, noise_multiplier, rng, edges=grid, spread=spread
        )
        events.append(event)
        column = replace(column, bounds=bounds_value(column, low, high))
    edges = _equal_bins(low, high, zero_bin=column.kind != "datetime")
    knots, event = dp_quantiles(present, owners, KNOTS, noise_multiplier, rng, edges, len(edges))
    knots = _zero_atom(knots, edges)
    events.append(event)
    fitted = FittedColumn(column, fill=0, quantile=True)
    low, high = fitted.low_high()
    median = float(np.interp(0.5, KNOTS, knots))
    fitted.fill = native_value(column.kind, float(np.clip(on_step(fitted, median), low, high)))
    fitted.scales[ALL_ROWS] = _scale(knots)
    present_classes = np.asarray(classes)[~gaps]
    for c in CLASSES if per_class else ():
        of_class = present_classes == c
        knots, event = dp_quantiles(
            present[of_class], owners[of_class], KNOTS, noise_multiplier, rng, edges, len(edges)
        )
        knots = _zero_atom(knots, edges)
        events.append(event)
        fitted.scales[str(c)] = _scale(knots)
    return fitted, events


def _scale(knots: np.ndarray) -> QuantileScale:
    """A quantile scale on released knots (non-decreasing: the mechanism reads them so)."""
    return QuantileScale([[float(k)] for k in knots], [float(p) for p in KNOTS])


def _equal_bins(low: float, high: float, zero_bin: bool = True) -> np.ndarray:
    """``BINS`` equal bins between the bounds, and, when 0 lies inside, a bin of width 1e-9 of
    the range at 0: a column's exact zeros (a debt, an asset, a seniority of none) fall in it,
    and come back as 0 (:func:`_zero_atom`) rather than spread over the first bin. Not for
    dates (``zero_bin`` false): 1970-01-01T00:00 is no value a date column piles up at."""
    if not high > low:
        return DEFAULT_GRID
    edges = np.linspace(low, high, BINS + 1)
    if zero_bin and low <= 0 < high:
        edges = np.unique(np.concatenate([edges, [0.0, _zero_width(low, high)]]))
    return edges


def _zero_width(low: float, high: float) -> float:
    return 1e-9 * (high - low)


def _zero_atom(knots: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Knots read inside the zero bin of :func:`_equal_bins`, set to 0 (a public value)."""
    if not (edges[0] <= 0 < edges[-1]) or 0.0 not in edges:
        return knots
    width = _zero_width(edges[0], edges[-1])
    return np.where((knots >= 0) & (knots < width), 0.0, knots)
