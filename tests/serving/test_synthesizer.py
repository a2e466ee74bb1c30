"""Synthesizer: rows of the table in its units, never a non-finite row; a bundle that carries
its calibration and copula, refused when a file it describes is gone or not finite.

The bundles here are built from an untrained generator over Kaggle's shipped schema (no training
run, :mod:`support.synthesizers`): its weights are set to NaN or to huge values to play a broken
model.
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
from support.creditcard import AMOUNT, CLASSES, COLUMNS, FEATURES, FRAUD, LABEL, TIME
from support.synthesizers import creditcard_synthesizer, simulated_rows

from wgangp.data.transform.stored import RETRAIN
from wgangp.errors import DataError
from wgangp.serving.bundle import (
    CALIBRATION_FILE,
    COPULA_FILE,
    META_FILE,
    PREPROCESSING_FILE,
    DamagedBundleError,
    write_manifest,
)
from wgangp.serving.calibration import MarginalCalibration
from wgangp.serving.copula import GaussianCopula
from wgangp.serving.mixture import CopulaMixture
from wgangp.serving.pyfunc import SynthesizerModel
from wgangp.serving.synthesizer import NonFiniteSamplesError, Synthesizer


def _bounds(model: Synthesizer, name: str) -> tuple[float, float]:
    return next(c for c in model.transformer.columns if c.name == name).low_high()


def test_a_sound_model_returns_finite_rows_within_the_training_ranges() -> None:
    model = creditcard_synthesizer()
    rows = model.sample(200, label=FRAUD, seed=3)
    assert list(rows.columns) == list(COLUMNS)
    assert np.isfinite(rows.to_numpy(np.float64)).all()
    assert (rows[LABEL] == FRAUD).all()  # the label's own value for the rare class
    assert rows[AMOUNT].between(*_bounds(model, AMOUNT)).all() and rows[AMOUNT].min() >= 0
    assert rows[TIME].between(*_bounds(model, TIME)).all()
    # on the schema's steps: Amount in cents, Time in seconds
    np.testing.assert_allclose(rows[AMOUNT] * 100, np.round(rows[AMOUNT] * 100), atol=1e-6)
    assert (rows[TIME] == np.round(rows[TIME])).all()
    assert (model.sample(5, label=0, seed=3)[LABEL] == 0).all()


@pytest.mark.parametrize("weights", ["nan", "huge"])
def test_non_finite_generator_output_is_refused_in_one_line(weights: str) -> None:
    """inf would even be hidden by the inverse transform's clipping of Amount and Time."""
    with pytest.raises(NonFiniteSamplesError) as err:
        creditcard_synthesizer(weights).sample(10, label=1, seed=7)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(
        "the synthesizer: the generator returned NaN or inf in 10 of 10 row(s) (class 1, seed 7, "
        "first in column Time); a broken model returns no rows: retrain it"
    )
    assert err.value.reason == "nan"


def test_a_calibrated_model_saves_loads_and_samples_the_training_marginals(tmp_path: Path) -> None:
    """The bundle carries the calibration; the rows it samples follow the training rows'
    marginals before and after a save and load (class 0: the simulated table has 2 frauds)."""
    model = creditcard_synthesizer()
    train = simulated_rows()
    real = {c: model.transformer.transform(train[train[LABEL] == c], c) for c in CLASSES}
    generated = {c: model.generate(5000, klass=c, seed=9) for c in CLASSES}
    layout = model.transformer.layout
    calibrated = replace(model, calibration=MarginalCalibration.fit(layout, generated, real))
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
    assert json.loads((bundle / META_FILE).read_text())["calibrated"] is True
    # saving an uncalibrated model over a calibrated bundle leaves no calibration behind, and
    # that bundle samples as generated
    model.save(bundle)
    assert not (bundle / CALIBRATION_FILE).exists()
    assert json.loads((bundle / META_FILE).read_text())["calibrated"] is False
    pd.testing.assert_frame_equal(Synthesizer.load(bundle).sample(2000, 0, seed=4), raw)


