"""Every table of a bundle is checked for meaning at load: edited and re-sealed, it never samples.

The manifest catches an edit; a user who re-seals it (or an old bundle) is caught by the tables'
own loaders. Each case edits a tiny real training run's bundle, re-seals it with
``write_manifest`` and checks that ``wgangp.sample`` exits 2 with one line naming the file, the
table and the fix, writing nothing, and that the served model (the pyfunc's ``load_context``)
refuses it with the same line. The run's own bundle loads: its tables pass every check. The run
maps Amount through its quantiles (``preprocess.quantile_columns``), so preprocessing.json holds a
quantile table to edit too.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from support.configs import TINY, compose
from support.creditcard import FEATURES

from wgangp.data.transform.stored import RETRAIN
from wgangp.errors import WgangpError
from wgangp.serving.bundle import (
    BUNDLE,
    CALIBRATION_FILE,
    COPULA_FILE,
    META_FILE,
    PREPROCESSING_FILE,
    REEXPORT,
    SCHEMA_FILE,
    write_manifest,
)

Edit = Callable[[dict], object]


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundle of one tiny real training run (calibration and, asked for, the copula)."""
    from wgangp.train import train

    root = tmp_path_factory.mktemp("meaning")
    overrides = [
        *TINY,
        "tracking.enabled=false",
        "preprocess.quantile_columns=[Amount]",
        "ship.copula_share=0.5",
    ]
    result = train(compose(overrides), output_dir=root / "out", launch_dir=root)
    assert result.status == "FINISHED"
    return Path(result.synthesizer_dir)


def test_a_real_runs_tables_pass_every_check(shipped: Path) -> None:
    from wgangp.serving.synthesizer import Synthesizer

    assert {CALIBRATION_FILE, COPULA_FILE, SCHEMA_FILE} <= {p.name for p in shipped.iterdir()}
    model = Synthesizer.load(shipped)
    assert len(model.sample(20, seed=1)) == 20
    assert model.transformer.quantile_columns == ("Amount",)
    # A handful of training frauds: their covariance is rank-deficient, its zero eigenvalues
    # round to about -1e-15 of the largest, well within the PSD check's tolerance.
    assert np.linalg.matrix_rank(model.mixture.copula.covariance[1]) < len(FEATURES)


def _reverse(table: dict, column: int) -> None:
    """Knots of ``column`` in falling order."""
    quantiles = table["quantiles"]
    for row, value in zip(quantiles, [row[column] for row in quantiles][::-1], strict=True):
        row[column] = value


def _swap_with_references(table: dict, column: int) -> None:
    for i, row in enumerate(table["quantiles"]):
        row[column], table["references"][i] = table["references"][i], row[column]


def _covariance(matrix: np.ndarray) -> Edit:
    return lambda p: p["classes"]["1"].__setitem__("covariance", matrix.tolist())


def _indefinite() -> np.ndarray:
    matrix = np.eye(len(FEATURES))
    matrix[0, 1] = matrix[1, 0] = 2.0
    return matrix


COPULA = "is not a usable copula"
CALIBRATION = "is not a usable calibration"
AMOUNT = FEATURES.index("Amount")
V1 = FEATURES.index("V1")


def _scales(payload: dict, column: int, key: str) -> dict:
    """preprocessing.json's scale ``key`` ("all", "0", "1") of the feature at ``column``."""
    entry = payload["columns"][column]
    assert entry["schema"]["name"] == FEATURES[column]
    return entry["scales"][key]


