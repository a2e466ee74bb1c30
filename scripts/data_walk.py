"""How far the data layer makes a reader walk: ``python -m scripts.data_walk``.

Follows ``prepare_data`` (what ``python -m wgangp.train`` calls first) on a user's table from
``data.path`` to the split, and counts the files of ``wgangp/data/`` the first call of each of its
functions lands in: a *stop* is a call landing in another file than the one before, a *return* a
stop in a file already visited. One function called a thousand times (per cell, per column) is
one call: the figures measure how the code is laid out, not how much work it does. By room, the
stops count crossings between ``read/``, ``schema/``, ``transform/``, ``builtin/`` and the modules
at the top. The table is
the tests' fraud-team table (a categorical with gaps, an integer, an amount, a date, a text label).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def walk(rooms: bool = False) -> tuple[int, int, int]:
    """``(stops, files, returns)`` of one ``prepare_data`` call (imports warmed first); with
    ``rooms``, of the rooms (``read/``, ``schema/``, ...; a top-level module is its own)."""
    sys.path.insert(0, str(REPO / "tests"))
    from support.tables import fraud_team_table

    from wgangp.config import DataConfig
    from wgangp.data.prepare import prepare_data

    folder = Path(tempfile.mkdtemp())
    path = folder / "transactions.csv"
    fraud_team_table().to_csv(path, index=False)
    data = DataConfig(path=str(path), label="is_fraud", fallback="error")
    prepare_data(data, seed=0, launch_dir=folder)
    package = str(REPO / "wgangp" / "data")
    called: set[tuple[str, int]] = set()
    files: list[str] = []

    def profile(frame, event: str, arg: object) -> None:
        code = frame.f_code
        if event != "call" or not code.co_filename.startswith(package):
            return
        if (code.co_filename, code.co_firstlineno) in called:
            return
        called.add((code.co_filename, code.co_firstlineno))
        where = code.co_filename[len(package) + 1 :]
        where = where.split("/")[0] if rooms else where
        if not files or files[-1] != where:
            files.append(where)

    sys.setprofile(profile)
    try:
        prepare_data(data, seed=0, launch_dir=folder)
    finally:
        sys.setprofile(None)
    returns = len(files) - len(set(files))
    return len(files), len(set(files)), returns


def main() -> None:
    stops, files, returns = walk()
    print(f"data.path to the split: {stops} stops in {files} files, {returns} returns")
    stops, rooms, returns = walk(rooms=True)
    print(f"by room (read/, schema/, ...): {stops} stops in {rooms} rooms, {returns} returns")


if __name__ == "__main__":
    main()
