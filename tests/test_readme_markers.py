"""Every pytest marker the suite declares is explained in the README, one line each."""

from __future__ import annotations

import tomllib

from support.configs import REPO


def _declared_markers() -> list[str]:
    options = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    return [entry.split(":", 1)[0].strip() for entry in options["markers"]]


def test_each_marker_has_its_readme_line() -> None:
    lines = [line.strip() for line in (REPO / "README.md").read_text().splitlines()]
    markers = _declared_markers()
    assert markers, "pyproject.toml declares no pytest markers"
    for marker in markers:
        explained = [line for line in lines if line.startswith(f"- `{marker}`: ")]
        assert len(explained) == 1, f"README needs one line '- `{marker}`: ...'"