#: (file, edit, start of the line after the file's path, end of the line)
CASES: dict[str, tuple[str, Edit, str, str]] = {
    "copula -I": (
        COPULA_FILE,
        _covariance(-np.eye(len(FEATURES))),
        f"{COPULA} (class 1 covariance not positive semi-definite (smallest eigenvalue -1, "
        "largest -1))",
        RETRAIN,
    ),
    "copula indefinite": (
        COPULA_FILE,
        _covariance(_indefinite()),
        f"{COPULA} (class 1 covariance not positive semi-definite (smallest eigenvalue -1, "
        "largest 3))",
        RETRAIN,
    ),
    "copula 1e300": (
        COPULA_FILE,
        _covariance(np.full((len(FEATURES), len(FEATURES)), 1e300)),
        f"{COPULA} (class 1 covariance holds 1e+300, beyond 54.08, the largest a covariance of "
        "normal scores can hold)",
        RETRAIN,
    ),
    "copula unsorted": (
        COPULA_FILE,
        lambda p: _reverse(p["classes"]["0"]["marginals"], AMOUNT),
        f"{COPULA} (class 0 marginals of Amount: quantiles not sorted (knot 2 of ",
        RETRAIN,
    ),
    "calibration unsorted": (
        CALIBRATION_FILE,
        lambda p: _reverse(p["classes"]["1"]["real"][AMOUNT], 0),
        f"{CALIBRATION} (class 1 real quantiles of Amount: quantiles not sorted (knot 2 of ",
        RETRAIN,
    ),
    "calibration infinite": (
        CALIBRATION_FILE,
        lambda p: p["classes"]["0"]["generated"]["quantiles"][7].__setitem__(3, float("inf")),
        f"{CALIBRATION} (class 0 generated quantiles of V3: non-finite quantiles)",
        RETRAIN,
    ),
    "calibration lengths": (
        CALIBRATION_FILE,
        lambda p: p["classes"]["1"]["generated"]["references"].pop(),
        f"{CALIBRATION} (class 1 generated quantiles hold 1000 knots for 999 references)",
        RETRAIN,
    ),
    "calibration of other columns": (
        CALIBRATION_FILE,
        lambda p: p["layout"][0].__setitem__("column", "Day"),
        f"does not fit {PREPROCESSING_FILE} (another table's columns)",
        REEXPORT,
    ),
    "preprocessing std 0": (
        PREPROCESSING_FILE,
        lambda p: _scales(p, V1, "0")["std"].__setitem__(0, 0.0),
        "column V1: its scale of 0 makes no sense (std 0, not in (0, 1e+16])",
        RETRAIN,
    ),
    "preprocessing std 1e300": (
        PREPROCESSING_FILE,
        lambda p: _scales(p, V1, "all")["std"].__setitem__(0, 1e300),
        "column V1: its scale of all makes no sense (std 1e+300, not in (0, 1e+16])",
        RETRAIN,
    ),
    "preprocessing quantiles swapped": (
        PREPROCESSING_FILE,
        lambda p: _swap_with_references(_scales(p, AMOUNT, "0"), 0),
        "column Amount: its scale of 0 makes no sense (references from ",
        RETRAIN,
    ),
    "preprocessing unsorted": (
        PREPROCESSING_FILE,
        lambda p: _reverse(_scales(p, AMOUNT, "all"), 0),
        "column Amount: its scale of all makes no sense (quantiles not sorted (knot 2 of ",
        RETRAIN,
    ),
    "copula share 0": (
        META_FILE,
        lambda p: p.__setitem__("copula_share", 0.0),
        f"does not describe {COPULA_FILE}, but the bundle holds it",
        REEXPORT,
    ),
    "not calibrated": (
        META_FILE,
        lambda p: p.__setitem__("calibrated", False),
        f"does not describe {CALIBRATION_FILE}, but the bundle holds it",
        REEXPORT,
    ),
    "another class to synthesize": (
        META_FILE,
        lambda p: p.__setitem__("label", ["Class", 0]),
        "is not a usable synthesizer description (label and class ['Class', 0] are not the "
        "schema's ['Class', 1])",
        RETRAIN,
    ),
    "preprocessing Amount bounds reversed": (
        PREPROCESSING_FILE,
        lambda p: p["columns"][AMOUNT]["schema"].__setitem__("bounds", [4000.0, -3.5]),
        "column 'Amount': bounds are reversed (4000.0 > -3.5); write [min, max]",
        RETRAIN,
    ),
    "preprocessing fill out of bounds": (
        PREPROCESSING_FILE,
        lambda p: p["columns"][AMOUNT].__setitem__("fill", -3.5),
        "column Amount fills gaps with -3.5, outside its bounds",
        RETRAIN,
    ),
}


def _edited(shipped: Path, tmp_path: Path, name: str, edit: Edit) -> Path:
    bundle = Path(shutil.copytree(shipped, tmp_path / BUNDLE))
    payload = json.loads((bundle / name).read_text())
    edit(payload)
    (bundle / name).write_text(json.dumps(payload))  # json writes Infinity, as an editor might
    write_manifest(bundle)
    return bundle


@pytest.mark.parametrize("case", list(CASES))
def test_an_edited_resealed_table_never_samples(
    shipped: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    name, edit, says, fix = CASES[case]
    bundle = _edited(shipped, tmp_path, name, edit)
    _never_samples(bundle, name, says, fix, tmp_path, capsys)


def test_a_schema_of_other_columns_never_samples(
    shipped: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """schema.yaml renames a column and is re-sealed: the description's columns are not the
    table's any more."""
    bundle = Path(shutil.copytree(shipped, tmp_path / BUNDLE))
    text = (bundle / SCHEMA_FILE).read_text()
    assert text.count("- name: V1\n") == 1
    (bundle / SCHEMA_FILE).write_text(text.replace("- name: V1\n", "- name: W1\n"))
    write_manifest(bundle)
    says = "is not a usable synthesizer description (columns are not the table's)"
    _never_samples(bundle, META_FILE, says, RETRAIN, tmp_path, capsys)


def _never_samples(
    bundle: Path,
    name: str,
    says: str,
    fix: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``wgangp.sample`` exits 2 with one line naming ``bundle / name``, writing nothing, and the
    served model refuses the bundle with the same line."""
    from wgangp.sample import main
    from wgangp.serving.pyfunc import SynthesizerModel

    out = tmp_path / "rows.csv"
    capsys.readouterr()
    assert main([f"model_uri={bundle}", "n=5", f"output={out}"]) == 2
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("wgangp:")]
    assert len(lines) == 1
    line = lines[0].removeprefix("wgangp: error: ")
    assert line.startswith(f"{bundle / name} {says}") and line.endswith(f"; {fix}"), line
    assert not out.exists()
    with pytest.raises(WgangpError) as err:
        SynthesizerModel().load_context(SimpleNamespace(artifacts={BUNDLE: str(bundle)}))
    assert str(err.value) == line
