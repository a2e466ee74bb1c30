"""What a run records about its table: its name, tags and MLflow dataset, no row of it."""

from __future__ import annotations

import json
from pathlib import Path

from support.tables import write_fraud_team_table

from wgangp.config import DataConfig
from wgangp.data.prepare import prepare_data
from wgangp.training.run_record import data_tags, dataset_record, url_table_name


def _data(path: Path, **kwargs) -> DataConfig:
    return DataConfig(path=str(path), fallback="error", **kwargs)


def test_the_dataset_record_names_the_table_and_its_columns(tmp_path: Path) -> None:
    path = write_fraud_team_table(tmp_path)
    data = prepare_data(_data(path, label="is_fraud"), seed=0, launch_dir=tmp_path)
    record = dataset_record(data, data.name)
    assert (record["name"], record["digest"], record["source_type"]) == (
        "transactions",
        data.digest,
        "local",
    )
    columns = {c["name"]: c for c in json.loads(record["schema"])["mlflow_colspec"]}
    assert columns["merchant"] == {"type": "string", "name": "merchant", "required": False}
    assert columns["count"]["type"] == "long" and columns["amount"]["type"] == "double"
    assert columns["day"]["type"] == "datetime" and columns["is_fraud"]["type"] == "string"
    assert json.loads(record["profile"])["num_rows"] == 400


def test_the_data_tags_name_the_table_and_no_row(tmp_path: Path) -> None:
    path = write_fraud_team_table(tmp_path)
    data = prepare_data(_data(path, label="is_fraud"), seed=0, launch_dir=tmp_path)
    tags = data_tags(data)
    assert tags["data.source"] == "file" and tags["data.origin"] == str(path)
    assert tags["data.digest"] == data.digest
    assert tags["data.duplicate_rows"] == str(data.duplicate_rows)
    assert "data.read.rows" in tags


def test_a_urls_table_is_named_from_its_path_alone() -> None:
    assert url_table_name("https://u:pw@host/dir/t.csv?sig=abc") == "t"
    assert url_table_name("s3://bucket/tx/*.parquet") == "tx"
    assert url_table_name("https://host/") == "host"
