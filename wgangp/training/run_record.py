"""What a run records about its table, apart from the run's life (:mod:`.session`): its name,
the data tags, the MLflow dataset record and the schema artifact, none holding a row.

Runs are named ``<name>-<table>-seed<seed>-<config key>`` unless ``tracking.run_name`` says
otherwise, so a list of runs tells them apart; the key is the checkpoint folder's. A run whose
rows came from elsewhere than planned (simulated rows, Kaggle's download) is renamed after its
table; a table read from a URL is named from the URL's path alone (its user info and query may
hold secrets, and a run's name is no redacted field).
"""

from __future__ import annotations

import json
import logging
import urllib.parse
from pathlib import Path

from wgangp.config import Config
from wgangp.data.prepare import PreparedData
from wgangp.data.read.big_tables import TableRead
from wgangp.data.read.duckdb_scan import is_url
from wgangp.files import write_text
from wgangp.tracking.note import TrainedOn

log = logging.getLogger("wgangp.train")

#: The tag MLflow keeps a run's name in (setting it renames the run).
RUN_NAME_TAG = "mlflow.runName"
#: The run's artifact holding its table's schema (a user's table).
SCHEMA_ARTIFACT = "schema.yaml"


def default_run_name(cfg: Config, data_name: str, key: str) -> str:
    """``stable_gp-creditcard-seed0-1a2b3c4d``: experiment, table, seed and config key."""
    return f"{cfg.name}-{data_name}-seed{cfg.seed}-{key}"


def planned_table_name(cfg: Config) -> str:
    """The table's name before it is read: the file's stem (``loans`` for loans.csv.gz), or
    ``simulated``; the run is renamed when the rows come from elsewhere (a fallback)."""
    if cfg.data.name == "simulated" or not cfg.data.path:
        return cfg.data.name
    if is_url(str(cfg.data.path)):
        return url_table_name(str(cfg.data.path)) or cfg.data.name
    return Path(cfg.data.path).name.split(".")[0] or cfg.data.name


def url_table_name(url: str) -> str:
    """A URL's table name from its path alone (``t`` for ``https://u:pw@host/t.csv?sig=...``):
    the last part without a wildcard (``tx`` for ``s3://bucket/tx/*.parquet``), else the host."""
    parts = urllib.parse.urlsplit(url)
    names = [p for p in parts.path.split("/") if p and not any(c in p for c in "*[")]
    return (names[-1].split(".")[0] if names else "") or parts.hostname or ""


def table_name(cfg: Config, data: PreparedData) -> str:
    """The name the run records for its table: the reader's, or for a URL its path's."""
    url = data.provenance == "file" and is_url(str(cfg.data.path or ""))
    return planned_table_name(cfg) if url else data.name


def data_tags(data: PreparedData) -> dict[str, str]:
    """MLflow tags of the table: where it came from, its digest and exact duplicates, the rows
    read and kept (``data.read.*``), and each split's rows in the samples fits and scores use
    when there are samples (``data.subset.*``)."""
    tags = {
        "data.source": data.provenance,
        "data.origin": data.origin,
        "data.digest": data.digest,
        "data.duplicate_rows": str(data.duplicate_rows),
    }
    if data.read is not None:
        tags |= read_tags(data.read)
    if data.budget is None or (data.fit_subsets is None and data.score_subsets is None):
        return tags
    tags |= {
        "data.subset.rest_subset": str(data.budget.rest),
        "data.subset.rare_subset": str(data.budget.rare),
    }
    for what, parts in (("fits", data.fit_rows), ("scores", data.score_rows)):
        for name in ("train", "val", "test"):
            tags[f"data.subset.{what}.{name}"] = str(len(getattr(parts, name)))
    return tags


def read_tags(read: TableRead) -> dict[str, str]:
    """MLflow tags of what the reader read and kept (``data.read.*``)."""
    found = {
        "data.read.files": str(read.files),
        "data.read.kept": str(read.kept),
        "data.read.capped": str(read.capped).lower(),
        "data.read.max_rows": str(read.max_rows),
    }
    if read.rows is not None:
        found |= {"data.read.rows": str(read.rows), "data.read.rare": str(read.rare)}
    if read.kept_rare is not None:
        found["data.read.kept_rare"] = str(read.kept_rare)
    if read.entities is not None:
        found["data.read.entities"] = ",".join(map(str, read.entities))
        found["data.read.how"] = (
            f"every entity with a rare-class row, and of the others a uniform subset of at most "
            f"{read.max_rows} entities (smallest hash of seed {read.seed} and each entity), whole"
        )
    elif read.capped:
        found["data.read.how"] = (
            f"every rare-class row up to {read.max_rows}, and a uniform subset of "
            f"{read.max_rows} of the rest (smallest hash of seed {read.seed} and each row)"
        )
    return found


def dataset_record(data: PreparedData, name: str) -> dict[str, str]:
    """The table as an MLflow dataset named ``name`` (digest, source, schema, profile; no
    rows), so the run page's "Datasets" tells runs on different tables apart."""
    columns = [
        {"type": column.value_type, "name": column.name, "required": not column.nullable}
        for column in data.schema.columns
    ]
    rows = len(data.train) + len(data.val) + len(data.test)
    profile = {"num_rows": rows, "num_elements": rows * len(data.schema.columns)}
    return {
        "name": name,
        "digest": data.digest,
        "source_type": "code" if data.provenance in ("simulated", "dataframe") else "local",
        "source": json.dumps({"uri": data.origin}),
        "schema": json.dumps({"mlflow_colspec": columns}),
        "profile": json.dumps(profile),
    }


def write_schema(data: PreparedData, cfg: Config, output_dir: Path) -> Path:
    """The table's schema as the run's ``schema.yaml`` (the file to edit and pass back as
    ``data.schema``); an inferred or given one in the log too (Kaggle's shipped one is known).
    It holds no identifier and no value fewer than k entities hold (docs/privacy.md)."""
    text = data.schema.to_yaml()
    if data.inferred or cfg.data.schema is not None:
        given = "the given" if cfg.data.schema is not None else "inferred"
        log.info("data: %s schema of %s:\n%s", given, data.origin, text)
    return write_text(output_dir / SCHEMA_ARTIFACT, text)


def trained_on(data: PreparedData, steps: int) -> TrainedOn:
    """The rows of ``data``'s training split and ``steps``, for the description."""
    return TrainedOn(len(data.train), int(data.classes(data.train).sum()), steps)
