"""The commands a newcomer pastes: the README's two set-up commands; CI runs every test tier."""

from __future__ import annotations

from support.configs import REPO

RUN_COMMAND = "bash scripts/bootstrap.sh && .venv/bin/python -m wgangp.train"
TEST_INSTALL = "bash scripts/bootstrap.sh --dev"
#: The README's test command runs the fast tier on two workers; CI runs every tier.
TEST_COMMAND = ".venv/bin/python -m pytest -n 2"
CI_TEST_COMMAND = ".venv/bin/python -m pytest --all -n 2"
TYPE_CHECK = ".venv/bin/mypy"


def test_readme_shows_both_set_up_commands() -> None:
    lines = {line.strip() for line in (REPO / "README.md").read_text().splitlines()}
    assert RUN_COMMAND in lines  # the whole line: the product needs no experiment
    assert f"{TEST_INSTALL} && {TEST_COMMAND}" in lines


def test_ci_installs_once_then_runs_every_test_tier() -> None:
    lines = [
        line.strip()
        for line in (REPO / ".ci" / "run").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert sum("scripts/bootstrap.sh" in line for line in lines) == 1
    install = lines.index(TEST_INSTALL)
    pytest_lines = [line for line in lines if "pytest" in line]
    run_tests = f"{CI_TEST_COMMAND} || tests=$?"  # its status kept while the Docker check ends
    assert pytest_lines == [run_tests]
    assert install < lines.index(run_tests)
    assert '[ "$tests" -eq 0 ] || exit "$tests"' in lines


def test_ci_type_checks_the_package_as_the_readme_says() -> None:
    """``.venv/bin/mypy`` (its config in pyproject.toml: the whole package) fails CI before any
    test runs, and the README's Development section names the same command."""
    lines = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()]
    tests = next(i for i, line in enumerate(lines) if line.startswith(CI_TEST_COMMAND))
    assert lines.index(TYPE_CHECK) < tests
    assert f"`{TYPE_CHECK}`" in (REPO / "README.md").read_text()
    assert 'files = ["wgangp"]' in (REPO / "pyproject.toml").read_text()
