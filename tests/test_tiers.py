"""The fast tier: a bare ``pytest`` deselects the full tier's tests and says how to run them."""

from __future__ import annotations

import pytest
from support.plugin import FULL_TIER_MARKERS

# An inner suite with one test per tier marker, run in-process through pytester (no gpu test:
# its skip imports TensorFlow, which cannot be imported twice in one process).
SUITE = """
import pytest

def test_fast():
    pass

@pytest.mark.slow
def test_slow():
    pass

@pytest.mark.server
def test_server():
    pass

@pytest.mark.browser
def test_browser():
    pass
"""

INI = """
[pytest]
addopts = --strict-markers
markers =
    slow: s
    server: s
    browser: b
"""

SUMMARY = "fast tier: 3 tests deselected; run everything with: pytest --all"


@pytest.fixture
def inner(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(INI)
    pytester.makeconftest('pytest_plugins = ["support.plugin"]')
    pytester.makepyfile(test_tiers_inner=SUITE)
    return pytester


def test_bare_run_is_the_fast_tier(inner: pytest.Pytester) -> None:
    result = inner.runpytest("-v")
    result.assert_outcomes(passed=1, deselected=3)
    result.stdout.fnmatch_lines(["tiers: fast*run everything with: pytest --all"])
    result.stdout.fnmatch_lines([SUMMARY])
    assert "test_slow" not in result.stdout.str()


def test_all_runs_every_tier(inner: pytest.Pytester) -> None:
    result = inner.runpytest("--all")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["tiers: all (--all)"])
    assert "deselected" not in result.stdout.str()


@pytest.mark.parametrize(("expression", "passed"), [("slow or browser", 2), ("not slow", 3)])
def test_an_explicit_marker_expression_wins(
    inner: pytest.Pytester, expression: str, passed: int
) -> None:
    result = inner.runpytest("-m", expression)
    result.assert_outcomes(passed=passed, deselected=4 - passed)
    assert "fast tier:" not in result.stdout.str()


def test_quiet_run_still_says_how_to_run_everything(inner: pytest.Pytester) -> None:
    result = inner.runpytest("-q")
    result.assert_outcomes(passed=1, deselected=3)
    result.stdout.fnmatch_lines([SUMMARY])


def test_the_project_registers_every_tier_marker(pytestconfig: pytest.Config) -> None:
    registered = {line.split(":")[0] for line in pytestconfig.getini("markers")}
    assert {*FULL_TIER_MARKERS, "gpu"} <= registered


def test_xdist_work_units_keep_files_whole_and_the_server_runs_together() -> None:
    """Under `pytest -n 2` (.ci/run) a worker takes a whole file; every file using the
    trained runs on the shared server is one unit, so those runs are trained once."""
    from support.configs import REPO
    from support.plugin import SHARED_FIXTURE_UNIT, work_unit

    shared = {
        work_unit(f"{path}::test_x", REPO)
        for path in (
            "tests/tracking/test_server_runs.py",
            "tests/test_mlflow_ui_browser.py",
            "tests/test_notebook.py",
        )
    }
    assert shared == {SHARED_FIXTURE_UNIT}
    assert work_unit("tests/test_tiers.py::test_x[1]", REPO) == "tests/test_tiers.py"
    assert work_unit("tests/gone.py::test_x", REPO) == "tests/gone.py"
