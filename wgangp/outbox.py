"""A local JSON-lines journal of the tracking calls the store did not take.

When the MLflow store goes away mid-run, training goes on: every metric batch, tag, artifact upload
or status change that could not be sent is appended here, in order, one JSON object per line, and
flushed at once (a crash loses nothing already written). ``python -m wgangp.sync <output dir>``
replays it into the same MLflow run later.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

OUTBOX_FILE = "tracking_outbox.jsonl"


class Outbox:
    """Append-only while a run writes it; rewritten (atomically) only by a replay."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self.appended = 0

    def append(self, entry: dict[str, Any]) -> None:
        line = json.dumps(entry, default=str)
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(line + "\n")
                handle.flush()
            self.appended += 1

    def entries(self) -> Iterator[dict[str, Any]]:
        """The journal's entries in order; a torn last line (crash mid-write) is skipped."""
        if not self.path.is_file():
            return
        with self.path.open(encoding="utf-8") as handle:
            for line in handle:
                line = line.strip()
                if not line:
                    continue
                try:
                    yield json.loads(line)
                except ValueError:
                    continue

    def __len__(self) -> int:
        return sum(1 for _ in self.entries())

    def replace(self, remaining: list[dict[str, Any]]) -> None:
        """Keep only ``remaining`` (the entries a replay could not send); delete when empty."""
        with self._lock:
            if not remaining:
                self.path.unlink(missing_ok=True)
                return
            tmp = self.path.with_suffix(".jsonl.tmp")
            tmp.write_text("".join(json.dumps(e, default=str) + "\n" for e in remaining))
            os.replace(tmp, self.path)
