"""Which files ``data.path`` names, and that they make one table.

``data.path`` is one file, a folder, a glob or an object-store URL; a ``file://`` URL is the local
path it names. A name that exists as written is that file or folder even when it holds a glob
character (``a[1].csv``). A folder is its table files and those of its Hive partition folders
(``Status=bad/part-0.parquet``, as Spark writes a partitioned table), whose ``key=value`` folder
names are columns of the table. A glob follows a symlinked folder once: a symlink loop or two
ways into one folder never read a file twice.

Every file of one table: one format (Parquet or CSV), no empty file, comma-separated, the same
columns (in any order, each name once), and in Parquet each column of one kind of type (numbers
in every file, or text in every file). Each problem is one line naming the files.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import os
import re
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from wgangp.data.read.duckdb_scan import is_url, remote_columns, remote_files
from wgangp.data.read.parquet_columns import parquet_schema, type_kind, type_name
from wgangp.data.read.table_reader import (
    PARQUET_SUFFIXES,
    check_format_matches_name,
    check_separator,
    read_header,
)
from wgangp.data.schema.cells import check_distinct_names
from wgangp.errors import DataError

CSV_SUFFIXES = (".csv", ".csv.gz")
#: A Hive partition folder's name: ``key=value``.
_PARTITION = re.compile(r"^([^=]+)=(.*)$")


@dataclass(frozen=True)
class TableFiles:
    """The files ``data.path`` names, all of one format."""

    spec: str  # data.path as resolved: a file, a folder, a pattern or a URL
    files: tuple[str, ...]
    parquet: bool
    #: The Hive partition keys under the folder (or the pattern's fixed part), in path order.
    partitions: tuple[str, ...] = ()
    #: Whether ``spec`` is one local file, named as itself (pandas reads it when small).
    one_local_file: bool = dataclasses.field(init=False)
    #: The table's name for runs and MLflow: the file's stem, the folder's name, or the last
    #: part of a pattern without wildcards.
    name: str = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        # Facts of the files found, taken once where they are found: the readers ask them often.
        spec = self.spec
        local = len(self.files) == 1 and self.files[0] == spec and not is_url(spec)
        if local or is_url(spec) and not is_pattern(spec):
            name = spec.rstrip("/").rsplit("/", 1)[-1].split(".")[0]
        else:
            parts = [p for p in re.split(r"[/\\]", spec) if p and not is_pattern(p)]
            name = (parts[-1].split(".")[0] if parts else "table") or "table"
        object.__setattr__(self, "one_local_file", local)
        object.__setattr__(self, "name", name)


def is_pattern(text: str) -> bool:
    return any(c in text for c in "*?[")


def names_files(path: str) -> bool:
    """Whether ``data.path`` names files for :func:`table_files` even though no file of that
    name exists: a pattern or a URL."""
    return is_url(path) or is_pattern(path)


def local_path(spec: str) -> str:
    """A ``file://`` URL as the local path it names (DuckDB would fetch it through httpfs)."""
    if not spec.lower().startswith("file://"):
        return spec
    parts = urllib.parse.urlsplit(spec)
    if parts.netloc not in ("", "localhost"):
        raise DataError(
            f"data.path={spec} names the host {parts.netloc}; a file:// URL reads a file of this "
            "machine: write file:///path/to/table or the path itself"
        )
    return urllib.parse.unquote(parts.path)


