"""The step selection: validation probes, the smoothed selection score, the kept best step."""

from __future__ import annotations

import json
from pathlib import Path

import mlflow
import numpy as np
import pandas as pd
import pytest
from support.configs import compose
from support.creditcard import COLUMNS, FEATURES, LABEL, SCHEMA
from support.probes import PROBED_RUN, script_probes

from wgangp.config import SelectConfig, to_config
from wgangp.data.builtin.simulated import simulate_creditcard
from wgangp.model.networks import build_generator
from wgangp.serving.synthesizer import Synthesizer
from wgangp.synthesis.selection import BestGenerator, StepSelector, ValidationProbe
from wgangp.train import train


@pytest.fixture(scope="module")
def frauds() -> pd.DataFrame:
    table = simulate_creditcard(60_000, seed=3)
    rows = table[table[LABEL] == 1].sample(frac=1.0, random_state=0)  # not in Time order
    return rows.reset_index(drop=True)


def _draw(frauds: pd.DataFrame, shift: float):
    """A sampler of fraud-like rows: the real frauds' columns resampled, V14 shifted."""

    def sample(n: int, seed: int) -> pd.DataFrame:
        rng = np.random.default_rng(seed)
        rows = frauds.iloc[rng.integers(0, len(frauds), n)].reset_index(drop=True).copy()
        noise = rng.normal(scale=0.3 * frauds[list(FEATURES)].std().to_numpy(), size=(n, 30))
        rows[list(FEATURES)] = rows[list(FEATURES)].to_numpy() + noise
        rows["V14"] += shift
        return rows.loc[:, list(COLUMNS)]

    return sample


def test_the_probe_tells_a_shifted_generator_from_a_faithful_one(frauds) -> None:
    sc = SelectConfig(samples=100, repeats=3)
    probe = ValidationProbe(frauds.head(40), sc, seed=0, schema=SCHEMA)
    faithful = probe.score(_draw(frauds.iloc[40:], 0.0), step=10)
    shifted = probe.score(_draw(frauds.iloc[40:], 8.0), step=10)
    assert faithful["val/c2st_auc_gbm"] < 0.7 < 0.9 < shifted["val/c2st_auc_gbm"]
    assert faithful["val/ks_mean"] < shifted["val/ks_mean"]
    again = probe.score(_draw(frauds.iloc[40:], 0.0), step=10)
    assert again == faithful  # seeded by the step: a probe is reproducible


def test_the_probe_fits_on_one_thread_and_leaves_the_pools_as_they_were(frauds) -> None:
    """Its boosting fits a few hundred rows: OpenMP's second thread would only spin against
    TensorFlow's (docs/performance.md); the run's own thread settings are restored after."""
    from threadpoolctl import threadpool_info

    def openmp_threads() -> set[int]:
        return {p["num_threads"] for p in threadpool_info() if p["user_api"] == "openmp"}

    seen: list[set[int]] = []
    draw = _draw(frauds.iloc[40:], 0.0)

    def sample(n: int, seed: int) -> pd.DataFrame:
        seen.append(openmp_threads())
        return draw(n, seed)

    before = openmp_threads()
    probe = ValidationProbe(frauds.head(40), SelectConfig(samples=50, repeats=2), 0, SCHEMA)
    probe.score(sample, step=10)
    assert seen == [{1}] and openmp_threads() == before


