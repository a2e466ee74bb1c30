"""What a history looks like as numbers: one row per entity (what a detection classifier reads) and
one row per transaction (what a fraud detector with velocity features reads).

Every feature is computed from the history's own rows, never from an id's value, so a synthetic
history with new pseudonymous ids is described exactly as a real one.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from wgangp.histories.timelines import DAY, HOUR, HistoryColumns, Timeline

#: The velocity rules (issue 68): 3 or more of the customer's rows within an hour, 6 or more
#: within a day, an amount over 3x the customer's median.
RULE_WINDOWS = {"rule_3_in_1h": (3, HOUR), "rule_6_in_24h": (6, DAY)}
AMOUNT_FACTOR = 3.0


def signed_log(values: np.ndarray) -> np.ndarray:
    """``sign(x) log(1 + |x|)``: amounts of any sign and scale on one axis."""
    return np.sign(values) * np.log1p(np.abs(values))


def _per_entity(timeline: Timeline, values: np.ndarray, how: str) -> np.ndarray:
    frame = pd.DataFrame({"entity": timeline.entity, "value": values})
    grouped = frame.groupby("entity")["value"].agg(how)
    return grouped.reindex(range(timeline.n_entities)).to_numpy(np.float64)


def entity_medians(timeline: Timeline) -> np.ndarray:
    """Each entity's median amount, as a row-aligned array."""
    if timeline.amount is None:
        raise ValueError("the amount rule needs an amount column")
    return _per_entity(timeline, timeline.amount, "median")[timeline.entity]


def amount_rule(timeline: Timeline) -> np.ndarray:
    """True on a row whose amount is over ``AMOUNT_FACTOR`` times its customer's median."""
    medians = entity_medians(timeline)  # refuses a timeline without amounts
    assert timeline.amount is not None
    return timeline.amount > AMOUNT_FACTOR * medians


def history_features(frame: pd.DataFrame, cols: HistoryColumns) -> pd.DataFrame:
    """One row per entity (indexed by its id): length, span and log-gap statistics, the lag-1
    autocorrelation of the gaps, the share of rows in bursts, time of day and week, amount
    statistics (log scale), the fraud rows and the longest fraud episode, and for each shared
    column the share of distinct ids among its rows."""
    timeline = Timeline.of(frame, cols)
    return timeline_features(timeline)


def timeline_features(timeline: Timeline) -> pd.DataFrame:
    """:func:`history_features` of an already ordered table."""
    n = timeline.n_entities
    ones = np.ones(len(timeline.entity))
    lengths = timeline.lengths.astype(np.float64)
    gaps = timeline.log_gaps()
    last = timeline.starts[1:] - 1
    first = timeline.starts[:-1]
    features: dict[str, np.ndarray] = {
        "rows": lengths,
        "span_log": np.log1p(timeline.seconds[last] - timeline.seconds[first]) if n else ones[:0],
    }
    for how in ("mean", "std", "min", "median", "max"):
        features[f"gap_{how}"] = _per_entity(timeline, gaps, how)
    features["gap_autocorr"] = timeline.gap_autocorrelation()
    features["burst_share"] = timeline.per_entity_sum(timeline.in_burst().astype(float)) / lengths
    hours = timeline.hours_of_day()
    features["night_share"] = timeline.per_entity_sum((hours < 6).astype(float)) / lengths
    features["weekend_share"] = timeline.per_entity_sum((timeline.weekdays() >= 5) * 1.0) / lengths
    if timeline.amount is not None:
        logs = signed_log(timeline.amount)
        for how in ("mean", "std", "max"):
            features[f"amount_{how}"] = _per_entity(timeline, logs, how)
    fraud = timeline.per_entity_sum(timeline.fraud.astype(float))
    features["fraud_rows"] = fraud
    features["fraud_share"] = fraud / lengths
    features["fraud_episode"] = timeline.longest_fraud_run()
    fraud_times = np.where(timeline.fraud, timeline.seconds, np.nan)
    span = _per_entity(timeline, fraud_times, "max") - _per_entity(timeline, fraud_times, "min")
    features["fraud_span_log"] = np.log1p(span)
    for name, values in timeline.shared.items():
        distinct = pd.DataFrame({"e": timeline.entity, "v": values}).groupby("e")["v"].nunique()
        features[f"{name}_distinct_share"] = distinct.reindex(range(n)).to_numpy() / lengths
    return pd.DataFrame(features, index=pd.Index(timeline.ids, name="entity"))


def row_features(frame: pd.DataFrame, cols: HistoryColumns) -> pd.DataFrame:
    """One row per transaction, in the frame's own order: what a fraud detector with velocity
    features reads when the row arrives (the customer's rows in the last hour and day, the log
    gap since its previous row, the time of day), the amount on a log scale and against the
    customer's median. Every feature looks back only, except the median (the whole history's)."""
    timeline = Timeline.of(frame, cols)
    gaps = timeline.log_gaps()
    features: dict[str, np.ndarray] = {
        "count_1h": timeline.backward_counts(HOUR).astype(float),
        "count_24h": timeline.backward_counts(DAY).astype(float),
        "count_7d": timeline.backward_counts(7 * DAY).astype(float),
        "gap_log": gaps,
        "hour": timeline.hours_of_day(),
        "row_in_history": np.arange(len(gaps)) - timeline.starts[timeline.entity],
    }
    if timeline.amount is not None:
        medians = entity_medians(timeline)
        features["amount_log"] = signed_log(timeline.amount)
        features["amount_over_median"] = signed_log(timeline.amount) - signed_log(medians)
    sorted_rows = pd.DataFrame(features)
    sorted_rows["fraud"] = timeline.fraud.astype(int)
    restored = np.empty(len(timeline.order), dtype=np.int64)
    restored[timeline.order] = np.arange(len(timeline.order))  # the frame's own order again
    return sorted_rows.iloc[restored].set_axis(frame.index)