def table_files(spec: str) -> TableFiles:
    """The files ``spec`` names (one file, a folder's table files, a glob's matches, a URL),
    sorted, all Parquet or all CSV; each problem one DataError line."""
    spec = local_path(spec)
    base = None
    if is_url(spec):
        files = remote_files(spec) if is_pattern(spec) else [spec]
        if not files:
            raise DataError(
                f"no file matches data.path={spec}; check the pattern and the credentials"
            )
    elif Path(spec).is_dir():
        base = spec
        files = _unique(_folder_files(Path(spec), set()))
        if not files:
            raise DataError(
                f"{spec} is a folder without Parquet or CSV files (.parquet, .pq, .csv, "
                ".csv.gz); put the table's files there, or set data.path to one file"
            )
    elif Path(spec).exists() or not is_pattern(spec):
        files = [spec]
    else:
        base = _fixed_part(spec)
        files = _unique(p for p in _matches(spec) if Path(p).is_file() and _is_table(p))
        if not files:
            raise DataError(
                f"no Parquet or CSV file matches data.path={spec}; check the pattern (e.g. "
                "data/transactions/*.parquet) or give a file or a folder"
            )
    parquet = [f for f in files if _suffix(f) in PARQUET_SUFFIXES]
    if parquet and len(parquet) < len(files):
        other = next(f for f in files if f not in parquet)
        raise DataError(
            f"{spec} holds both Parquet and CSV files ({Path(parquet[0]).name}, "
            f"{Path(other).name}); keep the files of one table in one format"
        )
    keys = _partition_keys(base, files[0]) if base is not None else ()
    return TableFiles(spec, tuple(files), parquet=bool(parquet), partitions=keys)


def table_columns(files: TableFiles) -> list[str] | None:
    """The first file's column names, read without its rows; None when it cannot be read (the
    reading's one line comes later)."""
    first = files.files[0]
    if is_url(first):
        return remote_columns(first, files.parquet)
    return read_header(Path(first)) if Path(first).is_file() else None


def check_columns(files: TableFiles) -> list[str]:
    """The table's columns (the first file's, then its partition keys); every other file must
    have the same (in any order), no name twice, no file may be empty, and in Parquet each
    column must be of one kind of type in every file."""
    first: list[str] | None = None
    kinds: dict[str, tuple[str, str, str]] = {}  # column -> (kind, type, first file with it)
    for name in files.files:
        if not is_url(name):
            path = Path(name)
            if path.stat().st_size == 0:
                raise DataError(
                    f"{name} is empty (0 bytes, no rows); remove it from {files.spec} or write "
                    "it again"
                )
            if not files.parquet:
                check_format_matches_name(path)
            columns = read_header(path)
        else:
            columns = remote_columns(name, files.parquet)
        if not columns:
            raise DataError(
                f"{name} cannot be read as a {'Parquet' if files.parquet else 'CSV'} table (no "
                "header); write it again, or remove it from the table's files"
            )
        if not files.parquet:
            check_separator(name, columns)
        check_distinct_names(columns, name)
        if files.partitions:
            base = files.spec if Path(files.spec).is_dir() else _fixed_part(files.spec)
            columns = [*columns, *_partition_keys(base, name)]
        if files.parquet and not is_url(name):
            _check_kinds(name, kinds)
        if first is None:
            first = columns
            continue
        have, had = set(columns), set(first)
        missing = [c for c in first if c not in have]
        extra = [c for c in columns if c not in had]
        if missing or extra:
            differ = "; ".join(
                f"{what} {', '.join(names[:5])}"
                for what, names in (("missing", missing), ("extra", extra))
                if names
            )
            raise DataError(
                f"{name}: its columns differ from those of {files.files[0]} ({differ}); every "
                "file of one table needs the same columns"
            )
    assert first is not None
    return first


def _check_kinds(name: str, kinds: dict[str, tuple[str, str, str]]) -> None:
    """Each column of ``name`` holds what the first file holding it holds (numbers, text...);
    a column of gaps only goes with any."""
    schema = parquet_schema(name)
    for field in schema or ():
        kind, typed = type_kind(field.type), type_name(field.type)
        seen = kinds.get(field.name)
        if seen is None or seen[0] == "null":
            kinds[field.name] = (kind, typed, name)
        elif kind not in (seen[0], "null"):
            raise DataError(
                f"{name}: column {field.name} is {typed}, but {seen[1]} in {seen[2]}; every file "
                f"of one table needs one type per column: write it again with {field.name} as "
                f"{seen[1]}"
            )


