"""Synthesizer: never returns a non-finite row, and refuses a non-finite preprocessing.json.

The bundles here are built from an untrained generator (no training run): its weights are set to
NaN or to huge values to play a broken model.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from mlflow.exceptions import MlflowException
from scipy.stats import ks_2samp

from wgangp.data.schema import AMOUNT, CLASSES, COLUMNS, FEATURES, LABEL, TIME
from wgangp.data.simulated import simulate_creditcard
from wgangp.data.transform import TabularTransformer
from wgangp.errors import DataError
from wgangp.serving.bundle import (
    CALIBRATION_FILE,
    COPULA_FILE,
    PREPROCESSING_FILE,
    write_manifest,
)
from wgangp.serving.calibration import MarginalCalibration
from wgangp.serving.copula import GaussianCopula
from wgangp.serving.mixture import CopulaMixture
from wgangp.serving.pyfunc import SynthesizerModel
from wgangp.serving.synthesizer import NonFiniteSamplesError, Synthesizer

LATENT = 4


def synthesizer(weights: str = "random") -> Synthesizer:
    """An untrained generator; ``weights`` "nan" or "huge" (outputs overflow float32 to inf)."""
    from wgangp.model.networks import build_generator

    generator = build_generator(LATENT, len(FEATURES), [8])
    if weights != "random":
        fill = {"nan": np.nan, "huge": 1e30}[weights]
        generator.set_weights([np.full_like(w, fill) for w in generator.get_weights()])
    transformer = TabularTransformer().fit(simulate_creditcard(1000, seed=0))
    return Synthesizer(generator, transformer, LATENT)


def test_a_sound_model_returns_finite_rows_within_the_training_ranges() -> None:
    model = synthesizer()
    rows = model.sample(200, label=1, seed=3)
    assert list(rows.columns) == list(COLUMNS)
    assert np.isfinite(rows.to_numpy(np.float64)).all()
    assert rows[AMOUNT].between(0, model.transformer.amount_max).all()
    assert rows[TIME].between(model.transformer.time_min, model.transformer.time_max).all()


@pytest.mark.parametrize("weights", ["nan", "huge"])
def test_non_finite_generator_output_is_refused_in_one_line(weights: str) -> None:
    """inf would even be hidden by the inverse transform's clipping of Amount and Time."""
    with pytest.raises(NonFiniteSamplesError) as err:
        synthesizer(weights).sample(10, label=1, seed=7)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(
        "the synthesizer: the generator returned NaN or inf in 10 of 10 row(s) (label 1, seed 7, "
        "first in column Time); a broken model returns no rows: retrain it"
    )
    assert err.value.reason == "nan"


def test_a_calibrated_model_saves_loads_and_samples_the_training_marginals(tmp_path: Path) -> None:
    """The bundle carries the calibration; the rows it samples follow the training rows'
    marginals before and after a save and load (class 0: the simulated table has 2 frauds)."""
    model = synthesizer()
    train = simulate_creditcard(1000, seed=0)
    real = {c: model.transformer.transform(train[train[LABEL] == c]) for c in CLASSES}
    generated = {c: model.generate(5000, label=c, seed=9) for c in CLASSES}
    calibrated = replace(model, calibration=MarginalCalibration.fit(generated, real))
    bundle = calibrated.save(tmp_path / "synthesizer")
    assert (bundle / CALIBRATION_FILE).is_file()
    loaded = Synthesizer.load(bundle)
    rows = loaded.sample(2000, label=0, seed=4)
    pd.testing.assert_frame_equal(rows, calibrated.sample(2000, label=0, seed=4))
    normal = train[train[LABEL] == 0]
    raw = model.sample(2000, label=0, seed=4)
    after = [ks_2samp(rows[c], normal[c]).statistic for c in FEATURES]
    before = [ks_2samp(raw[c], normal[c]).statistic for c in FEATURES]
    assert max(after) < 0.08
    assert np.mean(before) > 3 * np.mean(after)  # an untrained generator: far off before
    assert len(loaded.sample(0, label=1)) == 0
    # a bundle saved without the file (no calibration fitted) samples as generated
    (bundle / CALIBRATION_FILE).unlink()
    write_manifest(bundle)
    pd.testing.assert_frame_equal(Synthesizer.load(bundle).sample(50, 0, seed=4), raw.head(50))
    # saving an uncalibrated model over a calibrated bundle leaves no calibration behind
    calibrated.save(bundle)
    model.save(bundle)
    assert not (bundle / CALIBRATION_FILE).exists()


def test_a_model_with_a_copula_saves_loads_and_mixes_its_share_of_rows(tmp_path: Path) -> None:
    """The bundle carries the copula; about its share of the sampled rows are the copula's
    (the others the generator's, unchanged) before and after a save and load."""
    model = synthesizer()
    train = simulate_creditcard(1000, seed=0)
    real = {c: model.transformer.transform(train[train[LABEL] == c]) for c in CLASSES}
    mixed = replace(model, mixture=CopulaMixture(GaussianCopula.fit(real), 0.25))
    bundle = mixed.save(tmp_path / "synthesizer")
    assert (bundle / COPULA_FILE).is_file()
    loaded = Synthesizer.load(bundle)
    rows = loaded.sample(2000, label=0, seed=4)
    pd.testing.assert_frame_equal(rows, mixed.sample(2000, label=0, seed=4))
    pd.testing.assert_frame_equal(rows.head(30), mixed.sample(30, label=0, seed=4))
    generated = model.sample(2000, label=0, seed=4)
    same = np.isclose(rows[list(FEATURES)], generated[list(FEATURES)]).all(axis=1)
    assert abs((~same).mean() - 0.25) < 0.03
    assert len(loaded.sample(0, label=1)) == 0
    # saving a model without a copula over the bundle leaves no copula behind
    model.save(bundle)
    assert not (bundle / COPULA_FILE).exists()
    pd.testing.assert_frame_equal(
        Synthesizer.load(bundle).sample(50, 0, seed=4), generated.head(50)
    )


def test_a_loaded_model_names_its_directory(tmp_path: Path) -> None:
    bundle = synthesizer("nan").save(tmp_path / "synthesizer")
    with pytest.raises(NonFiniteSamplesError, match=f"^synthesizer {bundle}: the generator"):
        Synthesizer.load(bundle).sample(3)


def test_the_served_model_answers_500_with_the_line(tmp_path: Path) -> None:
    model = SynthesizerModel()
    model.synthesizer = synthesizer("nan")
    with pytest.raises(MlflowException) as err:
        model.predict(None, pd.DataFrame({"n": [2]}))
    assert err.value.get_http_status_code() == 500
    assert "the generator returned NaN or inf in 2 of 2 row(s)" in err.value.message


@pytest.mark.parametrize("bad", [float("inf"), float("nan")])
def test_load_refuses_a_non_finite_preprocessing_file(tmp_path: Path, bad: float) -> None:
    """What the old code saved after one V3 = 1e200: ``"std": [..., Infinity, ...]``."""
    bundle = synthesizer().save(tmp_path / "synthesizer")
    path = bundle / PREPROCESSING_FILE
    payload = json.loads(path.read_text())
    payload["std"][3] = bad
    path.write_text(json.dumps(payload))
    write_manifest(bundle)  # sealed as the old code's save would have
    assert ("Infinity" if bad > 0 else "NaN") in path.read_text()
    with pytest.raises(DataError) as err:
        Synthesizer.load(bundle)
    message = str(err.value)
    assert message.startswith(f"{path} holds non-finite parameters for V3 (mean ")
    assert message.endswith("retrain it on validated data") and "\n" not in message
