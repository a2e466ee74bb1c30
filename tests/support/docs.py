"""The lines a user is shown: each error one line, and docs/errors.md lists every one verbatim
(paths shortened to <path>)."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.configs import REPO

ERRORS_MD = REPO / "docs" / "errors.md"


def documented(line: str, **shortened: Path | str) -> str:
    """``line`` with each keyword's value shortened to ``<keyword>`` (``path=table`` writes
    ``<path>``); fails unless docs/errors.md holds the result word for word."""
    text = line
    for name, value in shortened.items():
        text = text.replace(str(value), f"<{name}>")
    assert text in ERRORS_MD.read_text(), f"docs/errors.md does not hold this line:\n{text}"
    return text


def one_line(err: pytest.ExceptionInfo) -> str:
    """The raised error's text, failing unless it is one line without a traceback."""
    text = str(err.value)
    assert "\n" not in text and "Traceback" not in text
    return text
