"""New ids for shared columns: never a real one, a burst at one id, victims in runs close in time
whose sizes follow the fitted degrees."""

from __future__ import annotations

import numpy as np

from wgangp.serving.pseudonyms import NEW, REPEATED, Degrees, SharedIds


def _model(rare_degree: float) -> SharedIds:
    return SharedIds(
        column="terminal",
        prefix="syn-terminal-",
        ids_per_history=2.0,
        rest=Degrees((0.0, 1.0), (3.0, 3.0)),
        rare=Degrees((0.0, 1.0), (rare_degree, rare_degree)),
    )


def test_victims_share_ids_in_runs_of_the_fitted_degree_in_time_order() -> None:
    histories = 12
    # Each history: two normal rows (new, then repeat), then a burst of 3 fraud rows (new,
    # repeat, repeat); the frauds' times increase with the history.
    history = np.repeat(np.arange(histories), 5)
    position = np.tile(np.arange(5), histories)
    rare = (position >= 2).astype(np.int64)
    token = np.where(np.isin(position, (0, 2)), NEW, REPEATED)
    seconds = history * 1000.0 + position
    ids = _model(4).assign(history, seconds, rare, token, histories, np.random.default_rng(0), "0")
    assert all(str(i).startswith("syn-terminal-0-") for i in ids)
    frame = np.column_stack([history, rare, ids])
    for h in range(histories):  # a burst stays at one terminal
        assert len(set(frame[(history == h) & (rare == 1), 2])) == 1
    first_fraud = ids[(position == 2)]
    runs = [len(set(history[ids == i])) for i in dict.fromkeys(first_fraud)]
    assert runs == [4, 4, 4]  # victims dealt in time order, four to an id
    normal = set(ids[rare == 0])
    assert not normal & set(first_fraud)


def test_degrees_are_knots_never_one_ids_count() -> None:
    degrees = np.array([1] * 40 + [2] * 30 + [50])  # one id with 50 customers
    knots = Degrees.fit(degrees, min_rows=5)
    assert 50.0 not in knots.quantiles
    drawn = knots.draw(np.random.default_rng(0), 1000)
    assert drawn.min() >= 1