def test_the_score_is_a_moving_average_and_the_best_step_is_kept(tmp_path, frauds) -> None:
    generator = build_generator(8, 30, [16])
    best = BestGenerator(generator, tmp_path)
    raw = iter([0.9, 0.5, 0.8, 0.6])
    sc = SelectConfig(every=5, smoothing=0.5)

    class Probe:
        def score(self, sample, step):
            return {"val/c2st_auc_gbm": next(raw), "val/ks_mean": 0.0}

    loop = StepSelector(Probe(), best, lambda n, seed: None, sc, steps=20)
    weights_at = {}
    scores = []
    for step in (5, 10, 15, 20):
        layer = generator.get_layer("generator_out")
        layer.set_weights([w + step for w in layer.get_weights()])
        weights_at[step] = [np.array(w) for w in generator.get_weights()]
        scores.append(loop.probe_step(step)["val/score"])
    # 0.9; (0.9+0.5)/2 = 0.7; (0.7+0.8)/2 = 0.75; (0.75+0.6)/2 = 0.675
    assert scores == pytest.approx([0.9, 0.7, 0.75, 0.675])
    assert best.selection.step == 20 and best.selection.score == pytest.approx(0.675)
    best.persist()
    restored = BestGenerator(build_generator(8, 30, [16]), tmp_path)
    restored.restore()
    assert restored.selection == best.selection and restored.smoothed == pytest.approx(0.675)
    selection = restored.load_into_generator()
    assert selection.step == 20
    for saved, loaded in zip(weights_at[20], restored.generator.get_weights(), strict=True):
        np.testing.assert_array_equal(saved, loaded)
    assert json.loads((tmp_path / "best_generator.json").read_text())["step"] == 20
    restored.forget()
    assert not (tmp_path / "best_generator.npz").exists()


def test_no_step_of_the_first_fraction_of_the_run_is_kept(tmp_path) -> None:
    """Step 5 probes lowest, but it lies in the first quarter of 20 steps: the loop keeps the
    best later step, whose moving average still includes step 5's probe."""
    raw = iter([0.3, 0.9, 0.8, 0.8])

    class Probe:
        def score(self, sample, step):
            return {"val/c2st_auc_gbm": next(raw), "val/ks_mean": 0.0}

    best = BestGenerator(build_generator(8, 30, [16]), tmp_path)
    sc = SelectConfig(every=5, smoothing=0.5, after=0.25)
    loop = StepSelector(Probe(), best, lambda n, seed: None, sc, steps=20)
    scores = [loop.probe_step(step)["val/score"] for step in (5, 10, 15, 20)]
    assert scores == pytest.approx([0.3, 0.6, 0.7, 0.75])  # (0.3 + 0.9) / 2 = 0.6
    assert best.selection.step == 10 and best.selection.score == pytest.approx(0.6)


def test_a_run_exports_the_selected_step(tmp_path: Path, monkeypatch) -> None:
    """The probe scores step 4 best: the bundle, the tags and the samples follow step 4."""
    scores = {2: 0.8, 4: 0.55, 6: 0.9, 8: 0.95}
    kept = script_probes(monkeypatch, scores)
    db = tmp_path / "mlflow.db"
    cfg = compose([*PROBED_RUN, f"tracking.uri=sqlite:///{db}"])
    result = train(to_config(cfg), output_dir=tmp_path / "out", launch_dir=tmp_path)
    assert result.status == "FINISHED" and sorted(kept) == [2, 4, 6, 8]
    exported = Synthesizer.load(result.synthesizer_dir).generator.get_weights()
    for at_4, saved in zip(kept[4], exported, strict=True):
        np.testing.assert_array_equal(at_4, saved)
    client = mlflow.MlflowClient(f"sqlite:///{db}")
    run = client.get_run(result.run_id)
    assert run.data.tags["selection.step"] == "4"
    assert float(run.data.tags["selection.score"]) == pytest.approx(0.55)
    history = client.get_metric_history(result.run_id, "val/score")
    assert [(m.step, m.value) for m in history] == [(s, scores[s]) for s in (2, 4, 6, 8)]
    assert run.data.metrics["run/quality_s"] >= 0
    assert run.data.metrics["selection/score"] == pytest.approx(0.55)
    # The run page's description ends with the selection (the evaluation is off here).
    note = run.data.tags["mlflow.note.content"].split("\n\n")
    assert note[1] == "**Selected** step 4 (val/score 0.550); no test evaluation."
