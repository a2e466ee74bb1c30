"""Marginal calibration of a trained generator: each column's marginal onto the training rows',
per class, with the generator's dependence between columns kept.

A GAN trained on a few hundred rare rows learns how their columns move together better than it
learns each column's own distribution (docs/quality.md). So, after training, per class and in the
networks' space:

- a number or date column goes through its generated quantiles and back through the quantiles
  of the training rows where it is present (knots that are means of >= ``min_rows`` rows);
- a categorical block's probabilities are reweighted per level (iterative proportional fitting
  on a large generated draw) so that their mean is each level's share among the training rows;
- a missing indicator's probability is shifted in logit space so that its mean is the training
  rows' share of gaps.

A number keeps its rank among the generated rows; a row's level probabilities keep their
relation to its other columns up to one weight per level. The levels and gaps drawn afterwards
(:func:`wgangp.data.transform.layout.draw_discrete`) then reproduce the training shares. Stored as
plain numbers (``calibration.json``): quantile knots, per-level weights and per-indicator
shifts, no training row.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from wgangp.data.knots import DEFAULT_MIN_ROWS
from wgangp.data.schema.table_schema import CLASSES
from wgangp.data.transform.layout import MISSING, Block, slot_names
from wgangp.data.transform.private_column import PrivateFit
from wgangp.data.transform.scales import QuantileScale
from wgangp.data.transform.stored import RETRAIN
from wgangp.errors import DataError
from wgangp.privacy.mechanisms import dp_quantiles, noisy_histogram, noisy_share
from wgangp.serving.stored_tables import checked_quantiles

FORMAT = "wgangp.calibration/2"
#: Iterations of proportional fitting: the level shares match to about 1e-4 well before this.
_IPF_ROUNDS = 50
#: Probabilities stay inside [EPS, 1 - EPS] in logit space (|logit| <= 27.6).
_EPS = 1e-12
#: The largest logit shift stored: a class whose column is always (never) empty.
_MAX_SHIFT = 30.0


@dataclass
class ClassCalibration:
    """One class's maps: the number slots' quantiles, the levels' weights, the gaps' shifts."""

    generated: QuantileScale | None  # all number columns, over a large generated draw
    real: list[QuantileScale]  # per number column, over the training rows where it is present
    weights: dict[int, list[float]]  # a categorical block's start -> one weight per level
    shifts: dict[int, float]  # an indicator's column -> logit shift


@dataclass
class MarginalCalibration:
    """Per class (0, 1): :class:`ClassCalibration` over the table's ``layout``."""

    layout: tuple[Block, ...]
    classes: dict[int, ClassCalibration]

    @property
    def numbers(self) -> list[int]:
        """The networks' columns of number and date values."""
        return [b.start for b in self.layout if b.activation == "identity"]

    @classmethod
    def fit(
        cls,
        layout: tuple[Block, ...],
        generated: dict[int, np.ndarray],
        real: dict[int, np.ndarray],
        min_rows: int = DEFAULT_MIN_ROWS,
        owners: dict[int, np.ndarray] | None = None,
        dp: PrivateFit | None = None,
    ) -> MarginalCalibration:
        """Fit per class on a large generated draw (the heads' probabilities) and the training
        rows of that class, both in the networks' space; ``owners``: each training row's entity
        per class (None: each row its own), which the training quantile tables count.

        ``dp`` (a run under ``privacy.epsilon``; ``owners`` then required): every target is
        a DP release of the class's rows instead, one per block (:func:`releases` of them): a
        number's quantiles off a noisy tree on a public grid of the networks' scale, a
        categorical's shares off a noisy histogram, a gap share off two noisy sums."""
        if dp is not None and owners is None:
            raise ValueError("a private calibration counts entities: pass owners")
        return cls(
            tuple(layout),
            {
                c: _fit_class(
                    layout,
                    generated[c],
                    real[c],
                    min_rows,
                    None if owners is None else owners[c],
                    dp,
                )
                for c in generated
            },
        )

    @staticmethod
    def releases(layout: tuple[Block, ...], classes: int = len(CLASSES)) -> int:
        """The DP releases a private fit makes: one per block of the networks (numbers,
        categoricals, gap indicators) and class."""
        return classes * len(layout)

    def apply(self, x: np.ndarray, label: int) -> np.ndarray:
        """Generated rows of class ``label`` -> the same rows with the training marginals."""
        part = self.classes[label]
        out = np.array(x, dtype=np.float64, copy=True)
        numbers = self.numbers
        if numbers and part.generated is not None:
            ranks = part.generated.forward(out[:, numbers])
            for i, (column, real) in enumerate(zip(numbers, part.real, strict=True)):
                out[:, column] = real.inverse(ranks[:, i : i + 1])[:, 0]
        for block in self.layout:
            if block.start in part.weights:
                out[:, block.start : block.stop] = _reweighted(
                    out[:, block.start : block.stop], np.asarray(part.weights[block.start])
                )
            elif block.start in part.shifts:
                out[:, block.start] = _shifted(out[:, block.start], part.shifts[block.start])
        return out.astype(np.float32)

    def to_json(self) -> str:
        classes = {}
        for label, part in sorted(self.classes.items()):
            classes[str(label)] = {
                "generated": part.generated.to_dict() if part.generated else None,
                "real": [scale.to_dict() for scale in part.real],
                "weights": {str(k): v for k, v in part.weights.items()},
                "shifts": {str(k): v for k, v in part.shifts.items()},
            }
        layout = [b.to_dict() for b in self.layout]
        payload = {"format": FORMAT, "layout": layout, "classes": classes}
        return json.dumps(payload, allow_nan=False)

    @classmethod
    def load(cls, path: Path) -> MarginalCalibration:
        """A saved calibration, checked; one DataError line naming the file otherwise."""
        try:
            return cls.from_dict(json.loads(Path(path).read_text()))
        except (ValueError, KeyError, TypeError, AttributeError, IndexError) as err:
            raise DataError(f"{path} is not a usable calibration ({err}); {RETRAIN}") from None

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> MarginalCalibration:
        if raw.get("format") != FORMAT:
            raise ValueError(f"not a {FORMAT} document")
        layout = tuple(Block.from_dict(b) for b in raw["layout"])
        names = slot_names(layout)
        number_names = [names[b.start] for b in layout if b.activation == "identity"]
        starts = {b.start: b for b in layout}
        classes = {}
        for label, part in raw["classes"].items():
            where = f"class {label}"
            generated = (
                checked_quantiles(part["generated"], f"{where} generated quantiles", number_names)
                if part["generated"] is not None
                else None
            )
            if len(part["real"]) != len(number_names) or (generated is None) != (not number_names):
                raise ValueError(f"{where}: {len(part['real'])} real quantile tables")
            real = [
                checked_quantiles(table, f"{where} real quantiles", [name])
                for table, name in zip(part["real"], number_names, strict=True)
            ]
            weights = {int(k): [float(w) for w in v] for k, v in part["weights"].items()}
            shifts = {int(k): float(v) for k, v in part["shifts"].items()}
            for start, w in weights.items():
                block = starts[start]
                if block.kind != "categorical" or len(w) != block.width:
                    raise ValueError(f"{where}: level weights of {block.column} do not fit it")
                if not all(np.isfinite(w)) or min(w) < 0 or max(w) <= 0:
                    raise ValueError(f"{where}: level weights of {block.column} are not >= 0")
            for start, shift in shifts.items():
                if starts[start].kind != MISSING or not abs(shift) <= _MAX_SHIFT:
                    raise ValueError(f"{where}: a gap shift of {starts[start].column} is invalid")
            classes[int(label)] = ClassCalibration(generated, real, weights, shifts)
        if set(classes) != {0, 1}:
            raise ValueError(f"classes {sorted(classes)}")
        return cls(layout, classes)


