"""Invertible feature transform between original units and the networks' space.

Fitted on the training split only. Amount goes through ``log1p`` (it spans 0..25,000 with a long
tail), then every feature is standardized. ``inverse_transform`` returns rows in original units with
Amount >= 0 rounded to cents and Time clipped to the fitted range. Stored as JSON, never pickled.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from wgangp.data.schema import AMOUNT, FEATURES, LABEL, TIME
from wgangp.errors import DataError

_FORMAT = "wgangp.preprocessing/1"


@dataclass
class TabularTransformer:
    """Standardize (optionally log1p Amount) the 30 feature columns; Class passes through."""

    scaling: str = "standard"
    log_amount: bool = True
    mean: list[float] | None = None
    std: list[float] | None = None
    time_min: float = 0.0
    time_max: float = 0.0

    @property
    def fitted(self) -> bool:
        return self.mean is not None

    def fit(self, frame: pd.DataFrame) -> TabularTransformer:
        x = self._forward_units(frame)
        if self.scaling == "standard":
            std = x.std(axis=0)
            self.mean = x.mean(axis=0).tolist()
            self.std = np.where(std > 0, std, 1.0).tolist()
        else:
            self.mean = [0.0] * len(FEATURES)
            self.std = [1.0] * len(FEATURES)
        self.time_min = float(frame[TIME].min())
        self.time_max = float(frame[TIME].max())
        return self

    def transform(self, frame: pd.DataFrame) -> np.ndarray:
        """Feature columns of ``frame`` -> float32 array of shape (rows, 30)."""
        self._check_fitted()
        x = (self._forward_units(frame) - np.asarray(self.mean)) / np.asarray(self.std)
        return x.astype(np.float32)

    def inverse_transform(self, x: np.ndarray, labels: np.ndarray | None = None) -> pd.DataFrame:
        """Network outputs -> a frame in original units (with Class when ``labels`` is given)."""
        self._check_fitted()
        values = np.asarray(x, dtype=np.float64) * np.asarray(self.std) + np.asarray(self.mean)
        frame = pd.DataFrame(values, columns=list(FEATURES))
        amount = frame[AMOUNT].to_numpy()
        if self.log_amount:
            amount = np.expm1(np.clip(amount, 0.0, 20.0))  # exp(20) ~ 5e8: far past any real amount
        frame[AMOUNT] = np.round(np.clip(amount, 0.0, None), 2)
        frame[TIME] = np.round(np.clip(frame[TIME].to_numpy(), self.time_min, self.time_max))
        if labels is not None:
            frame[LABEL] = np.asarray(labels, dtype=np.int64)
        return frame

    def to_json(self) -> str:
        return json.dumps({"format": _FORMAT, **asdict(self)}, indent=2)

    @classmethod
    def from_json(cls, text: str) -> TabularTransformer:
        payload = json.loads(text)
        if payload.pop("format", None) != _FORMAT:
            raise DataError(f"preprocessing file is not a {_FORMAT} JSON document")
        return cls(**payload)

    def save(self, path: Path) -> Path:
        path.write_text(self.to_json())
        return path

    @classmethod
    def load(cls, path: Path) -> TabularTransformer:
        return cls.from_json(Path(path).read_text())

    def _forward_units(self, frame: pd.DataFrame) -> np.ndarray:
        x = frame.loc[:, list(FEATURES)].to_numpy(dtype=np.float64, copy=True)
        if self.log_amount:
            x[:, FEATURES.index(AMOUNT)] = np.log1p(np.clip(x[:, FEATURES.index(AMOUNT)], 0, None))
        return x

    def _check_fitted(self) -> None:
        if not self.fitted:
            raise RuntimeError("TabularTransformer.fit must be called before transform")