def test_a_calibrated_bundle_without_its_calibration_never_samples(tmp_path: Path) -> None:
    """Deleting calibration.json (or copula.json) and re-sealing the manifest would sample
    another model's rows: synthesizer.json still describes the file, so the load refuses."""
    model = creditcard_synthesizer()
    train = simulated_rows()
    real = {c: model.transformer.transform(train[train[LABEL] == c], c) for c in CLASSES}
    generated = {c: model.generate(2000, klass=c, seed=9) for c in CLASSES}
    layout = model.transformer.layout
    full = replace(
        model,
        calibration=MarginalCalibration.fit(layout, generated, real),
        mixture=CopulaMixture(GaussianCopula.fit(real), 0.25),
    )
    for name in (CALIBRATION_FILE, COPULA_FILE):
        bundle = full.save(tmp_path / name.removesuffix(".json"))
        (bundle / name).unlink()
        write_manifest(bundle)
        with pytest.raises(DamagedBundleError) as err:
            Synthesizer.load(bundle)
        assert str(err.value) == (
            f"{bundle / META_FILE} describes {name}, but the bundle does not hold it; the bundle "
            "is a unit: do not edit its files; download it again from its run, or retrain"
        )


def test_a_model_with_a_copula_saves_loads_and_mixes_its_share_of_rows(tmp_path: Path) -> None:
    """The bundle carries the copula; about its share of the sampled rows are the copula's
    (the others the generator's, unchanged) before and after a save and load."""
    model = creditcard_synthesizer()
    train = simulated_rows()
    real = {c: model.transformer.transform(train[train[LABEL] == c], c) for c in CLASSES}
    mixed = replace(model, mixture=CopulaMixture(GaussianCopula.fit(real), 0.25))
    bundle = mixed.save(tmp_path / "synthesizer")
    assert (bundle / COPULA_FILE).is_file()
    loaded = Synthesizer.load(bundle)
    rows = loaded.sample(2000, label=0, seed=4)
    pd.testing.assert_frame_equal(rows, mixed.sample(2000, label=0, seed=4))
    # the first rows of a larger draw are the smaller draw (the generator's float32 output may
    # differ in its last bits between batch sizes)
    pd.testing.assert_frame_equal(
        rows.head(30), mixed.sample(30, label=0, seed=4), check_exact=False, rtol=1e-5, atol=1e-6
    )
    generated = model.sample(2000, label=0, seed=4)
    same = np.isclose(rows[list(FEATURES)], generated[list(FEATURES)]).all(axis=1)
    assert abs((~same).mean() - 0.25) < 0.03
    assert len(loaded.sample(0, label=1)) == 0
    # saving a model without a copula over the bundle leaves no copula behind
    model.save(bundle)
    assert not (bundle / COPULA_FILE).exists()
    pd.testing.assert_frame_equal(Synthesizer.load(bundle).sample(2000, 0, seed=4), generated)


def test_a_loaded_model_names_its_directory(tmp_path: Path) -> None:
    bundle = creditcard_synthesizer("nan").save(tmp_path / "synthesizer")
    with pytest.raises(NonFiniteSamplesError, match=f"^synthesizer {bundle}: the generator"):
        Synthesizer.load(bundle).sample(3)


def test_the_served_model_answers_500_with_the_line(tmp_path: Path) -> None:
    model = SynthesizerModel()
    model.synthesizer = creditcard_synthesizer("nan")
    with pytest.raises(MlflowException) as err:
        model.predict(None, pd.DataFrame({"n": [2]}))
    assert err.value.get_http_status_code() == 500
    assert "the generator returned NaN or inf in 2 of 2 row(s)" in err.value.message


@pytest.mark.parametrize("bad", [float("inf"), float("nan")])
def test_load_refuses_a_non_finite_preprocessing_file(tmp_path: Path, bad: float) -> None:
    """What a save after one V3 = 1e200 would hold: ``"std": [Infinity]`` in V3's scale."""
    bundle = creditcard_synthesizer().save(tmp_path / "synthesizer")
    path = bundle / PREPROCESSING_FILE
    payload = json.loads(path.read_text())
    v3 = payload["columns"][FEATURES.index("V3")]
    assert v3["schema"]["name"] == "V3"
    v3["scales"]["all"]["std"][0] = bad
    path.write_text(json.dumps(payload))
    write_manifest(bundle)  # sealed as a save would have
    assert ("Infinity" if bad > 0 else "NaN") in path.read_text()
    with pytest.raises(DataError) as err:
        Synthesizer.load(bundle)
    message = str(err.value)
    assert message.startswith(f"{path} column V3: its scale of all is non-finite (")
    assert message.endswith(RETRAIN) and "\n" not in message
