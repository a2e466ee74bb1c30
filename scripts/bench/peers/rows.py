"""The rows every system trains on: the real sample, or flagged simulated rows without it.

Numpy and the standard library only (pandas lazily), because the peers import it in their own
environments.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

REPO = Path(__file__).resolve().parents[3]
DEFAULT_REAL_SAMPLE = REPO.parent / "shared" / "data" / "creditcard_real_sample.csv.gz"
SAMPLE_ROWS = 30_172  # the real sample's size, which simulated rows stand in for
N_FEATURES = 30
N_CLASSES = 2


@dataclass(frozen=True)
class Rows:
    """Feature matrix (standardized float32), integer labels, and where they came from."""

    features: np.ndarray
    labels: np.ndarray
    source: str
    simulated: bool

    @property
    def note(self) -> str:
        if self.simulated:
            return f"SIMULATED DATA ({self.source}): real sample not found"
        return f"real rows: {len(self.labels)} ({int(self.labels.sum())} frauds) from {self.source}"


def real_sample_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """``--data``, else ``$WGANGP_REAL_SAMPLE``, else the shared sample beside the repo."""
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("WGANGP_REAL_SAMPLE") or DEFAULT_REAL_SAMPLE)


def simulated_rows(n_rows: int) -> Rows:
    """Gaussian stand-in rows with the real table's shape (used only when the sample is absent)."""
    rng = np.random.default_rng(0)
    labels = (rng.random(n_rows) < 0.01).astype(np.int64)
    labels[:2] = (0, 1)
    features = rng.standard_normal((n_rows, N_FEATURES), dtype=np.float32)
    features += labels[:, None].astype(np.float32)
    return Rows(features, labels, f"numpy normal, {n_rows} rows", simulated=True)


def load_frame(explicit: str | os.PathLike[str] | None, notes: list[str]) -> pd.DataFrame:
    """The raw table (31 columns, Kaggle order; a peer's own preprocessing reads it), or a
    simulated one; where it came from goes to ``notes``. Pandas is imported here, lazily."""
    import pandas as pd

    path = real_sample_path(explicit)
    if not path.is_file():
        rows = simulated_rows(SAMPLE_ROWS)
        frame = pd.DataFrame(rows.features, columns=[f"F{i}" for i in range(N_FEATURES)])
        frame["Class"] = rows.labels
        notes.append("SIMULATED DATA: real sample not found")
        return frame
    frame = pd.read_csv(path)
    frame.columns = [str(c).strip('"') for c in frame.columns]
    frame["Class"] = frame["Class"].astype(str).str.strip('"').astype(int)
    notes.append(f"real rows: {len(frame)} from {path}")
    return frame


def load_rows(explicit: str | os.PathLike[str] | None = None) -> Rows:
    """The real rows, standardized per column; simulated (flagged) rows only if no file and no
    ``--data`` was given (a named file that is missing raises ``FileNotFoundError``)."""
    path = real_sample_path(explicit)
    if not path.is_file():
        if explicit:
            raise FileNotFoundError(f"real sample not found at {path}")
        return simulated_rows(SAMPLE_ROWS)
    frame = load_frame(path, [])
    labels = frame["Class"].to_numpy(np.int64)
    features = frame.drop(columns=["Class"]).to_numpy(np.float64)
    std = features.std(axis=0)
    std[std == 0] = 1.0
    features = ((features - features.mean(axis=0)) / std).astype(np.float32)
    return Rows(features, labels, str(path), simulated=False)