def _fit_class(
    layout: tuple[Block, ...],
    generated: np.ndarray,
    real: np.ndarray,
    min_rows: int,
    owners: np.ndarray | None,
    dp: PrivateFit | None = None,
) -> ClassCalibration:
    present = _present_rows(layout, real)
    numbers = [b for b in layout if b.activation == "identity"]
    # A private fit counts entities: MarginalCalibration.fit refuses one without owners.
    assert dp is None or owners is not None
    counted = owners if owners is not None else np.zeros(0, np.int64)  # read under privacy only
    generated_q = None
    real_q: list[QuantileScale] = []
    if numbers:
        generated_q = QuantileScale.fit(generated[:, [b.start for b in numbers]])
    for block in numbers:
        if dp is not None:  # every present row: choosing rows by their count is a release
            rows = present[block.column]
            real_q.append(_private_quantiles(real[rows, block.start], counted[rows], dp))
            continue
        # Over the rows where the column is present: a gap's fill is no value of the class.
        kept = present[block.column] if present[block.column].any() else slice(None)
        who = None if owners is None else owners[kept]
        real_q.append(QuantileScale.fit_grouped(real[kept, block.start][:, None], min_rows, who))
    weights, shifts = {}, {}
    for block in layout:
        if block.kind == "categorical":
            rows = real[present[block.column], block.start : block.stop]
            if dp is not None:
                shares = _private_shares(rows, counted[present[block.column]], dp)
            else:
                shares = rows.mean(axis=0) if len(rows) else None
            if shares is not None:
                weights[block.start] = _level_weights(
                    generated[:, block.start : block.stop], shares
                ).tolist()
        elif block.kind == MISSING:
            if dp is not None:
                share, event = noisy_share(
                    real[:, block.start] >= 0.5, counted, dp.noise_multiplier, dp.rng
                )
                dp.events.append(event)
            else:
                share = real[:, block.start].mean()
            shifts[block.start] = _logit_shift(generated[:, block.start], share)
    return ClassCalibration(generated_q, real_q, weights, shifts)


