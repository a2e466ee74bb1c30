"""Column scales: the fitted, invertible maps a transform applies to all 30 feature columns at once.

``standard`` subtracts the mean and divides by the standard deviation. ``quantile`` maps each
column through its empirical quantiles onto a standard normal (scikit-learn's
``QuantileTransformer``): a generator then learns bell-shaped columns whatever the marginal, and
the inverse maps every value back into the fitted rows' range, so a marginal's tails and bounds come
from the data, not from the generator's extrapolation. ``MixedScale`` applies one of them to every
column and then maps some columns through their quantiles: a column with point masses (20% of the
frauds are for exactly 1.00) comes back with them, since the inverse maps a whole interval of the
normal scale onto each repeated value. Each scale is stored as plain numbers (JSON). Quantiles of
training rows are knots that are means of groups of rows (:mod:`wgangp.data.knots`), never one
row's value: the JSON ships inside a bundle other people read (docs/privacy.md).

A stored scale is read back checked for meaning, not only finiteness (``senseless_columns``): a
standard deviation of 0, negative or beyond 1e16, a mean or knot beyond 1e16 (ten times the largest
value validation lets in), knots out of order or references not rising from 0 to 1 are numbers no
fit writes, and each would quietly turn every generated value of its column into one constant or
nonsense.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from wgangp.data.knots import DEFAULT_MIN_ROWS, grouped_knots
from wgangp.data.numbers import MAX_PARAMETER, short_number

#: Quantiles a ``quantile`` scale keeps per column (fewer when fitted on fewer rows).
MAX_QUANTILES = 1000
#: How far a stored knot may fall below the one before it, relative to its column's largest, and
#: still count as sorted: scikit-learn's quantiles are np.nanpercentile's, whose interpolation
#: does not promise monotone results to the last bit (an edit moves knots by far more).
ORDER_TOLERANCE = 1e-12


class Scale(Protocol):
    def forward(self, x: np.ndarray) -> np.ndarray: ...
    def inverse(self, z: np.ndarray) -> np.ndarray: ...
    def to_dict(self) -> dict[str, Any]: ...
    def nonfinite_columns(self) -> dict[int, str]: ...
    def senseless_columns(self) -> dict[int, str]: ...
    def width(self) -> int: ...


def beyond_limit(name: str, value: float) -> str | None:
    """``name value ...`` when ``value`` is larger in magnitude than any fit writes, else None."""
    return (
        f"{name} {short_number(value)} beyond {MAX_PARAMETER:g}"
        if abs(value) > MAX_PARAMETER
        else None
    )


class StandardScale:
    """``(x - mean) / std`` per column; a constant column keeps scale 1."""

    def __init__(self, mean: list[float], std: list[float]) -> None:
        self.mean, self.std = list(mean), list(std)

    @classmethod
    def fit(cls, x: np.ndarray) -> StandardScale:
        with np.errstate(over="ignore", invalid="ignore"):
            mean, std = x.mean(axis=0), x.std(axis=0)
            std = np.where(std > 0, std, 1.0)  # a constant column; NaN stays NaN
        return cls(mean.tolist(), std.tolist())

    @classmethod
    def identity(cls, width: int) -> StandardScale:
        return cls([0.0] * width, [1.0] * width)

    def forward(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):
            return (x - np.asarray(self.mean)) / np.asarray(self.std)

    def inverse(self, z: np.ndarray) -> np.ndarray:
        return z * np.asarray(self.std) + np.asarray(self.mean)

    def to_dict(self) -> dict[str, Any]:
        return {"mean": self.mean, "std": self.std}

    def nonfinite_columns(self) -> dict[int, str]:
        mean, std = np.asarray(self.mean, np.float64), np.asarray(self.std, np.float64)
        bad = np.flatnonzero(~(np.isfinite(mean) & np.isfinite(std)))
        return {int(i): f"mean {short_number(mean[i])}, std {short_number(std[i])}" for i in bad}

    def senseless_columns(self) -> dict[int, str]:
        """A std of 0 or less (a fit keeps 1 for a constant column) or beyond MAX_PARAMETER, a
        mean beyond it: the inverse would make the column constant or absurd."""
        found = {}
        for i, (mean, std) in enumerate(zip(self.mean, self.std, strict=True)):
            if not 0 < std <= MAX_PARAMETER:
                found[i] = f"std {short_number(std)}, not in (0, {MAX_PARAMETER:g}]"
            elif problem := beyond_limit("mean", mean):
                found[i] = problem
        return found

    def width(self) -> int:
        return len(self.mean) if len(self.mean) == len(self.std) else -1


class QuantileScale:
    """Empirical quantiles -> standard normal per column (scikit-learn's QuantileTransformer)."""

    def __init__(self, quantiles: list[list[float]], references: list[float]) -> None:
        self.quantiles, self.references = quantiles, list(references)
        self._fitted = None

    @classmethod
    def fit(cls, x: np.ndarray) -> QuantileScale:
        from sklearn.preprocessing import QuantileTransformer

        fitted = QuantileTransformer(
            n_quantiles=min(MAX_QUANTILES, len(x)),
            output_distribution="normal",
            subsample=100_000,
            random_state=0,
        ).fit(x)
        scale = cls(fitted.quantiles_.tolist(), fitted.references_.tolist())
        scale._fitted = fitted
        return scale

    @classmethod
    def fit_grouped(
        cls, x: np.ndarray, min_rows: int = DEFAULT_MIN_ROWS, owners: np.ndarray | None = None
    ) -> QuantileScale:
        """Knots that are means of groups of >= ``min_rows`` entities (``owners``, one per row;
        :mod:`wgangp.data.knots`): the fit for training rows, whose values a shared bundle must
        not hold."""
        references, quantiles = grouped_knots(x, min_rows, MAX_QUANTILES, owners)
        return cls(quantiles.tolist(), references.tolist())

    def forward(self, x: np.ndarray) -> np.ndarray:
        return self._transformer().transform(x)

    def inverse(self, z: np.ndarray) -> np.ndarray:
        return self._transformer().inverse_transform(z)

    def to_dict(self) -> dict[str, Any]:
        return {"quantiles": self.quantiles, "references": self.references}

    def nonfinite_columns(self) -> dict[int, str]:
        q = np.asarray(self.quantiles, np.float64)
        bad = np.flatnonzero(~np.isfinite(q).all(axis=0))
        return {
            int(i): f"quantiles from {short_number(q[:, i].min())} to {short_number(q[:, i].max())}"
            for i in bad
        }

    def senseless_columns(self) -> dict[int, str]:
        """Knots out of order (the maps interpolate between sorted knots) or beyond MAX_PARAMETER;
        references that do not rise from 0 to 1 spoil every column."""
        q = np.asarray(self.quantiles, np.float64)
        r = np.asarray(self.references, np.float64)
        if r[0] != 0 or r[-1] != 1 or (np.diff(r) < 0).any():
            shown = f"references from {short_number(r.min())} to {short_number(r.max())}"
            return dict.fromkeys(range(q.shape[1]), f"{shown}, not rising from 0 to 1")
        found = {}
        for i, column in enumerate(q.T):
            slack = ORDER_TOLERANCE * float(np.abs(column).max())
            falls = np.flatnonzero(np.diff(column) < -slack)
            if len(falls):
                at = int(falls[0])
                found[i] = (
                    f"quantiles not sorted (knot {at + 2} of {len(column)}, "
                    f"{short_number(column[at + 1])}, below knot {at + 1}, "
                    f"{short_number(column[at])})"
                )
            elif problem := beyond_limit("quantile", column[np.abs(column).argmax()]):
                found[i] = problem
        return found

    def width(self) -> int:
        q = np.asarray(self.quantiles, np.float64)
        ok = q.ndim == 2 and q.shape[0] == len(self.references) >= 2
        return q.shape[1] if ok else -1

    def _transformer(self):
        """The fitted scikit-learn object, rebuilt from the stored numbers after a load."""
        if self._fitted is None:
            from sklearn.preprocessing import QuantileTransformer

            quantiles = np.asarray(self.quantiles, np.float64)
            fitted = QuantileTransformer(
                n_quantiles=len(self.references), output_distribution="normal"
            )
            fitted.quantiles_ = quantiles
            fitted.references_ = np.asarray(self.references, np.float64)
            fitted.n_quantiles_ = len(self.references)
            fitted.n_features_in_ = quantiles.shape[1]
            self._fitted = fitted
        return self._fitted


class MixedScale:
    """``base`` on every column, then the columns ``columns`` through their own quantile scale."""

    def __init__(self, base: Scale, quantile: QuantileScale, columns: list[int]) -> None:
        self.base, self.quantile, self.columns = base, quantile, [int(c) for c in columns]

    @classmethod
    def fit(
        cls,
        base: Scale,
        x: np.ndarray,
        columns: list[int],
        min_rows: int = DEFAULT_MIN_ROWS,
        owners: np.ndarray | None = None,
    ) -> MixedScale:
        return cls(base, QuantileScale.fit_grouped(x[:, columns], min_rows, owners), columns)

    def forward(self, x: np.ndarray) -> np.ndarray:
        z = np.array(self.base.forward(x), dtype=np.float64)
        z[:, self.columns] = self.quantile.forward(x[:, self.columns])
        return z

    def inverse(self, z: np.ndarray) -> np.ndarray:
        x = np.array(self.base.inverse(z), dtype=np.float64)
        x[:, self.columns] = self.quantile.inverse(np.asarray(z)[:, self.columns])
        return x

    def to_dict(self) -> dict[str, Any]:
        return {
            "base": self.base.to_dict(),
            "quantile": self.quantile.to_dict(),
            "columns": self.columns,
        }

    def nonfinite_columns(self) -> dict[int, str]:
        found = self.base.nonfinite_columns()
        for i, shown in self.quantile.nonfinite_columns().items():
            found.setdefault(self.columns[i], shown)
        return found

    def senseless_columns(self) -> dict[int, str]:
        found = self.base.senseless_columns()
        for i, shown in self.quantile.senseless_columns().items():
            found[self.columns[i]] = shown  # the quantiles are what the column goes through
        return found

    def width(self) -> int:
        width, columns = self.base.width(), self.columns
        distinct = len(set(columns)) == len(columns) == self.quantile.width()
        return width if distinct and all(0 <= c < width for c in columns) else -1


def scale_from_dict(payload: dict[str, Any]) -> Scale:
    """A stored scale; ValueError when the keys are no kind's."""
    if set(payload) == {"mean", "std"}:
        return StandardScale(payload["mean"], payload["std"])
    if set(payload) == {"quantiles", "references"}:
        return QuantileScale(payload["quantiles"], payload["references"])
    if set(payload) == {"weights", "means", "sds"}:
        from wgangp.data.transform.mixture_scale import GaussianMixtureScale

        return GaussianMixtureScale(payload["weights"], payload["means"], payload["sds"])
    if set(payload) == {"base", "quantile", "columns"}:
        quantile = scale_from_dict(payload["quantile"])
        if not isinstance(quantile, QuantileScale) or not isinstance(payload["columns"], list):
            raise ValueError("a mixed scale needs a quantile scale and a list of columns")
        return MixedScale(scale_from_dict(payload["base"]), quantile, payload["columns"])
    raise ValueError(f"a scale has keys {sorted(payload)}")


def fit_scale(
    kind: str,
    x: np.ndarray,
    quantile_columns: list[int] | None = None,
    min_rows: int = DEFAULT_MIN_ROWS,
    owners: np.ndarray | None = None,
) -> Scale:
    """Fit the scale ``kind`` (``preprocess.scaling``) on the rows ``x``, then map the columns
    ``quantile_columns`` through their quantiles (``preprocess.quantile_columns``); every
    quantile knot is the mean of >= ``min_rows`` entities (``ship.min_atom_rows``; ``owners``:
    each row's)."""
    if kind == "standard":
        base: Scale = StandardScale.fit(x)
    elif kind == "quantile":
        return QuantileScale.fit_grouped(x, min_rows, owners)  # every column, its quantiles
    elif kind == "gmm":
        from wgangp.data.transform.mixture_scale import GaussianMixtureScale

        base = GaussianMixtureScale.fit(x)
    elif kind == "none":
        base = StandardScale.identity(x.shape[1])
    else:
        raise ValueError(f"unknown scaling {kind!r}")
    if not quantile_columns:
        return base
    return MixedScale.fit(base, x, quantile_columns, min_rows, owners)
