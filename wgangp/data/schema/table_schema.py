"""A table's schema as data: each column's kind, bounds, levels and gaps; the label and its class.

Kaggle's credit-card file has one shipped with the package
(:mod:`wgangp.data.builtin.creditcard`); any other table gets one by inference
(:mod:`wgangp.data.schema.inference`) that the user can review and edit as YAML. Every schema
object is valid: construction checks it, and an edited file's mistake is one line naming the
column and the fix (:class:`~wgangp.errors.ConfigError`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from wgangp.data.schema.cells import LevelLookup, Value, find_value
from wgangp.data.schema.checks import KINDS, NUMERIC_KINDS, check_column, check_table, unknown_keys
from wgangp.data.schema.text_formats import in_zone
from wgangp.data.schema.yaml_file import dump_yaml, load_yaml
from wgangp.errors import ConfigError

__all__ = [
    "CLASSES", "FORMAT_VERSION", "KINDS", "NUMERIC_KINDS", "RARE", "REST", "ColumnSchema",
    "TableSchema", "Value", "find_value",
]  # fmt: skip

#: The version of the YAML layout written by :meth:`TableSchema.to_yaml`.
FORMAT_VERSION = 1
#: The internal class codes: the rare class (the one to synthesize) and the rest.
REST, RARE = 0, 1
CLASSES = (REST, RARE)

_COLUMN_KEYS = (
    "name", "kind", "format", "zone", "bounds", "levels", "other", "missing", "nullable", "log",
    "round", "clip", "coarsen",
)  # fmt: skip
_TABLE_KEYS = ("version", "label", "positive", "rows", "label_counts", "columns")
_YAML_HEADER = (
    "# wgangp table schema: review it, edit it, then train with data.schema=<this file>.\n"
    "# kind: continuous | integer | categorical (levels: [...]) | datetime; bounds: [min, max]\n"
    "# (inferred: the means of the 5 smallest and 5 largest values, no row's own); missing:\n"
    "# empty cells seen; nullable: whether a cell may be empty. format: how dates or numbers\n"
    "# are written as text ('%d/%m/%Y', ISO8601, 1,234.5, $1,234.5); zone: a datetime\n"
    "# column's time zone (Europe/Paris; its rows come back in it); other: the level that\n"
    "# stands for every value fewer than 5 rows hold (those values are not listed). Options of\n"
    "# a number column (docs/schema.md): log: true (model log1p of values >= 0), round: 0.01\n"
    "# (a rounding step), clip: false (generated values may leave the bounds). coarsen: year\n"
    "# (a date of birth) or a step (0.1: coordinates) reads and makes values that coarse.\n"
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
    #: A datetime column's time zone (``Europe/Paris``, ``UTC+01:00``): its cells' instants
    #: are counted in UTC seconds and generated rows come back in it; None: naive dates.
    zone: str | None = None
    #: A number column modelled as log1p of its values (all >= 0): a long right tail.
    log: bool = False
    #: The step generated values are rounded to (0.01: cents); None: not rounded (integers: 1).
    round: float | None = None
    #: Whether generated values are clipped into the bounds (fitted privately when absent).
    clip: bool = True
    #: A quasi-identifier's precision: ``year`` for dates (a date of birth), a step for numbers
    #: (0.1: coordinates); every value is read, trained on and generated that coarse.
    coarsen: str | float | None = None

    def __post_init__(self) -> None:
        check_column(self)
        if self.other is not None:  # an edited ``other: 1`` names the level itself
            object.__setattr__(self, "other", self.lookup.find(self.other))
        if self.zone is not None and self.bounds is not None:
            # Written with their offset, so that every reader counts the same instants: an
            # edited ``2024-03-01`` is midnight in the column's zone, not in UTC.
            bounds = tuple(
                in_zone(pd.Timestamp(str(b)), self.zone).isoformat() for b in self.bounds
            )
            object.__setattr__(self, "bounds", bounds)

    @cached_property
    def lookup(self) -> LevelLookup:
        """Which level a cell names, in constant time (built once per column)."""
        return LevelLookup(self.levels or ())

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
        if self.zone is not None:
            out["zone"] = self.zone
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
        if self.coarsen is not None:
            out["coarsen"] = self.coarsen
        return out

    @classmethod
    def from_dict(cls, raw: Any, where: str) -> ColumnSchema:
        """A column from its YAML mapping; ``where`` names it in errors."""
        if not isinstance(raw, Mapping):
            raise ConfigError(f"{where} is not a mapping; write name: ..., kind: ...")
        unknown_keys(raw, _COLUMN_KEYS, where)
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
            kind=raw.get("kind"),  # type: ignore[arg-type]  # any value: __post_init__ checks it
            bounds=tuple(bounds) if bounds is not None else None,
            levels=tuple(levels) if levels is not None else None,
            missing=missing,
            nullable=nullable,
            format=raw.get("format"),
            zone=raw.get("zone"),
            other=raw.get("other"),
            log=raw.get("log", False),
            round=raw.get("round"),
            clip=raw.get("clip", True),
            coarsen=raw.get("coarsen"),
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
        check_table(self)
        # data.positive=1 or an edited ``positive: yes`` names the level itself: keep the level.
        object.__setattr__(self, "positive", self.column(self.label).lookup.find(self.positive))

    @cached_property
    def names(self) -> tuple[str, ...]:
        """The columns' names in order (computed once: callers test membership per column)."""
        return tuple(column.name for column in self.columns)

    @cached_property
    def features(self) -> tuple[ColumnSchema, ...]:
        """Every column except the label."""
        return tuple(column for column in self.columns if column.name != self.label)

    @cached_property
    def _by_name(self) -> dict[str, ColumnSchema]:
        return {column.name: column for column in reversed(self.columns)}

    @property
    def class_names(self) -> tuple[str, str]:
        """How messages name the two classes: ``Status!=bad`` (0) and ``Status=bad`` (1)."""
        return f"{self.label}!={self.positive}", f"{self.label}={self.positive}"

    def column(self, name: str) -> ColumnSchema:
        """The column named ``name`` (KeyError when none), in constant time."""
        return self._by_name[name]

    def classes(self, labels: pd.Series) -> np.ndarray:
        """Each row's class: 1 where the label holds ``positive`` (the class to synthesize),
        else 0. The code lives apart from the table's columns, so a label may be named
        anything, ``Class`` included. A cell names a level by the one rule validation reads
        the label with (:class:`~wgangp.data.schema.cells.LevelLookup`)."""
        levels = self.column(self.label).lookup
        rare = levels.index(self.positive)
        # One lookup per distinct value, not per row: a label has a handful of values.
        lookup = {v: int(levels.index(v) == rare) for v in pd.unique(labels)}
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
        unknown_keys(raw, _TABLE_KEYS, "the schema")
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
