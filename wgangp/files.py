"""Every file the product writes goes through here: complete, or not at all.

A file is written under a temporary name in its own folder, flushed to disk and then renamed over
the old one (``os.replace``, atomic within a file system). A full disk, a kill or any error in
the middle leaves the previous file as it was and removes the temporary one, so a reader never
sees half a CSV, half a JSON record or a truncated checkpoint record. A failed write ends in one
line naming the file, why, and what was kept. A symbolic link is written through, as ``open``
writes through it: its target is replaced (atomically, in the target's folder) and the link kept.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

from wgangp.errors import WgangpError


class FileWriteError(WgangpError):
    """A file could not be written (disk full, read-only, permission); the old one is kept."""

    reason = "io"


def written_path(path: Path) -> Path:
    """The file a write of ``path`` replaces: ``path``, or the file a symbolic link at ``path``
    points to (through every link, relative ones from their own folder), so that the link stays."""
    path = Path(path)
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _temporary(path: Path) -> Path:
    """A fresh name beside ``path`` that keeps its suffixes (pandas and numpy read them)."""
    return path.parent / f".tmp-{secrets.token_hex(4)}-{path.name}"


def _fsync(path: Path) -> None:
    """Push a finished file (or a folder's entries) to disk before it is renamed into place."""
    flags = os.O_RDONLY | (os.O_DIRECTORY if path.is_dir() else 0)
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    except OSError as err:  # some file systems do not fsync folders; a full disk does fail
        if err.errno not in (errno.EINVAL, errno.EBADF) or not path.is_dir():
            raise
    finally:
        os.close(fd)


def write_error(path: Path, err: OSError, existed: bool, name: str | None = None) -> FileWriteError:
    """The one line of a failed write: which file, why, and what is still there."""
    why = err.strerror or str(err) or type(err).__name__
    if err.errno == errno.ENOSPC:
        why = "no space left on the device"
    kept = "the previous file is kept unchanged" if existed else "nothing was written"
    return FileWriteError(
        f"cannot write {name or path} ({why}); {kept}; free space or choose a writable location"
    )


@contextlib.contextmanager
def atomic_path(path: Path, name: str | None = None) -> Iterator[Path]:
    """Yield a temporary path to write ``path``'s new content to; on leaving, it replaces
    ``path``. Any error removes the temporary file and leaves ``path`` as it was; an
    :class:`OSError` becomes a :class:`FileWriteError` (``name``: how its line names the file).
    """
    shown = Path(path)
    path = written_path(shown)
    existed = path.exists()
    tmp = _temporary(path)
    try:
        yield tmp
        _fsync(tmp)
        os.replace(tmp, path)
    except OSError as err:
        _remove(tmp)
        raise write_error(shown, err, existed, name) from None
    except BaseException:
        _remove(tmp)
        raise
    with contextlib.suppress(OSError):
        _fsync(path.parent)


def write_with(path: Path, writer: Callable[[Path], object], name: str | None = None) -> Path:
    """``writer(tmp)`` writes the content; it lands at ``path`` only once complete."""
    with atomic_path(path, name) as tmp:
        writer(tmp)
    return Path(path)


def write_text(path: Path, text: str) -> Path:
    """Atomically replace ``path`` with ``text`` (UTF-8)."""
    return write_with(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


@contextlib.contextmanager
def atomic_directory(path: Path) -> Iterator[Path]:
    """Like :func:`atomic_path` for a folder written as a unit (a model bundle): the new folder
    is built beside the old one and swapped in only when complete."""
    path = Path(path)
    existed = path.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temporary(path)
    old = path.parent / f".old-{secrets.token_hex(4)}-{path.name}"
    try:
        tmp.mkdir()
        yield tmp
        for child in tmp.iterdir():
            _fsync(child)
        _fsync(tmp)
        if existed:
            os.replace(path, old)
        try:
            os.replace(tmp, path)
        except OSError:
            if existed:
                os.replace(old, path)
            raise
    except OSError as err:
        _remove(tmp)
        raise write_error(path, err, existed) from None
    except BaseException:
        _remove(tmp)
        raise
    _remove(old)


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)


def document_format(text: str) -> str | None:
    """The ``format`` a saved JSON document names (None when it is not such a document): which
    of a file's readers to use, before that reader checks the whole document."""
    import json

    try:
        found = json.loads(text).get("format")
    except (ValueError, AttributeError):
        return None
    return found if isinstance(found, str) else None
