"""A small simulator of customers over time (``data.time``), written for the history tests.

Each card has a home city and a card type (constant over its rows: attributes), a Poisson
background of daytime purchases (fewer at weekends) at a few favourite terminals of a shared pool,
and a share of cards is compromised: one burst of 3 or more fraud rows within an hour, online or
travel, large amounts, at a compromised terminal whose victims fall in one week. So the fraud
behaviour lives in the order and timing of a card's rows, not in any row alone: a model that
draws rows one by one cannot put three frauds of one card within an hour."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

START = pd.Timestamp("2024-03-04")  # a Monday
CITIES = ("paris", "lyon", "lille", "nantes")
MERCHANTS = ("grocery", "fuel", "online", "travel")
#: Rows of one fraud burst, at least, and the hour they fall within.
BURST_ROWS, BURST_SECONDS = 3, 3600
#: Victims of one compromised terminal.
VICTIMS_PER_TERMINAL = 4


def customer_transactions(
    customers: int = 300,
    days: int = 30,
    *,
    fraud_share: float = 0.2,
    rate: tuple[float, float] = (0.5, 2.5),
    terminals: int = 400,
    seed: int = 0,
    zone: str | None = None,
) -> pd.DataFrame:
    """Rows ``card_id, ts, amount, merchant, home, card, terminal, is_fraud`` (module doc),
    sorted by time across cards (as a bank exports them); ``zone`` makes ``ts`` zone-aware
    (wall-clock times in that zone)."""
    rng = np.random.default_rng(seed)
    victims = rng.random(customers) < fraud_share
    victims[:2] = True  # every table has frauds
    victim_ids = np.flatnonzero(victims)
    compromised = np.arange(terminals, terminals + max(1, len(victim_ids) // VICTIMS_PER_TERMINAL))
    weeks = rng.integers(0, max(1, days // 7), len(compromised))
    parts = []
    for c in range(customers):
        home, card = rng.choice(CITIES), rng.choice(("debit", "credit"), p=(0.7, 0.3))
        favourites = rng.choice(terminals, 3, replace=False)
        n = max(2, rng.poisson(rng.uniform(*rate) * days))
        seconds = _daytime_seconds(rng, n, days)
        frame = pd.DataFrame(
            {
                "seconds": seconds,
                "amount": np.round(rng.lognormal(3.0 if card == "debit" else 3.5, 0.8, n), 2),
                "merchant": rng.choice(MERCHANTS, n, p=(0.45, 0.25, 0.2, 0.1)),
                "terminal": np.where(
                    rng.random(n) < 0.85, rng.choice(favourites, n), rng.integers(0, terminals, n)
                ),
                "is_fraud": 0,
            }
        )
        if victims[c]:
            index = int(np.searchsorted(victim_ids, c)) // VICTIMS_PER_TERMINAL
            terminal = compromised[min(index, len(compromised) - 1)]
            week = weeks[min(index, len(compromised) - 1)]
            frame = pd.concat([frame, _burst(rng, terminal, week, days)], ignore_index=True)
        frame["card_id"] = f"C{c:05d}"
        frame["home"], frame["card"] = home, card
        parts.append(frame)
    rows = pd.concat(parts, ignore_index=True).sort_values("seconds", kind="stable")
    ts = START + pd.to_timedelta(np.round(rows["seconds"].to_numpy()), unit="s")
    if zone is not None:
        ts = ts.tz_localize(zone, ambiguous=False, nonexistent="shift_forward")
    rows = rows.assign(ts=ts, terminal=[f"T{t:04d}" for t in rows["terminal"]])
    columns = ["card_id", "ts", "amount", "merchant", "home", "card", "terminal", "is_fraud"]
    return rows.loc[:, columns].reset_index(drop=True)


def _daytime_seconds(rng: np.random.Generator, n: int, days: int) -> np.ndarray:
    """``n`` purchase times within ``days`` days: hours around 13:00 between 6:00 and 24:00, a
    weekend day kept half as often as a weekday."""
    day = rng.integers(0, days, 3 * n)
    weekend = (day % 7) >= 5
    day = day[~weekend | (rng.random(3 * n) < 0.5)][:n]
    while len(day) < n:  # a rare shortfall: weekdays
        day = np.append(day, rng.integers(0, 5))
    hour = np.clip(rng.normal(13.0, 3.5, n), 6.0, 23.9)
    return np.sort(day * 86400.0 + hour * 3600.0)


def _burst(rng: np.random.Generator, terminal: int, week: int, days: int) -> pd.DataFrame:
    """One fraud burst: 3 or more rows within an hour, in the compromised terminal's week."""
    k = BURST_ROWS + rng.poisson(1.5)
    start = min(week * 7 + rng.uniform(0, 7), days - 0.1) * 86400.0
    gaps = np.minimum(rng.exponential(360.0, k - 1), (BURST_SECONDS - 60) / k)
    return pd.DataFrame(
        {
            "seconds": start + np.concatenate([[0.0], np.cumsum(gaps)]),
            "amount": np.round(rng.lognormal(5.0, 0.6, k), 2),
            "merchant": rng.choice(("online", "travel"), k, p=(0.8, 0.2)),
            "terminal": terminal,
            "is_fraud": 1,
        }
    )


