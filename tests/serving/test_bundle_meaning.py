"""Every table of a bundle is checked for meaning at load: edited and re-sealed, it never samples.

The manifest catches an edit; a user who re-seals it (or an old bundle) is caught by the tables'
own loaders. Each case edits a tiny real training run's bundle, re-seals it with
``write_manifest`` and checks that ``wgangp.sample`` exits 2 with one line naming the file, the
table and the fix, writing nothing, and that the served model (the pyfunc's ``load_context``)
refuses it with the same line. The run's own bundle loads: its tables pass every check.
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

from wgangp.data.schema import FEATURES
from wgangp.data.transform import RETRAIN
from wgangp.errors import WgangpError
from wgangp.serving.bundle import (
    BUNDLE,
    CALIBRATION_FILE,
    COPULA_FILE,
    META_FILE,
    PREPROCESSING_FILE,
    REEXPORT,
    write_manifest,
)

Edit = Callable[[dict], object]


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundle of one tiny real training run (calibration and copula included)."""
    from wgangp.train import train

    root = tmp_path_factory.mktemp("meaning")
    result = train(
        compose([*TINY, "tracking.enabled=false"]), output_dir=root / "out", launch_dir=root
    )
    assert result.status == "FINISHED"
    return Path(result.synthesizer_dir)


def test_a_real_runs_tables_pass_every_check(shipped: Path) -> None:
    from wgangp.serving.synthesizer import Synthesizer

    assert {CALIBRATION_FILE, COPULA_FILE} <= {p.name for p in shipped.iterdir()}
    model = Synthesizer.load(shipped)
    assert len(model.sample(20, seed=1)) == 20
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
        lambda p: _reverse(p["classes"]["1"]["real"], AMOUNT),
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
    "preprocessing std 0": (
        PREPROCESSING_FILE,
        lambda p: p["scales"]["1"]["base"]["std"].__setitem__(1, 0.0),
        "holds class 1's scale of V1 with std 0, not in (0, 1e+16]",
        RETRAIN,
    ),
    "preprocessing std 1e300": (
        PREPROCESSING_FILE,
        lambda p: p["scales"]["0"]["base"]["std"].__setitem__(1, 1e300),
        "holds class 0's scale of V1 with std 1e+300, not in (0, 1e+16]",
        RETRAIN,
    ),
    "preprocessing Time swapped": (
        PREPROCESSING_FILE,
        lambda p: _swap_with_references(p["scales"]["1"]["quantile"], 1),
        "holds class 1's scale of Amount with references from ",
        RETRAIN,
    ),
    "preprocessing unsorted": (
        PREPROCESSING_FILE,
        lambda p: _reverse(p["scales"]["0"]["quantile"], 0),
        "holds class 0's scale of Amount with quantiles not sorted (knot 2 of ",
        RETRAIN,
    ),
    "copula share 0": (
        META_FILE,
        lambda p: p.__setitem__("copula_share", 0.0),
        f"gives copula_share 0, but the bundle holds {COPULA_FILE}, which only a share in (0, 1) "
        "draws from",
        REEXPORT,
    ),
    "preprocessing amount_max": (
        PREPROCESSING_FILE,
        lambda p: p.__setitem__("amount_max", -3.5),
        "holds amount_max -3.5, a negative cap for every generated Amount (amounts are >= 0)",
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
    from wgangp.sample import main
    from wgangp.serving.pyfunc import SynthesizerModel

    name, edit, says, fix = CASES[case]
    bundle = _edited(shipped, tmp_path, name, edit)
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
