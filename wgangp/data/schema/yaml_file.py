"""The YAML dialect of schema files: YAML 1.2 scalars, so what a user types stays what they meant.

PyYAML follows YAML 1.1, where an unquoted ``Yes``, ``No``, ``on`` or ``off`` is a boolean and
``2021-01-01`` a date: a level ``Yes`` edited without quotes would become ``True`` and no longer
match the table's ``"Yes"``. Here only ``true``/``false`` are booleans and dates stay text. The
scanner and emitter are libyaml's when PyYAML has it (the same resolvers, the same text): the
pure-Python ones take seconds for a column of 100,000 levels.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_DROPPED_TAGS = {"tag:yaml.org,2002:bool", "tag:yaml.org,2002:timestamp"}


#: libyaml's parser and emitter when PyYAML was built with it, else the pure-Python ones.
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_SafeDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class SchemaLoader(_SafeLoader):  # type: ignore[misc, valid-type]  # a base chosen at import
    """SafeLoader with YAML 1.2 booleans and no implicit timestamps."""


SchemaLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in _DROPPED_TAGS]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
SchemaLoader.add_implicit_resolver("tag:yaml.org,2002:bool", _BOOL, list("tTfF"))


class SchemaDumper(_SafeDumper):  # type: ignore[misc, valid-type]  # a base chosen at import
    """SafeDumper writing mappings as blocks and lists of plain values on one line."""


def _list(dumper: yaml.SafeDumper, data: list) -> yaml.Node:
    flat = all(not isinstance(item, dict | list) for item in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flat)


def _dict(dumper: yaml.SafeDumper, data: dict) -> yaml.Node:
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items(), flow_style=False)


SchemaDumper.add_representer(list, _list)
SchemaDumper.add_representer(dict, _dict)


def load_yaml(text: str) -> Any:
    """Parse schema YAML (raises ``yaml.YAMLError``)."""
    return yaml.load(text, Loader=SchemaLoader)  # noqa: S506 - a SafeLoader subclass


def dump_yaml(data: Any) -> str:
    """Block-style YAML in the given key order; text that YAML 1.1 would misread gets quotes."""
    return yaml.dump(data, Dumper=SchemaDumper, sort_keys=False, allow_unicode=True)
