"""The rules a schema meets: each mistake in an edited file is one line naming the column and fix.

:class:`~wgangp.data.schema.table_schema.ColumnSchema` and
:class:`~wgangp.data.schema.table_schema.TableSchema` call these when they are built, so no
schema object is ever invalid. Every check is one pass over the columns and the levels (repeats
counted, levels looked up through one :class:`~wgangp.data.schema.cells.LevelLookup`): an edited
schema of 40,000 columns or a categorical of 100,000 levels is checked in well under a second."""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from typing import Any, Protocol

import pandas as pd

from wgangp.data.numbers import MAX_ABS_VALUE
from wgangp.data.schema.cells import LevelLookup, Value, repeated_names, shown_text
from wgangp.data.schema.text_formats import (
    check_date_format,
    check_number_format,
    check_zone,
    instant,
    zones,
)
from wgangp.errors import ConfigError

KINDS = ("continuous", "integer", "categorical", "datetime")
NUMERIC_KINDS = ("continuous", "integer")


class ColumnSchema(Protocol):
    """What the checks read of a :class:`~wgangp.data.schema.table_schema.ColumnSchema` (named here
    without importing it: the schema module imports this one)."""

    # Read-only, as the frozen dataclass holds them.
    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def bounds(self) -> tuple[Any, Any] | None: ...

    @property
    def levels(self) -> tuple[Value, ...] | None: ...

    @property
    def missing(self) -> int: ...

    @property
    def nullable(self) -> bool: ...

    @property
    def format(self) -> str | None: ...

    @property
    def other(self) -> Value | None: ...

    @property
    def zone(self) -> str | None: ...

    @property
    def log(self) -> bool: ...

    @property
    def round(self) -> float | None: ...

    @property
    def coarsen(self) -> str | float | None: ...

    @property
    def clip(self) -> bool: ...

    @property
    def lookup(self) -> LevelLookup: ...


class TableSchema(Protocol):
    """What the checks read of a :class:`~wgangp.data.schema.table_schema.TableSchema`."""

    @property
    def columns(self) -> tuple[ColumnSchema, ...]: ...

    @property
    def names(self) -> tuple[str, ...]: ...

    @property
    def label(self) -> str: ...

    @property
    def positive(self) -> Value: ...

    @property
    def label_counts(self) -> tuple[tuple[Value, int], ...]: ...

    @property
    def rows(self) -> int | None: ...

    def column(self, name: str) -> ColumnSchema: ...


def unknown_keys(raw: Mapping, known: tuple[str, ...], where: str) -> None:
    """A key the schema does not know is a typo: one line with the close name."""
    for key in raw:
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"valid keys: {', '.join(known)}"
            raise ConfigError(f"{where} has an unknown key '{key}'; {hint}")


