"""Invertible feature transform between original units and the networks' space.

Fitted on the training split only. Amount goes through ``log1p`` (it spans 0..25,000 with a long
tail), then every feature is scaled (:mod:`wgangp.data.scales`: standardized, or mapped onto a
normal through its quantiles or a fitted Gaussian mixture); the columns in ``quantile_columns`` go
through their quantiles whatever the scaling, so that their repeated values (Amount's 1.00, 0.00,
99.99) come back exact. With ``per_class`` each class gets its own scale: fraud marginals differ
from normal ones (V14 of frauds is centred near -7), and a scale fitted on all rows puts the frauds
in the far tails of the networks' space. Stored as JSON, never pickled.

What ``inverse_transform`` promises a user of the generated rows: every value is finite; Time lies
in the training rows' range (its ends: the means of the earliest and of the latest few rows),
rounded to seconds; Amount lies in ``[0, amount_max]``, the mean of the largest few training
amounts (no one's own amount, docs/privacy.md), rounded to cents. A generator can extrapolate in
the networks' space, and the inverse of ``log1p`` turns a small overshoot into a huge amount
(``expm1(20)`` is 4.85e8 against a real maximum near 25,700): a fraud team augmenting its data
never wants an amount larger than any it has seen, so the overshoot is clipped to it. V1..V28
are left as generated (unbounded in the data too).

Every fitted parameter and every transformed row is checked finite (a DataError naming the
column), and a non-finite ``preprocessing.json`` is refused on load: a model trained or served
with an infinite scale only ever produces infinite or constant columns. So is a finite one whose
numbers no fit writes (a std of 0 or 1e300, unsorted quantiles, a negative ``amount_max``, a
reversed Time range): each would quietly turn its column into a constant or nonsense.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from wgangp.config import PreprocessConfig
from wgangp.data.knots import DEFAULT_MIN_ROWS, extreme_mean
from wgangp.data.numbers import short_number
from wgangp.data.scales import Scale, StandardScale, fit_scale, scale_from_dict
from wgangp.data.schema import AMOUNT, CLASSES, FEATURES, LABEL, MAX_PARAMETER, TIME
from wgangp.errors import DataError

#: The one format this version writes and reads; a file of another (an earlier wgangp's, whose
#: quantile tables held training values) is refused with the retrain line.
_FORMAT = "wgangp.preprocessing/6"
#: The key of a scale shared by both classes in ``scales``.
ALL_ROWS = "all"
_FIX_ROWS = "fix or drop the rows with extreme {column} values"


@dataclass
class TabularTransformer:
    """Scale (optionally log1p Amount) the 30 feature columns; Class passes through."""

    scaling: str = "standard"  # standard | quantile | gmm | none
    log_amount: bool = True
    per_class: bool = False
    #: Feature names mapped through their quantiles whatever ``scaling`` is.
    quantile_columns: list[str] = field(default_factory=list)
    #: A standard scale shared by both classes ...
    mean: list[float] | None = None
    std: list[float] | None = None
    #: ... or every other kind: ``{"all": scale}`` or ``{"0": scale, "1": scale}``.
    scales: dict[str, dict] | None = None
    time_min: float = 0.0
    time_max: float = 0.0
    #: About the largest Amount fitted on (a mean of the largest rows): the generated ones' cap.
    amount_max: float = 0.0

    @classmethod
    def from_config(cls, preprocess: PreprocessConfig) -> TabularTransformer:
        """The unfitted transform ``preprocess.*`` describes."""
        return cls(
            scaling=preprocess.scaling,
            log_amount=preprocess.log_amount,
            per_class=preprocess.per_class,
            quantile_columns=list(preprocess.quantile_columns),
        )

    @property
    def fitted(self) -> bool:
        return self.mean is not None or self.scales is not None

    def fit(self, frame: pd.DataFrame, min_rows: int = DEFAULT_MIN_ROWS) -> TabularTransformer:
        """Fit on ``frame`` (the training split); DataError if a parameter comes out non-finite.

        No stored number is one row's value (docs/privacy.md): quantile knots and the Time and
        Amount bounds are means of at least ``min_rows`` rows (``ship.min_atom_rows``).
        """
        x = self._forward_units(frame)
        columns = [FEATURES.index(name) for name in self.quantile_columns]
        if self.per_class:
            labels = frame[LABEL].to_numpy()
            fitted = {
                str(c): fit_scale(self.scaling, x[labels == c], columns, min_rows) for c in CLASSES
            }
        else:
            fitted = {ALL_ROWS: fit_scale(self.scaling, x, columns, min_rows)}
        self._set_scales(fitted)
        self.time_min = extreme_mean(frame[TIME].to_numpy(), min_rows, largest=False)
        self.time_max = extreme_mean(frame[TIME].to_numpy(), min_rows, largest=True)
        self.amount_max = extreme_mean(frame[AMOUNT].to_numpy(), min_rows, largest=True)
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
        labels = frame[LABEL].to_numpy() if self.per_class else None
        with np.errstate(over="ignore", invalid="ignore"):
            x = self._by_class(self._forward_units(frame), labels, "forward").astype(np.float32)
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
        if self.per_class and labels is None:
            raise ValueError("a per-class transform needs the rows' labels to invert them")
        values = self._by_class(np.asarray(x, dtype=np.float64), labels, "inverse")
        frame = pd.DataFrame(values, columns=list(FEATURES))
        amount = frame[AMOUNT].to_numpy()
        top = self.amount_max
        if self.log_amount:
            amount = np.expm1(np.clip(amount, 0.0, np.log1p(top)))
        frame[AMOUNT] = np.clip(np.round(amount, 2), 0.0, top)  # cents, within [0, amount_max]
        frame[TIME] = np.round(np.clip(frame[TIME].to_numpy(), self.time_min, self.time_max))
        if labels is not None:
            frame[LABEL] = np.asarray(labels, dtype=np.int64)
        return frame

    def to_json(self) -> str:
        payload = {"format": _FORMAT, **asdict(self)}
        # allow_nan=False: never write Infinity or NaN (not JSON; fit refuses them before this)
        return json.dumps(payload, indent=2, allow_nan=False)

    @classmethod
    def from_json(cls, text: str, source: str = "preprocessing file") -> TabularTransformer:
        """Parse and check a saved transform; DataError (one line mentioning ``source``)."""
        payload = parsed_json(text, source)
        found = payload.pop("format", None) if isinstance(payload, dict) else None
        if found != _FORMAT:
            raise DataError(f"{source} is not a {_FORMAT} document (found {found!r}); {RETRAIN}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(payload) - known)
        if unknown:
            raise DataError(f"{source} has unknown key(s) {', '.join(unknown)}; {RETRAIN}")
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

    def _set_scales(self, fitted: dict[str, Scale]) -> None:
        shared = fitted.get(ALL_ROWS)
        if isinstance(shared, StandardScale) and self.scaling != "quantile":
            self.mean, self.std, self.scales = shared.mean, shared.std, None
        else:
            self.mean = self.std = None
            self.scales = {key: scale.to_dict() for key, scale in fitted.items()}
        self._objects = fitted

    def _scale_objects(self) -> dict[str, Scale]:
        objects = getattr(self, "_objects", None)
        if objects is None:
            if self.scales is None:
                objects = {ALL_ROWS: StandardScale(self.mean or [], self.std or [])}
            else:
                objects = {key: scale_from_dict(value) for key, value in self.scales.items()}
            self._objects = objects
        return objects

    def _by_class(self, x: np.ndarray, labels: np.ndarray | None, direction: str) -> np.ndarray:
        """Apply each row's scale (its class's, or the shared one) in ``direction``."""
        objects = self._scale_objects()
        if ALL_ROWS in objects:
            return getattr(objects[ALL_ROWS], direction)(x)
        out = np.empty_like(x, dtype=np.float64)
        for key, scale in objects.items():
            rows = np.asarray(labels) == int(key)
            if rows.any():
                out[rows] = getattr(scale, direction)(x[rows])
        return out

    def _nonfinite(self) -> list[tuple[str, str]]:
        """(column, parameters shown) for each column with a non-finite fitted parameter."""
        found: list[tuple[str, str]] = []
        for scale in self._scale_objects().values():
            for i, shown in scale.nonfinite_columns().items():
                if FEATURES[i] not in {name for name, _ in found}:
                    found.append((FEATURES[i], shown))
        ranges = {
            TIME: {"min": self.time_min, "max": self.time_max},
            AMOUNT: {"max": self.amount_max},
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
        if not self.fitted:
            return  # an unfitted transform; using it fails in _check_fitted
        if self.scales is None and (
            self.mean is None
            or self.std is None
            or len(self.mean) != len(FEATURES)
            or len(self.std) != len(FEATURES)
        ):
            means, scales = len(self.mean or []), len(self.std or [])
            raise DataError(
                f"{source} has {means} means and {scales} scales, not {len(FEATURES)}; {RETRAIN}"
            )
        expected = {str(c) for c in CLASSES} if self.per_class else {ALL_ROWS}
        try:
            columns = [FEATURES.index(name) for name in self.quantile_columns]
            if any(
                getattr(s, "columns", columns) != columns for s in self._scale_objects().values()
            ):
                raise ValueError(f"scales for other columns than {self.quantile_columns}")
            if self.scales is not None and set(self.scales) != expected:
                raise ValueError(f"scales for {sorted(self.scales)}")
            if any(s.width() != len(FEATURES) for s in self._scale_objects().values()):
                raise ValueError(f"scales not {len(FEATURES)} columns wide")
            bad = self._nonfinite()
        except (TypeError, ValueError, AttributeError):
            raise DataError(f"{source} holds parameters that are not numbers; {RETRAIN}") from None
        if bad:
            shown = ", ".join(f"{column} ({values})" for column, values in bad[:3])
            more = f" and {len(bad) - 3} more column(s)" if len(bad) > 3 else ""
            raise DataError(
                f"{source} holds non-finite parameters for {shown}{more}; a model trained with "
                "them only produces infinite or constant columns: retrain it on validated data"
            )
        self._check_meaning(source)

    def _check_meaning(self, source: str) -> None:
        """A loaded transform's finite numbers that no fit writes (a std of 0, unsorted knots, a
        negative Amount cap): one line naming the column, since each silently spoils its rows."""
        try:
            found = {key: scale.senseless_columns() for key, scale in self._scale_objects().items()}
        except (TypeError, ValueError):  # references, which no earlier check reads
            raise DataError(f"{source} holds parameters that are not numbers; {RETRAIN}") from None
        for key, senseless in found.items():
            if senseless:
                i, shown = next(iter(senseless.items()))
                more = f" (and {len(senseless) - 1} more column(s))" if len(senseless) > 1 else ""
                whose = "the" if key == ALL_ROWS else f"class {key}'s"
                raise DataError(
                    f"{source} holds {whose} scale of {FEATURES[i]} with {shown}{more}; {RETRAIN}"
                )
        for name in ("time_min", "time_max", "amount_max"):
            value = getattr(self, name)
            if abs(value) > MAX_PARAMETER:
                raise DataError(
                    f"{source} holds {name} {short_number(value)}, beyond {MAX_PARAMETER:g}, "
                    f"larger than any value of the table; {RETRAIN}"
                )
        if self.amount_max < 0:
            raise DataError(
                f"{source} holds amount_max {short_number(self.amount_max)}, a negative cap for "
                f"every generated Amount (amounts are >= 0); {RETRAIN}"
            )
        if self.time_min > self.time_max:
            raise DataError(
                f"{source} holds time_min {short_number(self.time_min)} above time_max "
                f"{short_number(self.time_max)}, so Time's range is reversed; {RETRAIN}"
            )

    def _check_fitted(self) -> None:
        if not self.fitted:
            raise RuntimeError("TabularTransformer.fit must be called before transform")


#: The fix in every line refusing a saved file (this transform, a calibration).
RETRAIN = "it was not written by wgangp's training or was edited: retrain to get a new one"


def parsed_json(text: str, source: str) -> Any:
    """A saved file's JSON; one DataError line naming ``source`` when it is not JSON."""
    try:
        return json.loads(text)
    except ValueError as err:
        raise DataError(f"{source} is not valid JSON ({err}); {RETRAIN}") from None
