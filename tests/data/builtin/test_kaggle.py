"""Kaggle download: credential detection, and every failure as one DataError (no network)."""

from __future__ import annotations

import sys
import types
import zipfile
from pathlib import Path

import pytest
import support.creditcard as schema
from support.creditcard import SCHEMA

from wgangp.data.builtin.kaggle import download_creditcard, kaggle_credentials_available
from wgangp.data.builtin.simulated import simulate_creditcard
from wgangp.data.read.table_reader import read_table
from wgangp.data.schema.validation import validate_table
from wgangp.errors import DataError

SECRET = "s3cr3t-kaggle-key-value"


def kaggle_csv_text(rows: int = 2_000) -> str:
    """A table in Kaggle's exact format: quoted header, integer Time, quoted Class."""
    frame = simulate_creditcard(n_rows=rows, fraud_rate=0.01, seed=5)
    frame = frame.astype({schema.TIME: "int64"})
    header = ",".join(f'"{name}"' for name in schema.COLUMNS)
    body = frame[list(schema.FEATURES)].to_csv(index=False, header=False).splitlines()
    lines = [f'{line},"{label}"' for line, label in zip(body, frame[schema.LABEL], strict=True)]
    return "\n".join([header, *lines]) + "\n"


class FakeApi:
    """Stands in for ``kaggle.api``: writes the archive and extracts it, as kaggle 2.2 does."""

    def __init__(self, *, unzip_works: bool = True, error: BaseException | None = None) -> None:
        self.calls: list[tuple] = []
        self.unzip_works = unzip_works
        self.error = error

    def dataset_download_files(self, dataset: str, path: str, unzip: bool = False) -> None:
        self.calls.append((dataset, path, unzip))
        if self.error is not None:
            raise self.error
        archive = Path(path) / "creditcardfraud.zip"
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as out:
            out.writestr("creditcard.csv", kaggle_csv_text())
        if unzip and self.unzip_works:
            with zipfile.ZipFile(archive) as z:
                z.extractall(path)
            archive.unlink()


def install_fake_kaggle(monkeypatch: pytest.MonkeyPatch, api: object) -> None:
    module = types.ModuleType("kaggle")
    module.api = api
    monkeypatch.setitem(sys.modules, "kaggle", module)


# --- credentials -------------------------------------------------------------------------------


def _write(path: Path, text: str = '{"username": "u", "key": "k"}') -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.mark.parametrize(
    ("env", "files", "expected"),
    [
        ({}, [], False),
        ({"KAGGLE_USERNAME": "me", "KAGGLE_KEY": SECRET}, [], True),
        ({"KAGGLE_USERNAME": "me"}, [], False),
        ({"KAGGLE_KEY": SECRET}, [], False),
        ({"KAGGLE_API_TOKEN": SECRET}, [], True),
        ({}, [".kaggle/kaggle.json"], True),
        ({}, [".config/kaggle/kaggle.json"], True),  # XDG location when ~/.kaggle is absent
        ({"XDG_CONFIG_HOME": "{home}/xdg"}, ["xdg/kaggle/kaggle.json"], True),
        ({"KAGGLE_CONFIG_DIR": "{home}/conf"}, ["conf/kaggle.json"], True),
        # kaggle reads kaggle.json only from KAGGLE_CONFIG_DIR when that is set:
        ({"KAGGLE_CONFIG_DIR": "{home}/conf"}, [".kaggle/kaggle.json"], False),
        ({}, [".kaggle/access_token"], True),
        ({}, [".kaggle/credentials.json"], True),
        ({}, [".kaggle/other.txt"], False),
    ],
)
def test_credentials_available(
    tmp_path: Path, env: dict[str, str], files: list[str], expected: bool
) -> None:
    for name in files:
        _write(tmp_path / name)
    env = {key: value.format(home=tmp_path) for key, value in env.items()}
    assert kaggle_credentials_available(env=env, home=tmp_path) is expected


def test_empty_token_file_is_not_a_credential(tmp_path: Path) -> None:
    _write(tmp_path / ".kaggle" / "access_token", "")
    assert not kaggle_credentials_available(env={}, home=tmp_path)


# --- download ----------------------------------------------------------------------------------


def test_download_writes_a_readable_kaggle_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    api = FakeApi()
    install_fake_kaggle(monkeypatch, api)
    cache = tmp_path / "cache" / "kaggle"

    path = download_creditcard(cache)

    assert path == cache / "creditcard.csv"
    assert api.calls == [("mlg-ulb/creditcardfraud", str(cache), True)]
    frame = validate_table(read_table(path), SCHEMA, source=str(path), min_rows_per_class=2)
    assert len(frame) == 2_000
    assert int(frame[schema.LABEL].sum()) == 20


def test_download_returns_the_archive_when_it_was_not_extracted(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    install_fake_kaggle(monkeypatch, FakeApi(unzip_works=False))
    path = download_creditcard(tmp_path)
    assert path.name == "creditcardfraud.zip"
    assert (
        len(validate_table(read_table(path), SCHEMA, source=str(path), min_rows_per_class=2))
        == 2_000
    )


def test_cached_file_is_reused_without_importing_kaggle(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "kaggle", None)  # importing it would raise ImportError
    (tmp_path / "creditcard.csv").write_text(kaggle_csv_text(20))
    assert download_creditcard(tmp_path) == tmp_path / "creditcard.csv"


@pytest.mark.parametrize(
    "error",
    [RuntimeError(f"403 Forbidden for key {SECRET}\nretry later"), SystemExit(1), OSError("DNS")],
    ids=["http", "exit", "network"],
)
def test_download_failure_is_one_line_without_secrets(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, error: BaseException
) -> None:
    monkeypatch.setenv("KAGGLE_KEY", SECRET)
    install_fake_kaggle(monkeypatch, FakeApi(error=error))
    with pytest.raises(DataError) as err:
        download_creditcard(tmp_path)
    message = str(err.value)
    assert "\n" not in message
    assert SECRET not in message
    assert "downloading mlg-ulb/creditcardfraud from Kaggle failed" in message
    assert "data.path=" in message and "data=simulated" in message


def test_download_that_leaves_no_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    api = types.SimpleNamespace(dataset_download_files=lambda *args, **kwargs: None)
    install_fake_kaggle(monkeypatch, api)
    with pytest.raises(DataError, match="creditcard.csv is not in"):
        download_creditcard(tmp_path)


def test_exit_at_import_becomes_data_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    package = tmp_path / "site" / "kaggle"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("print('help text')\nraise SystemExit(1)\n")
    monkeypatch.delitem(sys.modules, "kaggle", raising=False)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    with pytest.raises(DataError, match="Kaggle authentication failed") as err:
        download_creditcard(tmp_path / "cache")
    assert "KAGGLE_USERNAME" in str(err.value)


def test_missing_package_becomes_data_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "kaggle", None)
    with pytest.raises(DataError, match="cannot import the kaggle package.*pip install"):
        download_creditcard(tmp_path)


def test_unauthenticated_api_becomes_data_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    api = FakeApi()
    api._authenticated = False  # what kaggle 2.2.4 leaves when authenticate() failed at import
    install_fake_kaggle(monkeypatch, api)
    with pytest.raises(DataError, match="no valid credentials"):
        download_creditcard(tmp_path)
    assert api.calls == []