def check_column(column: ColumnSchema) -> None:
    """Every rule of one column: its kind, gaps, format, zone, levels, bounds and options."""
    name = column.name
    if column.kind not in KINDS:
        close = difflib.get_close_matches(str(column.kind), KINDS, n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        raise ConfigError(
            f"column {name!r} has an unknown kind {column.kind!r}; {hint}"
            f"use one of {', '.join(KINDS)}"
        )
    missing = column.missing
    if isinstance(missing, bool) or not isinstance(missing, int) or missing < 0:
        raise ConfigError(
            f"column {name!r}: missing must be a count >= 0 of empty cells, got {column.missing!r}"
        )
    if column.missing and not column.nullable:
        raise ConfigError(
            f"column {name!r} has {column.missing} missing value(s) but nullable: false; set "
            "nullable: true, or fix or drop those rows"
        )
    _check_format(column)
    _check_zone(column)
    if column.kind == "categorical":
        _check_levels(column)
    elif column.other is not None:
        raise ConfigError(
            f"column {name!r} is {column.kind} but has other:; it names a categorical's level: "
            "set kind: categorical or delete other"
        )
    elif column.levels is not None:
        raise ConfigError(
            f"column {name!r} is {column.kind} but has levels; levels belong to categorical "
            "columns: set kind: categorical or delete levels"
        )
    if column.bounds is not None:
        if column.kind == "categorical":
            raise ConfigError(
                f"column {name!r} is categorical but has bounds; delete bounds (levels say which "
                "values it takes)"
            )
        _check_bounds(column)
    _check_options(column)


def check_table(table: TableSchema) -> None:
    """The table's rules: distinct columns, a categorical label among them with its positive
    level, label counts of its levels."""
    names = list(table.names)  # the schema's own, computed once for every later lookup
    repeated = repeated_names(names)
    if repeated:
        raise ConfigError(f"column(s) {', '.join(repeated)} appear more than once; keep one entry")
    if table.label not in set(names):
        close = difflib.get_close_matches(table.label, names, n=1)
        hint = f"did you mean '{close[0]}'?" if close else "name one of the columns"
        raise ConfigError(f"label {table.label!r} is not one of the columns; {hint}")
    if len(names) < 2:
        raise ConfigError("the schema has the label and no other column; keep at least one feature")
    label = table.column(table.label)
    if label.kind != "categorical":
        raise ConfigError(
            f"label column {table.label!r} is {label.kind}; the label must be categorical, its "
            "levels are the classes"
        )
    lookup = label.lookup  # the label column's own, which the schema reads its positive by
    if lookup.find(table.positive) is None:
        raise ConfigError(
            f"positive value {table.positive!r} is not among the levels of {table.label!r} "
            f"({', '.join(shown_text(level) for level in lookup.levels)}); name one of them"
        )
    for value, count in table.label_counts:
        if lookup.find(value) is None:
            raise ConfigError(
                f"label_counts names {value!r}, which is not a level of {table.label!r}; "
                "add it to levels or delete it"
            )
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ConfigError(f"label_counts of {value!r} must be a row count >= 0, got {count!r}")
    if table.rows is not None and (
        isinstance(table.rows, bool) or not isinstance(table.rows, int) or table.rows < 0
    ):
        raise ConfigError(f"rows must be a count >= 0, got {table.rows!r}")


def _check_options(column: ColumnSchema) -> None:
    """``log``, ``round`` and ``clip`` shape a number column's values (docs/schema.md)."""
    name, numeric = column.name, column.kind in NUMERIC_KINDS
    if not numeric and (column.log or column.round is not None or not column.clip):
        raise ConfigError(
            f"column {name!r} is {column.kind}; log, round and clip are options of continuous "
            "and integer columns: delete them"
        )
    if column.log and column.bounds is not None and column.bounds[0] < 0:
        raise ConfigError(
            f"column {name!r} has log: true but a negative lower bound {column.bounds[0]}; a log "
            "column holds values >= 0: delete log or fix the bounds"
        )
    step = column.round
    if step is not None and (
        isinstance(step, bool)
        or not isinstance(step, int | float)
        or not math.isfinite(step)
        or step <= 0
    ):
        raise ConfigError(
            f"column {name!r}: round must be a step > 0 (0.01 rounds to cents), got {step!r}"
        )
    _check_coarsen(column)


#: What ``coarsen`` may say of a datetime column.
DATE_COARSENINGS = ("year",)


def _check_coarsen(column: ColumnSchema) -> None:
    """``coarsen``: ``year`` for a datetime, a step > 0 for a number, nothing for levels."""
    coarsen, name = column.coarsen, column.name
    if coarsen is None:
        return
    if column.kind == "datetime":
        if coarsen not in DATE_COARSENINGS:
            raise ConfigError(
                f"column {name!r}: coarsen of a datetime column must be year (a date of birth "
                f"kept as its year), got {coarsen!r}"
            )
    elif column.kind in NUMERIC_KINDS:
        if (
            isinstance(coarsen, bool)
            or not isinstance(coarsen, int | float)
            or not math.isfinite(coarsen)
            or coarsen <= 0
        ):
            raise ConfigError(
                f"column {name!r}: coarsen of a number column must be a step > 0 (0.1 keeps "
                f"coordinates to about 11 km), got {coarsen!r}"
            )
    else:
        raise ConfigError(
            f"column {name!r} is {column.kind}; coarsen is an option of datetime and number "
            "columns: delete it"
        )


def _check_format(column: ColumnSchema) -> None:
    fmt, name = column.format, column.name
    if fmt is None:
        return
    if column.kind == "categorical":
        raise ConfigError(
            f"column {name!r} is categorical but has a format; formats belong to datetime and "
            "number columns: delete format"
        )
    if column.kind == "datetime" and not check_date_format(fmt):
        raise ConfigError(
            f"column {name!r}: format {fmt!r} is not a date format; write strftime codes such as "
            "format: '%d/%m/%Y', or ISO8601"
        )
    if column.kind in NUMERIC_KINDS and not check_number_format(fmt):
        raise ConfigError(
            f"column {name!r}: format {fmt!r} is not a number format; write 1,234.5 (comma "
            "thousands separators) with at most one currency sign ($1,234.5, 1,234.5€), or "
            "delete format for plain numbers"
        )


def _check_zone(column: ColumnSchema) -> None:
    """A datetime column's time zone: an IANA name (``Europe/Paris``), ``UTC`` or an offset
    (``UTC+01:00``); generated rows come back in it."""
    zone, name = column.zone, column.name
    if zone is None:
        return
    if column.kind != "datetime":
        raise ConfigError(
            f"column {name!r} is {column.kind} but has a zone; a time zone belongs to datetime "
            "columns: delete zone"
        )
    if not check_zone(zone):
        close = difflib.get_close_matches(str(zone), zones(), n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        raise ConfigError(
            f"column {name!r}: zone {zone!r} is not a time zone; {hint}write an IANA name such "
            "as zone: Europe/Paris, UTC or UTC+01:00"
        )


def _check_levels(column: ColumnSchema) -> None:
    levels = column.levels
    if not levels:
        raise ConfigError(
            f"column {column.name!r} is categorical but lists no levels; write levels: [a, b, ...]"
        )
    for level in levels:
        if not isinstance(level, str | int | float | bool) or (
            isinstance(level, float) and not math.isfinite(level)
        ):
            raise ConfigError(
                f"column {column.name!r}: level {level!r} is not a plain value; levels are text "
                "or numbers"
            )
    repeated = repeated_names(shown_text(level) for level in levels)
    if repeated:
        raise ConfigError(
            f"column {column.name!r} lists level(s) {', '.join(repeated)} more than once; keep one"
        )
    if column.other is not None and column.lookup.find(column.other) is None:
        raise ConfigError(
            f"column {column.name!r}: other {column.other!r} is not one of its levels; add it to "
            "levels or delete other"
        )


def _check_bounds(column: ColumnSchema) -> None:
    name, (low, high) = column.name, column.bounds  # type: ignore[misc]  # called with bounds only
    if column.kind == "datetime":
        try:
            low_t, high_t = pd.Timestamp(str(low)), pd.Timestamp(str(high))
        except (ValueError, TypeError):
            raise ConfigError(
                f"column {name!r}: bounds {[low, high]!r} are not dates; write them as "
                "[2020-01-01, 2020-12-31T23:59:59]"
            ) from None
        if pd.isna(low_t) or pd.isna(high_t):
            raise ConfigError(f"column {name!r}: bounds {[low, high]!r} are not dates")
        if instant(low_t, column.zone) > instant(high_t, column.zone):
            raise ConfigError(
                f"column {name!r}: bounds are reversed ({low} > {high}); write [min, max]"
            )
        return
    for bound in (low, high):
        if isinstance(bound, bool) or not isinstance(bound, int | float):
            raise ConfigError(
                f"column {name!r}: bound {bound!r} is not a number; write bounds: [min, max]"
            )
        if not math.isfinite(bound) or abs(bound) > MAX_ABS_VALUE:
            raise ConfigError(
                f"column {name!r}: bound {bound!r} is not a finite number of at most 1e+15 in "
                "magnitude; write the real range"
            )
        if column.kind == "integer" and not float(bound).is_integer():
            raise ConfigError(
                f"column {name!r} is integer but its bound {bound!r} is not; write whole numbers "
                "or set kind: continuous"
            )
    if low > high:
        raise ConfigError(
            f"column {name!r}: bounds are reversed ({low} > {high}); write [min, max]"
        )
