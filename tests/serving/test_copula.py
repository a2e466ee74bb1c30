"""The Gaussian copula: training marginals and correlations out, no row copied, checked on load."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import ks_2samp, spearmanr
from support.creditcard import CLASSES, FEATURES

from wgangp.errors import DataError
from wgangp.serving.copula import GaussianCopula

WIDTH = len(FEATURES)
#: The networks' slot names of Kaggle's table: one per feature, all numbers.
NAMES = list(FEATURES)


def _training_rows(seed: int = 0) -> dict[int, np.ndarray]:
    """Per class: skewed columns, the first two strongly tied, the last with a point mass."""
    rng = np.random.default_rng(seed)
    real = {}
    for label in CLASSES:
        rows = rng.exponential(2.0, (400, WIDTH)) - 5.0 * label
        rows[:, 1] = np.exp(rows[:, 0] / 3) + 0.1 * rng.standard_normal(400)  # rises with column 0
        rows[:80, -1] = 1.0  # 20% at exactly 1.0, as Amount's 1.00
        real[label] = rows
    return real


def test_a_draw_keeps_the_marginals_and_the_rank_correlation_and_copies_no_row() -> None:
    real = _training_rows()
    copula = GaussianCopula.fit(real)
    draw = copula.draw(5000, label=1, rng=np.random.default_rng(3))
    for column in range(WIDTH):
        assert ks_2samp(draw[:, column], real[1][:, column]).statistic < 0.06
    # the correlation it keeps is the one of the training rows' normal scores
    scores = copula.marginals[1].forward
    tied = np.corrcoef(scores(draw)[:, :2], rowvar=False)[0, 1]
    assert tied > 0.7
    assert tied == pytest.approx(np.corrcoef(scores(real[1])[:, :2], rowvar=False)[0, 1], abs=0.03)
    assert abs(spearmanr(draw[:, 2], draw[:, 3]).statistic) < 0.1  # independent stay so
    assert abs(np.mean(draw[:, -1] == 1.0) - 0.2) < 0.03  # the point mass comes back exact
    copies = (draw[:, None, :] == real[1][None, :, :]).all(axis=2)
    assert not copies.any()


def test_saved_and_loaded_it_draws_the_same(tmp_path: Path) -> None:
    copula = GaussianCopula.fit(_training_rows())
    path = tmp_path / "copula.json"
    path.write_text(copula.to_json())
    loaded = GaussianCopula.load(path, NAMES)
    for label in CLASSES:
        rng = np.random.default_rng
        np.testing.assert_allclose(loaded.draw(50, label, rng(2)), copula.draw(50, label, rng(2)))


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (lambda p: {**p, "format": "wgangp.copula/1"}, "not a wgangp.copula/2 document"),
        (lambda p: {**p, "classes": {"1": p["classes"]["1"]}}, "classes ['1']"),
        (
            lambda p: _set(p, "covariance", [[1.0]]),
            "class 0 covariance of shape (1, 1), not 30 x 30",
        ),
        (lambda p: _set_first(p, "covariance", float("nan")), "(class 0 covariance not finite)"),
        (
            lambda p: _set_first(p, "covariance", 123.0),
            "(class 0 covariance not symmetric (Time, V1: 123 against ",
        ),
        (
            lambda p: _set(p, "covariance", (-np.eye(WIDTH)).tolist()),
            "(class 0 covariance not positive semi-definite (smallest eigenvalue -1, largest -1))",
        ),
        (
            lambda p: _set(p, "covariance", _indefinite()),
            "(class 0 covariance not positive semi-definite (smallest eigenvalue -1, largest 3))",
        ),
        (
            lambda p: _set(p, "covariance", np.full((WIDTH, WIDTH), 1e300).tolist()),
            "(class 0 covariance holds 1e+300, beyond 54.08, the largest a covariance of normal "
            "scores can hold)",
        ),
        (
            lambda p: _set(p, "marginals", {"mean": [0.0], "std": [1.0]}),
            "(class 0 marginals are not quantiles 30 columns wide)",
        ),
        (
            lambda p: _reverse_first_column(p, "marginals"),
            "(class 0 marginals of Time: quantiles not sorted (knot 2 of ",
        ),
    ],
    ids=[
        "format",
        "one class",
        "shape",
        "nan",
        "asymmetric",
        "minus identity",
        "indefinite",
        "1e300",
        "marginals",
        "unsorted",
    ],
)
def test_an_edited_file_is_refused_in_one_line(tmp_path: Path, edit, says: str) -> None:
    path = tmp_path / "copula.json"
    path.write_text(GaussianCopula.fit(_training_rows()).to_json())
    path.write_text(json.dumps(edit(json.loads(path.read_text()))))
    with pytest.raises(DataError) as err:
        GaussianCopula.load(path, NAMES)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(f"{path} is not a usable copula (") and says in message
    assert message.endswith("retrain to get a new one")


def test_a_copula_of_another_width_than_the_networks_is_refused(tmp_path: Path) -> None:
    """The loader reads the copula over the networks' slots: a file of 30 columns does not
    load for a table of 31 (a category's one-hot slots, a gap's indicator count too)."""
    path = tmp_path / "copula.json"
    path.write_text(GaussianCopula.fit(_training_rows()).to_json())
    with pytest.raises(DataError, match="class 0 marginals are not quantiles 31 columns wide"):
        GaussianCopula.load(path, [*NAMES, "merchant[0]"])


def _set(payload: dict, key: str, value: object) -> dict:
    payload["classes"]["0"][key] = value
    return payload


def _set_first(payload: dict, key: str, value: float) -> dict:
    payload["classes"]["0"][key][0][1] = value
    return payload


def _indefinite() -> list[list[float]]:
    """The identity with one pair of columns correlated 2: eigenvalues -1, 1 (28 times) and 3."""
    matrix = np.eye(WIDTH)
    matrix[0, 1] = matrix[1, 0] = 2.0
    return matrix.tolist()


def _reverse_first_column(payload: dict, key: str) -> dict:
    quantiles = payload["classes"]["0"][key]["quantiles"]
    for row, value in zip(quantiles, [row[0] for row in quantiles][::-1], strict=True):
        row[0] = value
    return payload


def test_a_rank_deficient_covariance_of_a_real_fit_loads(tmp_path: Path) -> None:
    """Fewer rows than columns: np.cov's zero eigenvalues round to tiny negative ones, which the
    tolerance keeps (a real run's rare class can be that small)."""
    rng = np.random.default_rng(0)
    copula = GaussianCopula.fit({c: rng.standard_normal((12, WIDTH)) for c in CLASSES})
    assert np.linalg.eigvalsh(copula.covariance[0])[0] < 1e-12  # rank 11 of 30
    path = tmp_path / "copula.json"
    path.write_text(copula.to_json())
    loaded = GaussianCopula.load(path, NAMES)
    np.testing.assert_array_equal(loaded.covariance[1], copula.covariance[1])


def test_a_class_of_two_rows_the_largest_variance_a_fit_writes_loads(tmp_path: Path) -> None:
    """Two rows score at about -/+5.2 and np.cov divides by one: 2 x 5.2 squared, the bound."""
    rng = np.random.default_rng(1)
    copula = GaussianCopula.fit(
        {0: rng.standard_normal((50, WIDTH)), 1: rng.normal(0, 9, (2, WIDTH))}
    )
    assert np.diag(copula.covariance[1]).max() > 54
    path = tmp_path / "copula.json"
    path.write_text(copula.to_json())
    np.testing.assert_array_equal(
        GaussianCopula.load(path, NAMES).covariance[1], copula.covariance[1]
    )
