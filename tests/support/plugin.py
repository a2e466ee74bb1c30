"""The suite's own fixtures, markers and tiers (registered by tests/conftest.py as a plugin).

Tiers: a bare ``pytest`` runs the fast tier, so a newcomer gets an answer in minutes; tests
marked ``slow``, ``server`` or ``browser`` run only under ``pytest --all`` (what CI
runs) or when the user's own ``-m`` expression picks them. ``gpu`` tests run in both tiers and
skip when TensorFlow sees no GPU. Each marker's one-line meaning is in pyproject.toml.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

from support.configs import TINY, real_sample_path


@pytest.fixture
def real_sample() -> Path:
    path = real_sample_path()
    if not path.exists():
        pytest.skip(f"real-rows sample not found at {path} (set WGANGP_REAL_SAMPLE to its path)")
    return path


@pytest.fixture
def tiny_overrides() -> list[str]:
    return list(TINY)


# Markers whose tests only the full run (--all) executes.
FULL_TIER_MARKERS = ("slow", "server", "browser")
RUN_EVERYTHING = "run everything with: pytest --all"
_TIER_DESELECTED = pytest.StashKey[int]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("wgangp").addoption(
        "--all",
        action="store_true",
        default=False,
        dest="run_all_tiers",
        help=f"also run tests marked {', '.join(FULL_TIER_MARKERS)} (what CI runs)",
    )


def _fast_tier(config: pytest.Config) -> bool:
    """The fast tier applies unless --all is given or the user chose tests by marker (-m)."""
    return not config.getoption("run_all_tiers") and not config.getoption("markexpr")


def pytest_report_header(config: pytest.Config) -> str:
    if config.getoption("run_all_tiers"):
        return "tiers: all (--all)"
    if config.getoption("markexpr"):
        return "tiers: chosen by your -m expression (no tier deselection)"
    return f"tiers: fast, tests marked {'/'.join(FULL_TIER_MARKERS)} deselected; {RUN_EVERYTHING}"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    count = terminalreporter.config.stash.get(_TIER_DESELECTED, 0)
    if count:
        terminalreporter.write_line(f"fast tier: {count} tests deselected; {RUN_EVERYTHING}")


def _deselect_full_tier(config: pytest.Config, items: list[pytest.Item]) -> None:
    kept, dropped = [], []
    for item in items:
        full = any(item.get_closest_marker(name) for name in FULL_TIER_MARKERS)
        (dropped if full else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
    config.stash[_TIER_DESELECTED] = len(dropped)


#: Session fixtures that cost a server start or trainings: the test files using them share a
#: worker under xdist, so each is built once.
EXPENSIVE_SESSION_FIXTURES = ("server_runs", "shared_mlflow_server")
SHARED_FIXTURE_UNIT = "session fixtures: " + ", ".join(EXPENSIVE_SESSION_FIXTURES)


def work_unit(nodeid: str, rootpath: Path) -> str:
    """The unit of work ``pytest -n 2`` hands one worker whole: a test's file (so a module-scoped
    fixture is built once, and a module's tests keep their order), or, for every file with a
    function taking an expensive session fixture, one unit together."""
    path = nodeid.split("::", 1)[0]
    return SHARED_FIXTURE_UNIT if _takes_expensive_fixture(rootpath / path) else path


@functools.cache
def _takes_expensive_fixture(path: Path) -> bool:
    try:
        tree = ast.parse(path.read_text())
    except (OSError, SyntaxError):
        return False
    return any(
        argument.arg in EXPENSIVE_SESSION_FIXTURES
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef)
        for argument in node.args.args
    )


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """``-n N`` (``--dist load``, .ci/run) or ``--dist loadfile``: whole work units per worker."""
    if config.getoption("dist") not in ("load", "loadfile"):
        return None
    from xdist.scheduler import LoadScopeScheduling

    class WorkUnitScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid, config.rootpath)

    return WorkUnitScheduling(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _fast_tier(config):
        _deselect_full_tier(config, items)
    _skip_gpu_tests_without_gpu(items)


def _skip_gpu_tests_without_gpu(items: list[pytest.Item]) -> None:
    gpu_tests = [item for item in items if item.get_closest_marker("gpu")]
    if not gpu_tests:
        return
    import tensorflow as tf

    if not tf.config.list_physical_devices("GPU"):
        skip = pytest.mark.skip(reason="needs a GPU that TensorFlow can see")
        for item in gpu_tests:
            item.add_marker(skip)