def _folder_files(folder: Path, seen: set[tuple[int, int]]) -> Iterator[str]:
    """A folder's table files, and those of its Hive partition folders (``key=value``), each
    real folder once."""
    if not _first_visit(folder, seen):
        return
    entries = sorted(folder.iterdir())
    for entry in entries:
        if entry.is_file() and _is_table(entry.name):
            yield str(entry)
    for entry in entries:
        if entry.is_dir() and _PARTITION.match(entry.name) and not _hidden(entry.name):
            yield from _folder_files(entry, seen)


def _matches(pattern: str) -> Iterator[str]:
    """The paths ``pattern`` matches, as ``glob.glob(pattern, recursive=True)`` finds them, but
    following each real folder once under ``**``."""
    parts = pattern.split("/")
    start = "/" if pattern.startswith("/") else "."
    parts = [p for p in parts if p] if pattern.startswith("/") else parts
    seen: set[tuple[int, int]] = set()
    for found in _walk(start, parts, seen):
        yield found[2:] if start == "." and found.startswith("./") else found


def _walk(base: str, parts: list[str], seen: set[tuple[int, int]]) -> Iterator[str]:
    if not parts:
        yield base
        return
    head, rest = parts[0], parts[1:]
    if head == "**":
        if not os.path.isdir(base) or not _first_visit(Path(base), seen):
            return  # a folder seen already (a symlink loop, another way in)
        yield from _walk(base, rest, seen)  # no folder
        children = [os.path.join(base, name) for name in _listed(base, "*")]
        # Real folders before symlinked ones: a file is found by its own path first.
        for child in sorted(children, key=lambda c: (os.path.islink(c), c)):
            if os.path.isdir(child):
                yield from _walk(child, parts, seen)
            elif not rest:
                yield child
    elif not is_pattern(head):
        child = os.path.join(base, head)
        if os.path.lexists(child):
            yield from _walk(child, rest, seen)
    elif os.path.isdir(base):
        for name in _listed(base, head):
            yield from _walk(os.path.join(base, name), rest, seen)


def _listed(folder: str, pattern: str) -> list[str]:
    """The names in ``folder`` that ``pattern`` matches (hidden ones only by a pattern that
    starts with a dot), sorted."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(
        n
        for n in names
        if fnmatch.fnmatchcase(n, pattern) and (not n.startswith(".") or pattern.startswith("."))
    )


def _first_visit(folder: Path, seen: set[tuple[int, int]]) -> bool:
    try:
        stat = folder.stat()
    except OSError:
        return False
    key = (stat.st_dev, stat.st_ino)
    if key in seen:
        return False
    seen.add(key)
    return True


def _unique(paths: Iterator[str] | list[str]) -> list[str]:
    """Sorted paths, each real file once (the first name of it)."""
    kept, seen = [], set()
    for path in sorted(paths):
        stat = os.stat(path)
        if (stat.st_dev, stat.st_ino) not in seen:
            seen.add((stat.st_dev, stat.st_ino))
            kept.append(path)
    return kept


def _fixed_part(pattern: str) -> str:
    """The folder a pattern starts from: its parts before the first wildcard."""
    parts = pattern.split("/")
    fixed = next((i for i, part in enumerate(parts) if is_pattern(part)), len(parts))
    return "/".join(parts[:fixed]) or ("/" if pattern.startswith("/") else ".")


def _partition_keys(base: str, file: str) -> tuple[str, ...]:
    """The Hive partition keys of ``file``'s folders under ``base``."""
    try:
        relative = Path(file).parent.relative_to(Path(base))
    except ValueError:
        return ()
    found = (_PARTITION.match(part) for part in relative.parts)
    return tuple(match.group(1) for match in found if match)


def _suffix(name: str) -> str:
    lower = name.lower()
    return ".csv.gz" if lower.endswith(".csv.gz") else Path(lower).suffix


def _hidden(name: str) -> bool:
    return name.startswith((".", "_"))


def _is_table(name: str) -> bool:
    base = Path(name).name
    return not _hidden(base) and _suffix(base) in (*PARQUET_SUFFIXES, *CSV_SUFFIXES)
