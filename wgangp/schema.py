"""``python -m wgangp.schema``: print a table's schema as YAML for the user to review and edit.

    python -m wgangp.schema data.path=loans.csv.gz data.label=Status > schema.yaml
    python -m wgangp.schema data.path=loans.csv.gz data.label=Status data.positive=bad
    python -m wgangp.schema data.path=loans.csv.gz data.schema=schema.yaml   # check an edit

``data.path`` is read as training reads it: a file, a folder or a glob of Parquet/CSV files, every
rare-class row and at most ``data.max_rows`` of the rest. Arguments are Hydra-style ``key=value``
pairs with the training command's names. Without
``data.schema`` the schema is inferred (kinds, levels, bounds, missing counts, the label's
counts); columns a person should decide about (an ID, names or free text, a constant, thousands
of levels, dates without one reading) are listed on stderr and as ``# review:`` lines in the
YAML. With ``data.schema`` the edited file is checked, against the table too when ``data.path``
is given, and printed back (with the table's own label counts and rows, not the file's). The
YAML goes to stdout, the log to stderr; every mistake is one line and exit code 2.
"""

from __future__ import annotations

import dataclasses
import logging
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from wgangp.cli import command_args, key_values
from wgangp.config import DataConfig
from wgangp.data.prepare import checked_table
from wgangp.data.read.source import configured_schema, load_table
from wgangp.data.schema.table_schema import TableSchema
from wgangp.errors import ConfigError, WgangpError, report_error

log = logging.getLogger("wgangp.schema")

USAGE = (
    "usage: python -m wgangp.schema data.path=<table.csv|.csv.gz|.parquet|folder|glob> "
    f"[data.label={DataConfig.label}] [data.positive=<value>] [data.entity=<column>] "
    f"[data.schema=<edited.yaml>] [data.max_rows={DataConfig.max_rows}] [debug=true]"
)
_KEYS = (
    "data.path",
    "data.label",
    "data.positive",
    "data.entity",
    "data.schema",
    "data.max_rows",
    "debug",
)


@dataclasses.dataclass(frozen=True)
class SchemaRequest:
    data_cfg: DataConfig
    debug: bool = False


def parse_args(argv: Sequence[str]) -> SchemaRequest:
    """``key=value`` arguments -> a checked request (one-line ConfigErrors)."""
    values = key_values(argv, _KEYS, USAGE, ConfigError)
    path, schema = values.get("data.path") or None, values.get("data.schema") or None
    if path is None and schema is None:
        raise ConfigError(f"missing data.path=...; {USAGE}")
    debug = values.get("debug", "false").lower()
    if debug not in ("true", "false"):
        raise ConfigError(f"debug must be true or false, got debug={values['debug']!r}")
    positive = values.get("data.positive")
    entity = values.get("data.entity")
    max_rows = values.get("data.max_rows", str(DataConfig.max_rows))
    if not max_rows.isdigit():
        raise ConfigError(f"invalid config value data.max_rows: {max_rows!r} is not a number")
    data_cfg = DataConfig(
        path=path,
        label=values.get("data.label", DataConfig.label),
        positive=None if positive in (None, "null") else positive,
        schema=schema,
        entity=None if entity in (None, "null") else entity,
        max_rows=int(max_rows),
    )
    return SchemaRequest(data_cfg=data_cfg, debug=debug == "true")


def build_schema(request: SchemaRequest) -> tuple[TableSchema, list[str]]:
    """The schema to print and the lines to review (none for a given schema): the first half of
    :func:`~wgangp.data.prepare.prepare_data`, as training reads the table (the file, its cap,
    the configured schema: shipped, edited, else inferred) and checks it (validation's gate);
    the columns training would refuse are listed instead."""
    data_cfg, launch_dir = request.data_cfg, Path.cwd()
    if data_cfg.path is None:  # an edited file alone: checked as a schema, no table read
        schema, _ = configured_schema(data_cfg, launch_dir)
        assert schema is not None  # parse_args: data.path or data.schema
        return schema, []
    # A missing file is an error here, never the default path's simulated stand-in.
    loaded = load_table(replace(data_cfg, fallback="error"), seed=0, launch_dir=launch_dir)
    review: list[str] = []
    schema, _, _ = checked_table(loaded, data_cfg, review)
    return schema, review


def render(schema: TableSchema, review: list[str], argv: Sequence[str]) -> str:
    """The YAML document printed: how it was made, the lines to review, the schema."""
    made = " ".join(["python -m wgangp.schema", *argv])
    notes = [f"# written by: {made}\n"] + [f"# review: {line}\n" for line in review]
    return "".join(notes) + schema.to_yaml()


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry; returns the exit code (0, or the error's code after one line on stderr)."""
    argv = command_args(argv, USAGE)
    if argv is None:
        return 0
    debug = "debug=true" in argv
    try:
        request = parse_args(argv)
        schema, review = build_schema(request)
    except WgangpError as err:
        report_error(err, debug=debug)
        return err.exit_code
    for line in review:
        print(f"wgangp: review: {line}", file=sys.stderr)
    counts = ", ".join(f"{value}: {count}" for value, count in schema.label_counts)
    if request.data_cfg.schema is not None and request.data_cfg.path is None and counts:
        counts = f"as the schema file gives them: {counts}; pass data.path to count the table's"
    log.info(
        "%d column(s); label %s (%s), class to synthesize: %s",
        len(schema.columns), schema.label, counts or "not counted", schema.positive,
    )  # fmt: skip
    sys.stdout.write(render(schema, review, argv))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
