"""``python -m wgangp.sync`` and the store's advice: each mistake is one line to act on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wgangp.errors import TrackingError
from wgangp.tracking.outbox import OUTBOX_FILE, Outbox, sync_outbox
from wgangp.tracking.store import resolve_tracking_uri


def test_a_folder_that_does_not_exist_is_an_error_not_synced_0(tmp_path: Path) -> None:
    with pytest.raises(TrackingError, match=f"^{tmp_path / 'nope'} is not a directory; pass"):
        sync_outbox(tmp_path / "nope")


def test_a_kept_call_without_an_operation_is_named_not_retried_forever(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    (tmp_path / OUTBOX_FILE).write_text(json.dumps({"run_id": "abc", "tracking_uri": uri}) + "\n")
    with pytest.raises(TrackingError) as err:
        sync_outbox(tmp_path)
    assert str(err.value) == (
        f"{tmp_path / OUTBOX_FILE}: kept call 1 has no known operation or run id (edited or "
        "damaged), so no retry can send it; remove that line and run this again"
    )


def test_a_non_utf8_line_is_skipped_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / OUTBOX_FILE
    good = json.dumps({"op": "tags", "run_id": "abc", "tags": {}})
    path.write_bytes(b'{"op": "t\xff"}\n' + good.encode() + b"\n")
    assert [e["op"] for e in Outbox(path).entries()] == ["tags"]


def test_a_plain_path_as_tracking_uri_points_at_the_store_it_names(tmp_path: Path) -> None:
    store = tmp_path / "mlflow.db"
    store.write_bytes(b"")
    for given, meant in [
        (store, store),
        (tmp_path, tmp_path / "mlflow.db"),
        (tmp_path / "runs", tmp_path / "runs.db"),
    ]:
        with pytest.raises(TrackingError) as err:
            resolve_tracking_uri(str(given), tmp_path)
        assert f"use sqlite:///{meant} or http://host:port" in str(err.value)
