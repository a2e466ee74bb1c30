"""A damaged or edited bundle never samples: each damage is refused at load in one line.

The bundle is a unit sealed by ``manifest.json``; past the seal, ``synthesizer.json`` and
``generator.keras`` are checked for meaning (a re-sealed bundle with another latent size, or a
generator of the wrong width). The bundles come from an untrained generator (no training run).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.synthesizers import LATENT, creditcard_synthesizer, simulated_rows
from support.tables import fraud_team_table

from wgangp.data.schema.inference import infer_schema
from wgangp.data.transform.table_transform import TableTransform
from wgangp.errors import DataError
from wgangp.serving.bundle import (
    BUNDLE_FORMAT,
    CALIBRATION_FILE,
    COPULA_FILE,
    GENERATOR_FILE,
    MANIFEST_FILE,
    META_FILE,
    PREPROCESSING_FILE,
    SCHEMA_FILE,
    DamagedBundleError,
    write_manifest,
)
from wgangp.serving.synthesizer import Synthesizer


def _bundle(directory: Path, latent: int = LATENT, width: int | None = None) -> Path:
    model = creditcard_synthesizer(train=simulated_rows(500), latent=latent, width=width)
    return model.save(directory)


@pytest.fixture(scope="module")
def sound(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _bundle(tmp_path_factory.mktemp("sound") / "synthesizer")


def _copy(sound: Path, tmp_path: Path) -> Path:
    import shutil

    return Path(shutil.copytree(sound, tmp_path / "synthesizer"))


def _refused(bundle: Path) -> str:
    with pytest.raises(DamagedBundleError) as err:
        Synthesizer.load(bundle)
    message = str(err.value)
    assert "\n" not in message
    return message


def test_a_sound_bundle_lists_every_file_and_loads(sound: Path) -> None:
    manifest = json.loads((sound / MANIFEST_FILE).read_text())
    assert manifest["format"] == BUNDLE_FORMAT == "wgangp.bundle/2"
    assert set(manifest["files"]) == {GENERATOR_FILE, PREPROCESSING_FILE, META_FILE, SCHEMA_FILE}
    assert len(Synthesizer.load(sound).sample(5)) == 5


def test_a_bundle_of_an_older_format_is_refused_with_the_retrain_line(
    sound: Path, tmp_path: Path
) -> None:
    """Format 1 (Kaggle's bundles before every table had a schema) is never read as format 2."""
    bundle = _copy(sound, tmp_path)
    manifest = json.loads((bundle / MANIFEST_FILE).read_text())
    (bundle / MANIFEST_FILE).write_text(json.dumps({**manifest, "format": "wgangp.bundle/1"}))
    assert _refused(bundle) == (
        f"{bundle} was saved by another wgangp version (format wgangp.bundle/1; this one reads "
        "wgangp.bundle/2); retrain to get a bundle of this version"
    )


@pytest.mark.parametrize("name", [GENERATOR_FILE, PREPROCESSING_FILE, META_FILE, SCHEMA_FILE])
def test_a_truncated_file_is_refused(sound: Path, tmp_path: Path, name: str) -> None:
    bundle = _copy(sound, tmp_path)
    path = bundle / name
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    message = _refused(bundle)
    assert message.startswith(f"{path} has ") and "(truncated or edited)" in message
    assert message.endswith("download it again from its run, or retrain")


@pytest.mark.parametrize("name", [GENERATOR_FILE, PREPROCESSING_FILE])
def test_an_emptied_or_edited_file_is_refused(sound: Path, tmp_path: Path, name: str) -> None:
    bundle = _copy(sound, tmp_path)
    (bundle / name).write_bytes(b"")
    assert _refused(bundle).startswith(f"{bundle / name} has 0 bytes")
    bundle2 = _copy(sound, tmp_path / "b")
    path = bundle2 / name
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01  # same size, one bit flipped
    path.write_bytes(bytes(data))
    assert _refused(bundle2).startswith(f"{path} does not match its checksum in manifest.json")


def test_a_deleted_or_added_table_is_refused(sound: Path, tmp_path: Path) -> None:
    """Deleting calibration.json or copula.json would sample another distribution."""
    bundle = _copy(sound, tmp_path)
    (bundle / COPULA_FILE).write_text("{}")
    assert "holds copula.json, which its manifest.json does not list" in _refused(bundle)
    (bundle / COPULA_FILE).unlink()
    (bundle / PREPROCESSING_FILE).rename(bundle / CALIBRATION_FILE)
    assert _refused(bundle).startswith(f"{bundle / PREPROCESSING_FILE}")


def test_a_bundle_without_manifest_is_refused(sound: Path, tmp_path: Path) -> None:
    bundle = _copy(sound, tmp_path)
    (bundle / MANIFEST_FILE).unlink()
    assert _refused(bundle).startswith(f"{bundle} has no manifest.json")
    (bundle / MANIFEST_FILE).write_text('{"format": "wgangp.bundle/2", "files": ')
    assert _refused(bundle).startswith(f"{bundle / MANIFEST_FILE} is unreadable")


def test_another_latent_dim_in_a_resealed_description_is_refused(
    sound: Path, tmp_path: Path
) -> None:
    bundle = _copy(sound, tmp_path)
    meta = json.loads((bundle / META_FILE).read_text())
    meta["latent_dim"] = LATENT + 4
    (bundle / META_FILE).write_text(json.dumps(meta))
    write_manifest(bundle)
    assert _refused(bundle).startswith(
        f"{bundle / GENERATOR_FILE} takes and returns widths 4, 2, 30, not the 8 (latent"
    )
    meta["latent_dim"] = 2.5
    (bundle / META_FILE).write_text(json.dumps(meta))
    write_manifest(bundle)
    assert "latent_dim 2.5 is not a whole number" in _refused(bundle)


def test_a_generator_of_the_wrong_width_is_refused(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path / "synthesizer", width=12)
    assert "takes and returns widths 4, 2, 12, not the 4 (latent" in _refused(bundle)


def test_a_garbage_generator_is_refused_when_sealed(sound: Path, tmp_path: Path) -> None:
    bundle = _copy(sound, tmp_path)
    (bundle / GENERATOR_FILE).write_bytes(b"not a zip file")
    write_manifest(bundle)
    assert _refused(bundle).startswith(f"{bundle / GENERATOR_FILE} cannot be loaded as a Keras")


def test_an_unfitted_preprocessing_table_is_refused(sound: Path, tmp_path: Path) -> None:
    """A transform of no column (what an unfitted one writes) maps nothing back."""
    bundle = _copy(sound, tmp_path)
    (bundle / PREPROCESSING_FILE).write_text(TableTransform(()).to_json())
    write_manifest(bundle)
    with pytest.raises(DataError) as err:
        Synthesizer.load(bundle)
    assert str(err.value).startswith(f"{bundle / PREPROCESSING_FILE} has no columns; ")


def test_another_tables_preprocessing_is_refused(sound: Path, tmp_path: Path) -> None:
    """A sound transform of another table's columns, re-sealed, would map every generated row
    into the wrong columns."""
    bundle = _copy(sound, tmp_path)
    frame = fraud_team_table()
    schema = infer_schema(frame, label="is_fraud", positive="yes")
    other = TableTransform.fit(frame, schema, schema.classes(frame["is_fraud"]))
    (bundle / PREPROCESSING_FILE).write_text(other.to_json())
    write_manifest(bundle)
    assert _refused(bundle).startswith(
        f"{bundle}: {PREPROCESSING_FILE} maps other columns than {SCHEMA_FILE}'s features"
    )


def test_a_failed_save_keeps_the_previous_bundle(sound: Path, tmp_path: Path) -> None:
    bundle = _copy(sound, tmp_path)
    before = {p.name: p.read_bytes() for p in bundle.iterdir()}
    model = Synthesizer.load(bundle)

    class Broken(Exception):
        pass

    def fail(*_args, **_kwargs):
        raise Broken

    model.transformer.to_json = fail
    with pytest.raises(Broken):
        model.save(bundle)
    assert {p.name: p.read_bytes() for p in bundle.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["synthesizer"]


def test_a_save_never_replaces_a_folder_of_other_files(sound: Path, tmp_path: Path) -> None:
    """The save swaps the whole folder in: one holding other files is refused, not wiped."""
    from wgangp.errors import WgangpError

    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me")
    with pytest.raises(WgangpError, match="holds notes.txt, which are not a bundle's files"):
        Synthesizer.load(sound).save(folder)
    assert (folder / "notes.txt").read_text() == "keep me"
