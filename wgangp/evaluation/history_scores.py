"""How far generated histories are from real ones, per history: the step selection's score and
the run's own evaluation of a history model.

Each history (a window of a customer's rows, the model's unit) becomes one row of behaviour: its
length, its gaps (mean, spread, smallest, the lag-1 autocorrelation of their logs), its rows in a
burst (3 or more within an hour) and the most within an hour and a day, its rare-class rows and
their share, its hours of day and weekend share, per record column its mean, spread and largest
value (numbers) or level shares (categories), and its attributes. A classifier then tells real
histories from generated ones (a C2ST: 0.5 when it cannot), and each feature's KS statistic says
where. Detection on these features is what a fraud team's velocity rules and sequence models
read."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import ks_2samp

from wgangp.data.histories.roles import HistoryRoles
from wgangp.data.histories.windows import wall_seconds
from wgangp.data.schema.table_schema import TableSchema
from wgangp.evaluation.detection import boosting_model, half_split_aucs

HOUR, DAY = 3600.0, 86_400.0


def history_behaviour(
    frame: pd.DataFrame, roles: HistoryRoles, schema: TableSchema
) -> pd.DataFrame:
    """One row per history of ``frame`` (rows in the table's columns; ``roles.entity`` names
    the history): its behaviour (module doc), in a fixed column order."""
    time = schema.column(roles.time)
    rows = frame.assign(_s=wall_seconds(frame[roles.time], time)).sort_values(
        [roles.entity, "_s"], kind="stable"
    )
    owners = pd.factorize(rows[roles.entity])[0]
    seconds = rows["_s"].to_numpy()
    rare = schema.classes(rows[roles.label]) == 1
    same = np.r_[False, owners[1:] == owners[:-1]]
    gaps = np.where(same, np.diff(seconds, prepend=seconds[:1]), np.nan)
    logged = np.log1p(np.maximum(gaps, 0))
    previous = np.where(np.r_[False, same[1:] & same[:-1]], np.r_[np.nan, logged[:-1]], np.nan)
    hour = np.mod(seconds, DAY) / DAY * 2 * np.pi
    parts = {
        "rows": np.log(np.bincount(owners)),
        "within_hour": _most_within(owners, seconds, HOUR),
        "within_day": _most_within(owners, seconds, DAY),
    }
    row_values = {
        "gap": logged, "gap_prev": previous, "in_burst": _in_burst(owners, seconds),
        "rare": rare.astype(float), "hour_cos": np.cos(hour), "hour_sin": np.sin(hour),
        "weekend": (np.mod(np.floor(seconds / DAY) + 3, 7) >= 5).astype(float),
    }  # fmt: skip
    for name in (*roles.records, *roles.attributes):
        column = schema.column(name)
        if column.kind == "categorical":
            for level in (column.levels or ())[:10]:
                row_values[f"{name}={level}"] = (rows[name] == level).to_numpy(float)
        elif column.kind != "datetime":
            row_values[name] = pd.to_numeric(rows[name], errors="coerce").to_numpy(float)
    grouped = pd.DataFrame(row_values).groupby(owners)
    means, stds = grouped.mean(), grouped.std(ddof=0)
    out = pd.DataFrame(parts)
    for name in row_values:
        out[f"{name}_mean"] = means[name].to_numpy()
    for name in ("gap", *(n for n in roles.records if n in row_values)):
        out[f"{name}_std"] = stds[name].to_numpy()
    out["gap_min"] = grouped["gap"].min().to_numpy()
    out["rare_rows"] = np.log1p(grouped["rare"].sum().to_numpy())
    out["gap_autocorrelation"] = _lag_one(grouped)
    for name in (n for n in roles.records if n in row_values and "=" not in n):
        out[f"{name}_max"] = grouped[name].max().to_numpy()
    return out.fillna(0.0)


def history_detection(real: pd.DataFrame, synthetic: pd.DataFrame, *, seed: int, repeats: int,
                      max_iter: int = 50) -> list[float]:  # fmt: skip
    """AUCs of a boosting classifier telling ``synthetic`` histories from ``real`` ones (their
    behaviour rows), each fitted on half of them."""
    return half_split_aucs(
        real.to_numpy(np.float64),
        synthetic.loc[:, list(real.columns)].to_numpy(np.float64),
        lambda r: boosting_model(seed + r, max_iter),
        repeats=repeats,
        seed=seed,
        scale_leaves=True,
    )


def feature_ks(real: pd.DataFrame, synthetic: pd.DataFrame) -> dict[str, float]:
    """Each behaviour feature's KS statistic, real against generated."""
    return {name: float(ks_2samp(real[name], synthetic[name]).statistic) for name in real.columns}


def _lag_one(grouped) -> np.ndarray:
    """Each history's correlation of a log gap with the one before (0 with fewer than 3)."""

    def corr(part: pd.DataFrame) -> float:
        pairs = part[["gap", "gap_prev"]].dropna()
        if len(pairs) < 2 or pairs.std(ddof=0).min() == 0:
            return 0.0
        return float(np.corrcoef(pairs["gap"], pairs["gap_prev"])[0, 1])

    return grouped[["gap", "gap_prev"]].apply(corr).to_numpy(np.float64)


def _in_burst(owners: np.ndarray, seconds: np.ndarray, rows: int = 3) -> np.ndarray:
    """1 for a row among ``rows`` or more of its history within an hour, else 0."""
    hit = np.zeros(len(owners), dtype=bool)
    lag = rows - 1
    if len(owners) > lag:
        close = (owners[lag:] == owners[:-lag]) & (seconds[lag:] - seconds[:-lag] <= HOUR)
        for offset in range(lag + 1):
            hit[offset : offset + len(close)] |= close
    return hit.astype(float)


def _most_within(owners: np.ndarray, seconds: np.ndarray, span: float) -> np.ndarray:
    """Per history, the most of its rows within ``span`` seconds (log)."""
    most = np.ones(owners.max() + 1 if len(owners) else 0)
    relative = seconds - seconds.min() if len(seconds) else seconds
    key = owners * (float(relative.max(initial=0.0)) + 2 * span) + relative  # sorted, exact
    end = np.searchsorted(key, key + span, side="right")
    counts = end - np.arange(len(owners))
    np.maximum.at(most, owners, counts)
    return np.log(most)