#: The public grid a private calibration reads a number's quantiles on: the networks' scale
#: (a private transform's quantile scales put a class's values inside about +-5.2).
PRIVATE_EDGES = np.linspace(-6.0, 6.0, 1025)
#: The probabilities of its knots (as a private transform's).
PRIVATE_PROBABILITIES = np.concatenate([[0.0, 0.001], np.linspace(0.01, 0.99, 63), [0.999, 1.0]])


def _private_quantiles(values: np.ndarray, owners: np.ndarray, dp: PrivateFit) -> QuantileScale:
    # Weak evidence spread evenly: piled into one bin, a class of a few hundred entities would
    # calibrate its column to one value.
    knots, event = dp_quantiles(
        values, owners, PRIVATE_PROBABILITIES, dp.noise_multiplier, dp.rng,
        PRIVATE_EDGES, spread=len(PRIVATE_EDGES),
    )  # fmt: skip
    dp.events.append(event)
    return QuantileScale([[float(k)] for k in knots], [float(p) for p in PRIVATE_PROBABILITIES])


def _private_shares(onehot: np.ndarray, owners: np.ndarray, dp: PrivateFit) -> np.ndarray | None:
    """A categorical's level shares off a noisy histogram of its present rows' levels (None
    when the noise leaves no level with a positive count)."""
    width = onehot.shape[1]
    edges = np.arange(width + 1, dtype=np.float64) - 0.5
    levels = np.argmax(onehot, axis=1).astype(np.float64) if len(onehot) else np.zeros(0)
    counts, event = noisy_histogram(levels, owners, edges, dp.noise_multiplier, dp.rng)
    dp.events.append(event)
    counts = np.clip(counts, 0.0, None)
    return counts / counts.sum() if counts.sum() > 0 else None


def _present_rows(layout: tuple[Block, ...], real: np.ndarray) -> dict[str, np.ndarray]:
    """Per column: the rows where it holds a value (its missing indicator is 0)."""
    rows = {b.column: np.ones(len(real), dtype=bool) for b in layout}
    for block in layout:
        if block.kind == MISSING:
            rows[block.column] = real[:, block.start] < 0.5
    return rows


def _level_weights(probabilities: np.ndarray, shares: np.ndarray) -> np.ndarray:
    """Per level: w such that the reweighted, renormalized probabilities average ``shares``."""
    p = np.clip(np.asarray(probabilities, np.float64), 0.0, None)
    w = np.where(shares > 0, 1.0, 0.0)
    for _ in range(_IPF_ROUNDS):
        mean = _reweighted(p, w).mean(axis=0)
        w = np.where(mean > 0, w * shares / np.where(mean > 0, mean, 1.0), w)
    return w / w.max()


def _reweighted(p: np.ndarray, w: np.ndarray) -> np.ndarray:
    q = np.clip(p, 0.0, None) * w
    total = q.sum(axis=1, keepdims=True)
    fallback = w / w.sum()
    return np.where(total > 0, q / np.where(total > 0, total, 1.0), fallback)


def _logit(p: np.ndarray) -> np.ndarray:
    # float64 first: in float32, 1 - 1e-12 rounds to 1 and a share of 1 would read +inf.
    p = np.clip(np.asarray(p, np.float64), _EPS, 1 - _EPS)
    return np.log(p) - np.log1p(-p)


def _shifted(p: np.ndarray, shift: float) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-(_logit(p) + shift)))


def _logit_shift(p: np.ndarray, share: float) -> float:
    """The shift b with mean(sigmoid(logit(p) + b)) = ``share`` (bisection)."""
    low, high = -_MAX_SHIFT, _MAX_SHIFT
    for _ in range(60):
        mid = (low + high) / 2
        if _shifted(p, mid).mean() < share:
            low = mid
        else:
            high = mid
    return float((low + high) / 2)
