"""The type checker's exceptions say why: every ``# type: ignore`` in the package names its error
codes and, in a comment after them, the reason mypy cannot see (issue 69). mypy itself runs in
CI (``.ci/run``) and as ``.venv/bin/mypy``."""

from __future__ import annotations

import re
import tomllib

from support.configs import REPO

IGNORE = re.compile(r"#\s*type:\s*ignore(?P<codes>\[[^\]]*\])?(?P<rest>.*)$")


def _unexplained(text: str) -> list[int]:
    """The lines of ``text`` whose type ignore names no codes or gives no reason after them."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        match = IGNORE.search(line)
        if match is None:
            continue
        reason = match.group("rest").strip()
        if not match.group("codes") or not reason.startswith("#") or len(reason) < 8:
            found.append(number)
    return found


def test_the_rule_reads_what_it_should() -> None:
    assert _unexplained("x = 1  # type: ignore[misc]  # a base chosen at import\n") == []
    assert _unexplained("x = 1  # type: ignore[misc]\n") == [1]
    assert _unexplained("x = 1  # type: ignore  # no codes\n") == [1]


def _unchecked() -> set[str]:
    """The modules pyproject.toml's mypy config leaves unchecked for now (``ignore_errors``)."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["mypy"]
    return {
        module
        for override in config.get("overrides", [])
        if override.get("ignore_errors")
        for module in override["module"]
    }


def test_every_type_ignore_gives_its_reason() -> None:
    unchecked = _unchecked()
    unexplained = [
        f"{path.relative_to(REPO)}:{line}"
        for path in sorted((REPO / "wgangp").rglob("*.py"))
        if ".".join(path.relative_to(REPO).with_suffix("").parts) not in unchecked
        for line in _unexplained(path.read_text())
    ]
    assert unexplained == []
    assert len(unchecked) <= 3  # the modules other branches rewrite now: none more
