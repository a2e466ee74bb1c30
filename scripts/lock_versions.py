"""Check that this Python's installed packages are the versions uv.lock pins (docs/installs.md).

    python scripts/lock_versions.py uv.lock pandas numpy scikit-learn mlflow tensorflow

Prints one line per package (`name installed == locked`) and exits 1 if any differs or is
missing. Where the lock holds several versions of a package (numpy for Python 3.11 and for newer
ones), the one whose resolution markers hold for this interpreter counts. `tensorflow` also
matches an installed tensorflow-cpu (the CPU image's build of the same version), compared with
the lock's tensorflow-cpu entry.

Standard library only, plus `packaging` where the lock has forks: scripts/docker_check.sh pipes
this file into the images' own Python (`python - uv.lock ... < scripts/lock_versions.py`).
"""

from __future__ import annotations

import sys
import tomllib
from importlib import metadata


def _canonical(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def locked_version(lock: dict, name: str) -> str | None:
    """The version the lock pins for ``name`` on this interpreter (None: not in the lock)."""
    entries = [p for p in lock["package"] if _canonical(p["name"]) == _canonical(name)]
    if len(entries) <= 1:
        return entries[0]["version"] if entries else None
    from packaging.markers import Marker

    for entry in entries:
        markers = entry.get("resolution-markers", [])
        if any(Marker(marker).evaluate() for marker in markers):
            return entry["version"]
    return None


def installed_version(name: str) -> tuple[str, str | None]:
    """(distribution, version) as installed; tensorflow falls back to tensorflow-cpu."""
    candidates = [name, "tensorflow-cpu"] if _canonical(name) == "tensorflow" else [name]
    for candidate in candidates:
        try:
            return candidate, metadata.version(candidate)
        except metadata.PackageNotFoundError:
            continue
    return name, None


def compare(lock: dict, names: list[str]) -> list[tuple[str, str | None, str | None]]:
    """(distribution, installed, locked) for each name."""
    rows = []
    for name in names:
        distribution, installed = installed_version(name)
        rows.append((distribution, installed, locked_version(lock, distribution)))
    return rows


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    with open(argv[0], "rb") as handle:
        lock = tomllib.load(handle)
    failed = False
    for distribution, installed, locked in compare(lock, argv[1:]):
        same = installed is not None and installed == locked
        failed |= not same
        print(f"{distribution} {installed or 'missing'} {'==' if same else '!='} {locked}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
