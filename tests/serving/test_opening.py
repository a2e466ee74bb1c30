"""One opener of model URIs (:mod:`wgangp.serving.opening`) and one parser of run URIs."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.synthesizers import creditcard_synthesizer

from wgangp.serving.bundle import artifact_uri_for, run_id_of, run_uri
from wgangp.serving.opening import open_synthesizer


@pytest.mark.parametrize(
    ("uri", "run_id"),
    [
        ("runs:/abc123", "abc123"),
        ("runs:/abc123/", "abc123"),
        ("runs:/abc123/synthesizer", "abc123"),
        ("abc123", "abc123"),  # a bare run id, as --run takes it
        ("models:/fraud@champion", None),
        ("models:/m-123", None),
        ("outputs/run/synthesizer", None),
        ("runs:/", None),
    ],
)
def test_a_run_uri_is_parsed_by_one_rule(uri: str, run_id: str | None) -> None:
    assert run_id_of(uri) == run_id
    if run_id is not None and "/synthesizer" not in uri:
        assert artifact_uri_for(uri) == f"{run_uri(run_id)}/synthesizer"


def test_a_folder_opens_with_no_run_and_no_uri(tmp_path: Path) -> None:
    """A bundle folder is opened as it is: no store is needed, and it names no run."""
    creditcard_synthesizer().save(tmp_path / "synthesizer")
    seen = []
    opened = open_synthesizer(str(tmp_path / "synthesizer"), launch_dir=tmp_path, check=seen.append)
    assert [schema.label for schema in seen] == ["Class"]  # checked before Keras loads
    assert opened.run_id is None and opened.model_uri is None
    assert len(opened.sample(3, seed=0)) == 3
