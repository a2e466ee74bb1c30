"""Which store a command talks to: schemes MLflow can log to, sqlite paths from the launch dir."""

from __future__ import annotations

from pathlib import Path

import pytest

from wgangp.errors import TrackingError
from wgangp.tracking.store import resolve_tracking_uri


@pytest.mark.parametrize(
    "uri",
    ["databricks", "databricks://profile", "http://host:5000", "https://host", "mysql://u@h/db"]
    + ["postgresql+psycopg2://u:p@h/db", "sqlite:///rel/mlflow.db"],
)
def test_supported_stores_resolve(uri: str, tmp_path: Path) -> None:
    resolved = resolve_tracking_uri(uri, tmp_path)
    assert resolved.split(":")[0] == uri.split(":")[0]


@pytest.mark.parametrize("uri", ["ftp://x", "file:///tmp/mlruns", "s3://bucket/x"])
def test_an_unsupported_scheme_is_one_line_listing_the_supported_ones(
    uri: str, tmp_path: Path
) -> None:
    with pytest.raises(TrackingError, match="is not supported; use one of sqlite://") as err:
        resolve_tracking_uri(uri, tmp_path)
    assert len(str(err.value)) < 250 and "\n" not in str(err.value)


def test_a_relative_sqlite_store_lands_in_the_launch_dir_whose_folders_may_be_created(
    tmp_path: Path,
) -> None:
    assert resolve_tracking_uri("sqlite:///runs/new/mlflow.db", tmp_path) == (
        f"sqlite:///{tmp_path / 'runs' / 'new' / 'mlflow.db'}"
    )


def test_an_absolute_sqlite_store_needs_an_existing_folder_outside_the_launch_dir(
    tmp_path: Path,
) -> None:
    elsewhere = tmp_path / "elsewhere"
    launch = tmp_path / "launch"
    launch.mkdir()
    with pytest.raises(TrackingError, match="does not exist"):
        resolve_tracking_uri(f"sqlite:///{elsewhere}/mlflow.db", launch)
    elsewhere.mkdir()
    assert resolve_tracking_uri(f"sqlite:///{elsewhere}/mlflow.db", launch).endswith("mlflow.db")
