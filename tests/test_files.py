"""A failed write never destroys: the previous file stays, the temporary one goes, one line says so.

The full disk is real where the tests run as root (a 200 KB tmpfs); the same paths are also
checked with the write made to raise ``ENOSPC``, which needs no privileges.
"""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from wgangp.files import FileWriteError, atomic_directory, write_text, write_with


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 200 KB tmpfs (root only), unmounted afterwards."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root; the ENOSPC tests cover the same paths")
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=200k", "tmpfs", str(mount)])
    if done.returncode != 0:
        pytest.skip("this container cannot mount a tmpfs")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def _no_space(_tmp: Path) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_complete_write_replaces_the_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    write_text(path, "old")
    write_text(path, "new")
    assert path.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


def test_a_failed_write_keeps_the_previous_file_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "rows.csv"
    path.write_text("previous\n")

    def half_then_full(tmp: Path) -> None:
        tmp.write_text("half a ro")
        _no_space(tmp)

    with pytest.raises(FileWriteError) as err:
        write_with(path, half_then_full)
    assert str(err.value) == (
        f"cannot write {path} (no space left on the device); the previous file is kept "
        "unchanged; free space or choose a writable location"
    )
    assert path.read_text() == "previous\n"
    assert [p.name for p in tmp_path.iterdir()] == ["rows.csv"]
    with pytest.raises(FileWriteError, match="; nothing was written; "):
        write_with(tmp_path / "new.csv", _no_space)
    assert not (tmp_path / "new.csv").exists()


def test_suffixes_survive_for_writers_that_read_them(tmp_path: Path) -> None:
    """numpy appends .npz and pandas compresses .gz by the name: the temporary name keeps them."""
    write_with(tmp_path / "w.npz", lambda tmp: np.savez(tmp, np.ones(3)))
    with np.load(tmp_path / "w.npz") as saved:
        assert saved["arr_0"].tolist() == [1, 1, 1]
    frame = pd.DataFrame({"a": [1, 2]})
    write_with(tmp_path / "r.csv.gz", lambda tmp: frame.to_csv(tmp, index=False))
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "r.csv.gz"), frame)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.csv.gz", "w.npz"]


def test_a_folder_is_swapped_in_whole_or_not_at_all(tmp_path: Path) -> None:
    folder = tmp_path / "bundle"
    with atomic_directory(folder) as tmp:
        (tmp / "a").write_text("1")
    refused = pytest.raises(FileWriteError, match=f"^cannot write {folder} .*previous file is kept")
    with refused, atomic_directory(folder) as tmp:
        (tmp / "a").write_text("2")
        _no_space(tmp)
    assert (folder / "a").read_text() == "1"
    assert [p.name for p in tmp_path.iterdir()] == ["bundle"]


def test_a_real_full_disk_keeps_the_previous_file(full_disk: Path) -> None:
    path = full_disk / "rows.csv"
    path.write_text("previous\n" * 4000)  # 36 KB
    frame = pd.DataFrame(np.random.default_rng(0).normal(size=(20_000, 10)))  # ~4 MB as CSV
    with pytest.raises(FileWriteError, match="no space left on the device"):
        write_with(path, lambda tmp: frame.to_csv(tmp, index=False))
    assert path.read_text() == "previous\n" * 4000
    assert [p.name for p in full_disk.iterdir()] == ["rows.csv"]
    with pytest.raises(FileWriteError, match="no space left on the device"):
        write_with(full_disk / "rows.parquet", lambda tmp: frame.to_parquet(tmp))
    assert [p.name for p in full_disk.iterdir()] == ["rows.csv"]


def test_the_metrics_journal_is_rewritten_whole(tmp_path: Path, monkeypatch) -> None:
    """An interrupted journal write leaves the previous journal, never a torn last row."""
    from wgangp.step.train_step import METRICS
    from wgangp.training.history import MetricHistory

    journal = tmp_path / "history.csv"
    history = MetricHistory(log_every=2)
    history.add(0, np.ones((4, len(METRICS)), np.float32))
    history.persist(journal)
    before = journal.read_bytes()
    history.add(4, np.ones((4, len(METRICS)), np.float32))
    monkeypatch.setattr(pd.DataFrame, "to_csv", lambda self, path, **_: _no_space(path))
    with pytest.raises(FileWriteError, match="history.csv .*previous file is kept"):
        history.persist(journal)
    assert journal.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["history.csv"]


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    """An untrained synthesizer bundle (no training run)."""
    from support.synthesizers import creditcard_synthesizer, simulated_rows

    synthesizer = creditcard_synthesizer(train=simulated_rows(500))
    return synthesizer.save(tmp_path / "model" / "synthesizer")


@pytest.mark.parametrize("name", ["rows.csv", "rows.parquet"])
def test_sample_on_a_full_disk_keeps_the_previous_output(
    full_disk: Path, bundle: Path, capsys: pytest.CaptureFixture, name: str
) -> None:
    from wgangp.sample import main

    output = full_disk / name
    assert main([f"model_uri={bundle}", "n=100", f"output={output}"]) == 0
    before = output.read_bytes()
    assert main([f"model_uri={bundle}", "n=20000", f"output={output}"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()[-1:]
    assert line == (
        f"wgangp: error: cannot write output={output} (no space left on the device); the "
        "previous file is kept unchanged; free space or choose a writable location"
    )
    assert output.read_bytes() == before
    assert [p.name for p in full_disk.iterdir()] == [name]
