"""A table's schema as data: each column's kind, bounds, levels and gaps; the label and its class.

Kaggle's credit-card file has one shipped with the package (:mod:`wgangp.data.creditcard`); any
other table gets one by inference (:mod:`wgangp.data.schema_inference`) that the user can review and
edit as YAML. Every schema object is valid: construction checks it, and an edited file's mistake is
one line naming the column and the fix (:class:`~wgangp.errors.ConfigError`).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from wgangp.data.numbers import MAX_ABS_VALUE
from wgangp.data.schema_yaml import dump_yaml, load_yaml
from wgangp.data.text_formats import check_date_format, check_number_format
from wgangp.errors import ConfigError

KINDS = ("continuous", "integer", "categorical", "datetime")
NUMERIC_KINDS = ("continuous", "integer")
#: The version of the YAML layout written by :meth:`TableSchema.to_yaml`.
FORMAT_VERSION = 1
#: The internal class codes: the rare class (the one to synthesize) and the rest.
REST, RARE = 0, 1
CLASSES = (REST, RARE)
#: A label value or a categorical level, as YAML holds it.
Value = str | int | float | bool

_COLUMN_KEYS = (
    "name", "kind", "format", "bounds", "levels", "other", "missing", "nullable", "log", "round",
    "clip",
)  # fmt: skip
_TABLE_KEYS = ("version", "label", "positive", "rows", "label_counts", "columns")
_YAML_HEADER = (
    "# wgangp table schema: review it, edit it, then train with data.schema=<this file>.\n"
    "# kind: continuous | integer | categorical (levels: [...]) | datetime; bounds: [min, max]\n"
    "# (inferred: the means of the 5 smallest and 5 largest values, no row's own); missing:\n"
    "# empty cells seen; nullable: whether a cell may be empty. format: how dates or numbers\n"
    "# are written as text ('%d/%m/%Y', ISO8601, 1,234.5, $1,234.5); other: the level that\n"
    "# stands for every value fewer than 5 rows hold (those values are not listed). Options of\n"
    "# a number column (docs/schema.md): log: true (model log1p of values >= 0), round: 0.01\n"
    "# (a rounding step), clip: false (generated values may leave the bounds).\n"
    "# Delete a column's entry to drop that column; positive is the class to synthesize.\n"
)


@dataclass(frozen=True)
class ColumnSchema:
    """One column: what kind of values it holds, and the range or levels they were seen in."""

    name: str
    kind: str
    #: (min, max) for numbers (int for integer columns) and datetimes (ISO text); None: unknown.
    bounds: tuple[Any, Any] | None = None
    #: The categories of a categorical column, in a stable order.
    levels: tuple[Value, ...] | None = None
    missing: int = 0
    nullable: bool = False
    #: How the table writes the column's values as text: a date format (strftime codes or
    #: ``ISO8601``) or a number format (``1,234.5``, ``$1,234.5``); None: plain values.
    format: str | None = None
    #: A categorical's level that stands for every value not among ``levels`` (the values
    #: fewer than ``ship.min_atom_rows`` rows hold); None: such a value is refused.
    other: Value | None = None
    #: A number column modelled as log1p of its values (all >= 0): a long right tail.
    log: bool = False
    #: The step generated values are rounded to (0.01: cents); None: not rounded (integers: 1).
    round: float | None = None
    #: Whether generated values are clipped into the bounds (fitted privately when absent).
    clip: bool = True

    def __post_init__(self) -> None:
        _check_column(self)
        if self.other is not None:  # an edited ``other: 1`` names the level itself
            object.__setattr__(self, "other", find_value(self.levels or (), self.other))

    @property
    def value_type(self) -> str:
        """The type of the column's values as a generated frame holds them, in MLflow's names
        (long, double, string, boolean, datetime); a nullable integer comes back as double."""
        if self.kind == "categorical":
            levels = self.levels or ()
            if all(isinstance(v, bool) for v in levels):
                return "boolean"
            if all(isinstance(v, int) and not isinstance(v, bool) for v in levels):
                return "long"
            return "string" if all(isinstance(v, str) for v in levels) else "double"
        if self.kind == "datetime":
            return "datetime"
        return "long" if self.kind == "integer" and not self.nullable else "double"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "kind": self.kind}
        if self.format is not None:
            out["format"] = self.format
        if self.bounds is not None:
            out["bounds"] = list(self.bounds)
        if self.levels is not None:
            out["levels"] = list(self.levels)
        if self.other is not None:
            out["other"] = self.other
        out["missing"] = self.missing
        out["nullable"] = self.nullable
        if self.log:
            out["log"] = True
        if self.round is not None:
            out["round"] = self.round
        if not self.clip:
            out["clip"] = False
        return out

    @classmethod
    def from_dict(cls, raw: Any, where: str) -> ColumnSchema:
        """A column from its YAML mapping; ``where`` names it in errors."""
        if not isinstance(raw, Mapping):
            raise ConfigError(f"{where} is not a mapping; write name: ..., kind: ...")
        _unknown_keys(raw, _COLUMN_KEYS, where)
        name = raw.get("name")
        if not isinstance(name, str) or not name.strip():
            raise ConfigError(f"{where} has no name; every column needs name: <column>")
        bounds, levels = raw.get("bounds"), raw.get("levels")
        if bounds is not None and (not isinstance(bounds, list) or len(bounds) != 2):
            raise ConfigError(f"column {name!r}: bounds must be [min, max], got {bounds!r}")
        if levels is not None and not isinstance(levels, list):
            raise ConfigError(f"column {name!r}: levels must be a list, got {levels!r}")
        missing = raw.get("missing", 0)
        nullable = raw.get("nullable", bool(missing))
        if not isinstance(nullable, bool):
            raise ConfigError(f"column {name!r}: nullable must be true or false, got {nullable!r}")
        for key in ("log", "clip"):
            if key in raw and not isinstance(raw[key], bool):
                raise ConfigError(f"column {name!r}: {key} must be true or false, got {raw[key]!r}")
        return cls(
            name=name,
            kind=raw.get("kind"),  # type: ignore[arg-type] - checked in __post_init__
            bounds=tuple(bounds) if bounds is not None else None,  # type: ignore[arg-type]
            levels=tuple(levels) if levels is not None else None,
            missing=missing,
            nullable=nullable,
            format=raw.get("format"),
            other=raw.get("other"),
            log=raw.get("log", False),
            round=raw.get("round"),
            clip=raw.get("clip", True),
        )


@dataclass(frozen=True)
class TableSchema:
    """The columns in file order, the label column, its values' counts and the class to make."""

    columns: tuple[ColumnSchema, ...]
    label: str
    positive: Value
    #: (value, rows) for each label value, as counted in the table; empty when not counted.
    label_counts: tuple[tuple[Value, int], ...] = ()
    rows: int | None = None
    version: int = field(default=FORMAT_VERSION)

    def __post_init__(self) -> None:
        _check_table(self)
        # data.positive=1 or an edited ``positive: yes`` names the level itself: keep the level.
        label_levels = self.column(self.label).levels or ()
        object.__setattr__(self, "positive", find_value(label_levels, self.positive))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(column.name for column in self.columns)

    @property
    def features(self) -> tuple[ColumnSchema, ...]:
        """Every column except the label."""
        return tuple(column for column in self.columns if column.name != self.label)

    @property
    def class_names(self) -> tuple[str, str]:
        """How messages name the two classes: ``Status!=bad`` (0) and ``Status=bad`` (1)."""
        return f"{self.label}!={self.positive}", f"{self.label}={self.positive}"

    def column(self, name: str) -> ColumnSchema:
        for column in self.columns:
            if column.name == name:
                return column
        raise KeyError(name)

    def classes(self, labels: pd.Series) -> np.ndarray:
        """Each row's class: 1 where the label holds ``positive`` (the class to synthesize),
        else 0. The code lives apart from the table's columns, so a label may be named
        anything, ``Class`` included."""
        positive = (self.positive,)
        # One lookup per distinct value, not per row: a label has a handful of values.
        lookup = {v: int(find_value(positive, _plain(v)) is not None) for v in pd.unique(labels)}
        return labels.map(lookup).to_numpy(dtype=np.int64)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"version": self.version, "label": self.label}
        out["positive"] = self.positive
        if self.rows is not None:
            out["rows"] = self.rows
        if self.label_counts:
            out["label_counts"] = dict(self.label_counts)
        out["columns"] = [column.to_dict() for column in self.columns]
        return out

    def to_yaml(self) -> str:
        """The schema as a commented YAML document that :meth:`from_yaml` reads back."""
        return _YAML_HEADER + dump_yaml(self.to_dict())

    @classmethod
    def from_dict(cls, raw: Any) -> TableSchema:
        if not isinstance(raw, Mapping):
            raise ConfigError("the schema is not a mapping; it needs label:, positive:, columns:")
        _unknown_keys(raw, _TABLE_KEYS, "the schema")
        version = raw.get("version", FORMAT_VERSION)
        if version != FORMAT_VERSION:
            raise ConfigError(f"version {version!r} is not supported; this wgangp reads version 1")
        columns = raw.get("columns")
        if not isinstance(columns, list) or not columns:
            raise ConfigError("the schema has no columns: list; write columns: [- name: ...]")
        label = raw.get("label")
        if not isinstance(label, str) or not label:
            raise ConfigError("the schema has no label:; name the label column, e.g. label: Class")
        counts = raw.get("label_counts") or {}
        if not isinstance(counts, Mapping):
            raise ConfigError(f"label_counts must map each label value to its rows, got {counts!r}")
        parsed = tuple(
            ColumnSchema.from_dict(column, f"columns entry {i + 1}")
            for i, column in enumerate(columns)
        )
        positive = raw.get("positive")
        if positive is None:
            raise ConfigError(
                f"the schema has no positive:; name the class of {label} to synthesize"
            )
        return cls(
            columns=parsed,
            label=label,
            positive=positive,
            label_counts=tuple(counts.items()),
            rows=raw.get("rows"),
            version=version,
        )

    @classmethod
    def from_yaml(cls, text: str, source: str = "schema") -> TableSchema:
        """Parse and check an (edited) schema; each mistake is one line starting with ``source``."""
        try:
            raw = load_yaml(text)
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            where = f"line {mark.line + 1}: " if mark is not None else ""
            problem = getattr(err, "problem", None) or type(err).__name__
            raise ConfigError(
                f"{source} is not valid YAML ({where}{problem}); fix it or regenerate it with "
                "python -m wgangp.schema"
            ) from None
        try:
            return cls.from_dict(raw)
        except ConfigError as err:
            raise ConfigError(f"{source}: {err}") from None

    @classmethod
    def load(cls, path: Path) -> TableSchema:
        """Read a schema file (``data.schema``)."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ConfigError(
                f"schema file not found: {path}; check data.schema, or write one with "
                "python -m wgangp.schema data.path=... > schema.yaml"
            ) from None
        except (OSError, UnicodeDecodeError) as err:
            reason = getattr(err, "strerror", None) or type(err).__name__
            raise ConfigError(
                f"cannot read schema file {path} ({reason}); check data.schema"
            ) from None
        return cls.from_yaml(text, source=str(path))


def find_value(values: tuple[Value, ...], wanted: Value) -> Value | None:
    """The value among ``values`` that ``wanted`` names: equal, or the same text
    (``data.positive=1`` names the integer 1; ``yes`` names ``Yes`` unless that is ambiguous)."""
    for value in values:
        if type(value) is type(wanted) and value == wanted:
            return value
    text = str(wanted)
    same = [value for value in values if _text(value) == text]
    if len(same) == 1:
        return same[0]
    folded = [value for value in values if _text(value).lower() == text.lower()]
    return folded[0] if len(folded) == 1 else None


def _plain(value: Any) -> Any:
    """A cell as the plain value levels are written in (numpy scalars unwrapped, whole floats
    of a column read as floats because of a gap elsewhere as integers)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _text(value: Value) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _unknown_keys(raw: Mapping, known: tuple[str, ...], where: str) -> None:
    for key in raw:
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"valid keys: {', '.join(known)}"
            raise ConfigError(f"{where} has an unknown key '{key}'; {hint}")


def _check_column(column: ColumnSchema) -> None:
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
    seen = [_text(level) for level in levels]
    repeated = sorted({text for text in seen if seen.count(text) > 1})
    if repeated:
        raise ConfigError(
            f"column {column.name!r} lists level(s) {', '.join(repeated)} more than once; keep one"
        )
    if column.other is not None and find_value(levels, column.other) is None:
        raise ConfigError(
            f"column {column.name!r}: other {column.other!r} is not one of its levels; add it to "
            "levels or delete other"
        )


def _check_bounds(column: ColumnSchema) -> None:
    name, (low, high) = column.name, column.bounds  # type: ignore[misc]
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
        if low_t > high_t:
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


def _check_table(table: TableSchema) -> None:
    names = [column.name for column in table.columns]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ConfigError(f"column(s) {', '.join(repeated)} appear more than once; keep one entry")
    if table.label not in names:
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
    levels = label.levels or ()
    if find_value(levels, table.positive) is None:
        raise ConfigError(
            f"positive value {table.positive!r} is not among the levels of {table.label!r} "
            f"({', '.join(_text(level) for level in levels)}); name one of them"
        )
    for value, count in table.label_counts:
        if find_value(levels, value) is None:
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
