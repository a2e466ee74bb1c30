"""The bundle audit: a model trained on the real sample ships no training fraud's value.

Every number in every JSON file of the saved bundle is compared with every value of the training
frauds (and ``log1p`` of their amounts, the transform's units); the calibration's and the
copula's fraud tables, which live in the networks' space, are also mapped back through the
stored transform and compared column by column. Only values at least ``ship.min_atom_rows``
training frauds share (Amount's 1.00 and 0.00), or that many normals share (the normal class's
own atoms), may appear (docs/privacy.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from support.cli import run_train_cli
from support.configs import TINY_NETWORKS, real_sample_path

from wgangp.config import DataConfig
from wgangp.data.knots import SAME
from wgangp.data.prepare import prepare_data
from wgangp.data.schema import AMOUNT, FEATURES, FRAUD, LABEL
from wgangp.data.transform import TabularTransformer

K = 5  # ship.min_atom_rows, the default
#: Keys whose numbers are no fitted values: ranks in [0, 1], column indices, the bundle's meta.
STRUCTURE = {"references", "columns", "latent_dim", "copula_share"}


def _numbers(node, key: str = "") -> list[float]:
    if key in STRUCTURE:
        return []
    if isinstance(node, dict):
        return [x for k, v in node.items() for x in _numbers(v, k)]
    if isinstance(node, list):
        return [x for v in node for x in _numbers(v, key)]
    is_number = isinstance(node, int | float) and not isinstance(node, bool)
    return [float(node)] if is_number else []


def _equal_to_any(values: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Per value: equal to a reference value (within the rounding of a float round trip)."""
    reference = np.unique(reference)
    if len(reference) < 2:
        reference = (
            np.concatenate([reference, [np.inf]])[:2] if len(reference) else np.full(2, np.inf)
        )
    i = np.clip(np.searchsorted(reference, values), 1, len(reference) - 1)
    nearest = np.minimum(np.abs(reference[i] - values), np.abs(reference[i - 1] - values))
    return nearest <= SAME * np.maximum(1.0, np.abs(values))


def _held_by_few(frauds: np.ndarray, normals: np.ndarray | None = None) -> list[np.ndarray]:
    """Per column: the values fewer than K training frauds hold (and, with ``normals``, fewer
    than K normals too: the normal class's own atoms, such as Amount 0.01, name no fraud)."""
    found = []
    for i, column in enumerate(frauds.T):
        values, counts = np.unique(column, return_counts=True)
        few = values[counts < K]
        if normals is not None:
            common, many = np.unique(normals[:, i], return_counts=True)
            few = np.setdiff1d(few, common[many >= K])
        found.append(few)
    return found


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> tuple[Path, np.ndarray, np.ndarray]:
    real_sample = real_sample_path()
    if not real_sample.exists():
        pytest.skip(f"real-rows sample not found at {real_sample} (set WGANGP_REAL_SAMPLE)")
    work = tmp_path_factory.mktemp("audit")
    result = run_train_cli(
        [
            *TINY_NETWORKS,
            f"data.path={real_sample}",
            "data.fallback=error",
            "trainer.steps=20",
            "trainer.steps_per_call=10",
            "trainer.progress=false",
            "select.every=0",
            "evaluate.enabled=false",
            "tracking.log_model=false",
            f"tracking.uri=sqlite:///{work / 'mlflow.db'}",
            f"hydra.run.dir={work / 'run'}",
            f"trainer.checkpoint_dir={work / 'checkpoints'}",
        ],
        cwd=work,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    split = prepare_data(
        DataConfig(path=str(real_sample), fallback="error"), seed=0, launch_dir=work
    )
    rows = split.train[list(FEATURES)].to_numpy(np.float64)
    frauds = split.train[LABEL].to_numpy() == FRAUD
    return work / "run" / "synthesizer", rows[frauds], rows[~frauds]


@pytest.mark.slow
def test_no_number_in_the_bundle_is_a_training_fraud_value(trained) -> None:
    bundle, frauds, normals = trained
    few = _held_by_few(frauds, normals)
    amount = FEATURES.index(AMOUNT)
    secret = np.concatenate([*few, np.log1p(few[amount])])
    files = sorted(bundle.glob("*.json"))
    assert {f.name for f in files} >= {"preprocessing.json", "calibration.json", "copula.json"}
    for path in files:
        numbers = np.asarray(_numbers(json.loads(path.read_text())))
        leaked = numbers[_equal_to_any(numbers, secret)] if len(numbers) else numbers
        assert not len(leaked), f"{path.name} stores training fraud values {leaked[:5]}"


@pytest.mark.slow
def test_fraud_tables_mapped_back_to_units_hold_no_training_value(trained) -> None:
    bundle, frauds, _ = trained
    few = _held_by_few(frauds)
    transformer = TabularTransformer.load(bundle / "preprocessing.json")
    calibration = json.loads((bundle / "calibration.json").read_text())["classes"][str(FRAUD)]
    copula = json.loads((bundle / "copula.json").read_text())["classes"][str(FRAUD)]
    tables = {
        "preprocessing.json": None,
        "calibration.json": calibration["real"],
        "copula.json": copula["marginals"],
    }
    for name, table in tables.items():
        if table is None:  # the transform's own fraud scale, in original units already
            stored = transformer.scales[str(FRAUD)]["quantile"]
            knots = np.asarray(stored["quantiles"])
            columns = [FEATURES.index(c) for c in transformer.quantile_columns]
            units = knots.copy()
            if AMOUNT in transformer.quantile_columns:
                at = transformer.quantile_columns.index(AMOUNT)
                units[:, at] = np.expm1(units[:, at])
        else:
            knots = np.asarray(table["quantiles"])
            columns = list(range(len(FEATURES)))
            labels = np.full(len(knots), FRAUD)
            units = transformer._by_class(knots, labels, "inverse")
            units[:, FEATURES.index(AMOUNT)] = np.expm1(units[:, FEATURES.index(AMOUNT)])
        # far fewer entries than training frauds
        assert len(knots) < len(frauds) / 3, f"{name}: {len(knots)} knots"
        for i, column in enumerate(columns):
            leaked = units[_equal_to_any(units[:, i], few[column]), i]
            assert not len(leaked), f"{name} {FEATURES[column]}: {leaked[:5]}"
