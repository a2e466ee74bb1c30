"""Invertible feature transform between original units and the networks' space.

Fitted on the training split only. Amount goes through ``log1p`` (it spans 0..25,000 with a long
tail), then every feature is standardized. Stored as JSON, never pickled.

What ``inverse_transform`` promises a user of the generated rows: every value is finite; Time lies
in the training rows' range, rounded to seconds; Amount lies in ``[0, amount_max]``, the largest
training Amount, rounded to cents. A generator can extrapolate in the networks' space, and the
inverse of ``log1p`` turns a small overshoot into a huge amount (``expm1(20)`` is 4.85e8 against a
real maximum near 25,700): a fraud team augmenting its data never wants an amount larger than any
it has seen, so the overshoot is clipped to it. V1..V28 are left as generated (unbounded in the
data too). Files written before ``amount_max`` existed keep the old cap, ``expm1(20)``.

Every fitted parameter and every transformed row is checked finite (a DataError naming the
column), and a non-finite ``preprocessing.json`` is refused on load: a model trained or served
with an infinite scale only ever produces infinite or constant columns.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np
import pandas as pd

from wgangp.data.numbers import short_number
from wgangp.data.schema import AMOUNT, FEATURES, LABEL, TIME
from wgangp.errors import DataError

#: Version 2 added ``amount_max``: versions that read only 1 refuse it in their one line
#: instead of a TypeError; this one reads both (1 keeps the old Amount cap).
_FORMAT = "wgangp.preprocessing/2"
_READABLE = ("wgangp.preprocessing/1", _FORMAT)
#: The cap of ``log1p(Amount)`` for files without ``amount_max`` (exp(20) ~ 4.85e8).
_LEGACY_LOG_AMOUNT_CAP = 20.0
_FIX_ROWS = "fix or drop the rows with extreme {column} values"


@dataclass
class TabularTransformer:
    """Standardize (optionally log1p Amount) the 30 feature columns; Class passes through."""

    scaling: str = "standard"
    log_amount: bool = True
    mean: list[float] | None = None
    std: list[float] | None = None
    time_min: float = 0.0
    time_max: float = 0.0
    #: The largest Amount of the rows fitted on: generated amounts never exceed it.
    amount_max: float | None = None

    @property
    def fitted(self) -> bool:
        return self.mean is not None

    def fit(self, frame: pd.DataFrame) -> TabularTransformer:
        """Fit on ``frame`` (the training split); DataError if a parameter comes out non-finite."""
        x = self._forward_units(frame)
        with np.errstate(over="ignore", invalid="ignore"):
            if self.scaling == "standard":
                mean, std = x.mean(axis=0), x.std(axis=0)
                std = np.where(std > 0, std, 1.0)  # a constant column; NaN stays NaN
            else:
                mean, std = np.zeros(len(FEATURES)), np.ones(len(FEATURES))
        self.mean, self.std = mean.tolist(), std.tolist()
        self.time_min = float(frame[TIME].min())
        self.time_max = float(frame[TIME].max())
        self.amount_max = float(frame[AMOUNT].max())
        bad = self._nonfinite()
        if bad:
            column, values = bad[0]
            raise DataError(
                f"column {column} of the training rows makes the fitted transform non-finite "
                f"({values}): its values are too large to scale; {_FIX_ROWS.format(column=column)}"
            )
        return self

    def transform(self, frame: pd.DataFrame) -> np.ndarray:
        """Feature columns of ``frame`` -> float32 array of shape (rows, 30), all finite."""
        self._check_fitted()
        with np.errstate(over="ignore", invalid="ignore"):
            x = (self._forward_units(frame) - np.asarray(self.mean)) / np.asarray(self.std)
            x = x.astype(np.float32)
        finite = np.isfinite(x)
        if not finite.all():
            row, col = (int(i[0]) for i in np.nonzero(~finite))
            column = FEATURES[col]
            raise DataError(
                f"column {column} is non-finite after scaling in {int((~finite[:, col]).sum())} of "
                f"{len(x)} row(s) (first at row {row + 1}: {short_number(x[row, col])}); "
                f"{_FIX_ROWS.format(column=column)}"
            )
        return x

    def inverse_transform(self, x: np.ndarray, labels: np.ndarray | None = None) -> pd.DataFrame:
        """Network outputs -> a frame in original units (with Class when ``labels`` is given).

        Amount is clipped to ``[0, amount_max]`` and Time to the fitted range (module docstring).
        """
        self._check_fitted()
        values = np.asarray(x, dtype=np.float64) * np.asarray(self.std) + np.asarray(self.mean)
        frame = pd.DataFrame(values, columns=list(FEATURES))
        amount = frame[AMOUNT].to_numpy()
        top = np.inf if self.amount_max is None else self.amount_max
        if self.log_amount:
            log_top = _LEGACY_LOG_AMOUNT_CAP if self.amount_max is None else np.log1p(top)
            amount = np.expm1(np.clip(amount, 0.0, log_top))
        frame[AMOUNT] = np.clip(np.round(amount, 2), 0.0, top)  # cents, within [0, amount_max]
        frame[TIME] = np.round(np.clip(frame[TIME].to_numpy(), self.time_min, self.time_max))
        if labels is not None:
            frame[LABEL] = np.asarray(labels, dtype=np.int64)
        return frame

    def to_json(self) -> str:
        # allow_nan=False: never write Infinity or NaN (not JSON; fit refuses them before this)
        return json.dumps({"format": _FORMAT, **asdict(self)}, indent=2, allow_nan=False)

    @classmethod
    def from_json(cls, text: str, source: str = "preprocessing file") -> TabularTransformer:
        """Parse and check a saved transform; DataError (one line mentioning ``source``)."""
        try:
            payload = json.loads(text)
        except ValueError as err:
            raise DataError(f"{source} is not valid JSON ({err}); {_RETRAIN}") from None
        if not isinstance(payload, dict) or payload.pop("format", None) not in _READABLE:
            raise DataError(f"{source} is not a {' or '.join(_READABLE)} document; {_RETRAIN}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(payload) - known)
        if unknown:
            raise DataError(f"{source} has unknown key(s) {', '.join(unknown)}; {_RETRAIN}")
        transformer = cls(**payload)
        transformer._check_saved(source)
        return transformer

    def save(self, path: Path) -> Path:
        path.write_text(self.to_json())
        return path

    @classmethod
    def load(cls, path: Path) -> TabularTransformer:
        return cls.from_json(Path(path).read_text(), source=str(path))

    def _forward_units(self, frame: pd.DataFrame) -> np.ndarray:
        x = frame.loc[:, list(FEATURES)].to_numpy(dtype=np.float64, copy=True)
        if self.log_amount:
            x[:, FEATURES.index(AMOUNT)] = np.log1p(np.clip(x[:, FEATURES.index(AMOUNT)], 0, None))
        return x

    def _nonfinite(self) -> list[tuple[str, str]]:
        """(column, parameters shown) for each column with a non-finite fitted parameter."""
        mean, std = np.asarray(self.mean, np.float64), np.asarray(self.std, np.float64)
        found = [
            (FEATURES[i], f"mean {short_number(mean[i])}, std {short_number(std[i])}")
            for i in np.flatnonzero(~(np.isfinite(mean) & np.isfinite(std)))
        ]
        ranges = {
            TIME: {"min": self.time_min, "max": self.time_max},
            AMOUNT: {"max": self.amount_max if self.amount_max is not None else 0.0},
        }
        for column, values in ranges.items():
            if column not in {name for name, _ in found} and not all(
                math.isfinite(v) for v in values.values()
            ):
                shown = ", ".join(f"{name} {short_number(v)}" for name, v in values.items())
                found.append((column, shown))
        return found

    def _check_saved(self, source: str) -> None:
        """A loaded transform: the right shapes and only finite numbers."""
        if self.mean is None or self.std is None:
            return  # an unfitted transform; using it fails in _check_fitted
        if len(self.mean) != len(FEATURES) or len(self.std) != len(FEATURES):
            raise DataError(
                f"{source} has {len(self.mean)} means and {len(self.std)} scales, not "
                f"{len(FEATURES)}; {_RETRAIN}"
            )
        try:
            bad = self._nonfinite()
        except (TypeError, ValueError):
            raise DataError(f"{source} holds parameters that are not numbers; {_RETRAIN}") from None
        if bad:
            shown = ", ".join(f"{column} ({values})" for column, values in bad[:3])
            more = f" and {len(bad) - 3} more column(s)" if len(bad) > 3 else ""
            raise DataError(
                f"{source} holds non-finite parameters for {shown}{more}; a model trained with "
                "them only produces infinite or constant columns: retrain it on validated data"
            )

    def _check_fitted(self) -> None:
        if not self.fitted:
            raise RuntimeError("TabularTransformer.fit must be called before transform")


_RETRAIN = "it was not written by wgangp's training or was edited: retrain to get a new one"
