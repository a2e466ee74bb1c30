"""What a data file really is, against what its name says.

pandas decompresses by the file name, and the loader opens a ``.zip`` as an archive: a gzip file
named ``.csv`` is then read as text and fails as "not UTF-8", a text file named ``.csv.gz`` as a
corrupt archive. The first bytes tell the format; a mismatch is one line naming the file to rename.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from wgangp.errors import DataError

#: A file's first bytes by format, and the name ending that makes it read as that format.
_MAGIC = {"gzip": b"\x1f\x8b", "zip": b"PK\x03\x04"}
_SUFFIX = {"gzip": ".gz", "zip": ".zip"}
_DESCRIBED = {"gzip": "gzip-compressed", "zip": "a zip archive"}


def check_is_file(path: Path, what: str) -> None:
    """``data.path`` names a file that exists (``what``: how the advice names it)."""
    if path.is_dir():
        raise DataError(f"{path} is a directory, not a file; set data.path to the {what} itself")
    if not path.exists():
        raise DataError(f"data file not found: {path}; check data.path")


def check_format_matches_name(path: Path) -> None:
    """The name decides how the file is decompressed: a gzip file named .csv would be read as
    text and fail as "not UTF-8". Compare the first bytes with the name, say what to rename."""
    with path.open("rb") as handle:
        head = handle.read(4096)
    actual = next((kind for kind, magic in _MAGIC.items() if head.startswith(magic)), None)
    name = path.name.lower()
    named = next((kind for kind, suffix in _SUFFIX.items() if name.endswith(suffix)), None)
    if actual == named:
        return
    if actual == "zip" and _is_excel_workbook(path):
        raise DataError(
            f"{path} is an Excel workbook, not a CSV; save it as CSV (comma-separated) and set "
            "data.path to that file"
        )
    if actual is not None:
        raise DataError(
            f"{path} is {_DESCRIBED[actual]} but its name does not end in {_SUFFIX[actual]}; "
            f"rename it to {_renamed(path.name, actual)}"
        )
    if named is not None and _looks_like_text(head):
        raise DataError(
            f"{path} is plain text, not {_DESCRIBED[named]}, but its name ends in "
            f"{_SUFFIX[named]}; rename it to {_renamed(path.name, None)}"
        )


def _renamed(name: str, kind: str | None) -> str:
    """``cards.csv`` -> ``cards.csv.gz`` (gzip), ``cards.zip`` (zip), ``cards.csv`` (text)."""
    stem = name
    for suffix in (".gz", ".zip", ".csv"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
    return stem + {"gzip": ".csv.gz", "zip": ".zip"}.get(kind or "", ".csv")


def _is_excel_workbook(path: Path) -> bool:
    try:
        with zipfile.ZipFile(path) as archive:
            return any(name.startswith("xl/") for name in archive.namelist())
    except (OSError, zipfile.BadZipFile):
        return False


def _looks_like_text(head: bytes) -> bool:
    if b"\0" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as err:
        return err.start >= len(head) - 3  # only a character cut at the end of the block
    return True