def burst_share(frame: pd.DataFrame, entity: str = "card_id", time: str = "ts") -> float:
    """The share of fraud rows in a burst: 3 or more of the customer's rows within an hour
    (the row and two more of its customer within an hour either side)."""
    rows = frame.sort_values([entity, time], kind="stable")
    times = pd.to_datetime(rows[time])
    seconds = ((times - times.min()) / pd.Timedelta(seconds=1)).to_numpy()
    owners = rows[entity].to_numpy()
    fraud = rows["is_fraud"].to_numpy().astype(int) == 1
    in_burst = np.zeros(len(rows), dtype=bool)
    lag = BURST_ROWS - 1  # rows i..i+2 of one customer within the hour: all three in a burst
    hit = (owners[lag:] == owners[:-lag]) & ((seconds[lag:] - seconds[:-lag]) <= BURST_SECONDS)
    for offset in range(lag + 1):
        in_burst[offset : offset + len(hit)] |= hit
    return float(in_burst[fraud].mean()) if fraud.any() else 0.0


#: Steps of the burst test's run: with a few hundred most fraud rows come alone.
BURST_TEST_STEPS = 1500


def burst_test_run(seed: int, folder: Path) -> tuple[float, float]:
    """The burst test's run (tests/histories/test_history_burst.py; ``scripts.histories_burst
    --test-setting`` repeats it over seeds) with training seed ``seed``: its generated fraud
    histories' burst share and fraud rows per history."""
    import wgangp

    table = customer_transactions(200, 14, seed=0)
    model = wgangp.fit(
        table, label="is_fraud", entity="card_id", time="ts",
        overrides=[f"seed={seed}", f"trainer.steps={BURST_TEST_STEPS}",
                   "trainer.steps_per_call=25", "history.max_length=32", "trainer.progress=false",
                   "evaluate.enabled=false", "select.every=0"],
        tracking_uri=f"sqlite:///{Path(folder) / 'mlflow.db'}", output_dir=Path(folder) / "run",
    )  # fmt: skip
    frauds = model.sample_histories(200, label=1, seed=1)
    per_history = (frauds["is_fraud"] == 1).sum() / frauds["card_id"].nunique()
    return burst_share(frauds), float(per_history)


def write_customer_transactions(folder: Path, name: str = "tx.parquet", **kwargs) -> Path:
    path = Path(folder) / name
    frame = customer_transactions(**kwargs)
    if path.suffix == ".parquet":
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, index=False)
    return path


#: The options of a history model tests build: tiny networks, short windows.
TINY_HISTORIES = (
    "history.max_length=16",
    "history.records_per_cell=2",
    "history.batch_size=16",
    "history.latent_dim=4",
    "history.hidden=[8]",
    "history.rnn_units=8",
    "history.critic_channels=[8]",
    "history.critic_hidden=[8]",
    "history.probe_histories=20",
    "trainer.n_critic=1",
)


def history_config(*overrides: str):
    """The real config of a history run on the simulator's columns, tiny."""
    from support.configs import compose
    from wgangp.config import to_config

    base = ["data.path=null", "data.label=is_fraud", "data.entity=card_id", "data.time=ts"]
    return to_config(compose([*base, *TINY_HISTORIES, *overrides]))


def prepared_histories(frame: pd.DataFrame | None = None, *overrides: str):
    """``frame`` (default: a small simulator table) through ``prepare_histories``."""
    from wgangp.data.histories.prepare import prepare_histories

    cfg = history_config(*overrides)
    table = customer_transactions(80, 14) if frame is None else frame
    return cfg, prepare_histories(cfg.data, seed=cfg.seed, launch_dir=Path("."), frame=table)


def untrained_history_synthesizer(frame: pd.DataFrame | None = None, *overrides: str):
    """A history model as training would assemble it, with untrained networks (weights drawn
    with seed 0): the sampling contract, in a second."""
    import keras

    from wgangp.data.histories.encoding import HistoryEncoding
    from wgangp.step.history_step import history_generator
    from wgangp.synthesis.history_export import assemble_histories

    cfg, data = prepared_histories(frame, *overrides)
    hc = cfg.history
    windows = data.windows("train", hc.max_length)
    encoding = HistoryEncoding.fit(windows, data.roles, data.rows.schema, cfg)
    keras.utils.set_random_seed(0)
    generator = history_generator(encoding, hc)
    return assemble_histories(generator, encoding, data, windows, cfg)
