"""A newcomer finds every page: docs/README.md files each docs/*.md page as a guide or a report,
the README links the index and shows its picture, and every link of the two resolves (the page,
and the heading an anchor names)."""

from __future__ import annotations

import re
from pathlib import Path

from support.configs import REPO

DOCS = REPO / "docs"
INDEX = DOCS / "README.md"
#: A Markdown link's target, relative (a page of the repo, maybe with an anchor).
LINK = re.compile(r"\]\((?!https?://)(?P<path>[^)#\s]*)(?:#(?P<anchor>[^)\s]+))?\)")


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    return {
        _slug(line.lstrip("#"))
        for line in page.read_text().splitlines()
        if re.match(r"#{1,6} ", line)
    }


def _links(page: Path) -> list[tuple[Path, str | None]]:
    found = []
    for match in LINK.finditer(page.read_text()):
        target = (page.parent / match.group("path")).resolve() if match.group("path") else page
        found.append((target, match.group("anchor")))
    return found


def test_the_slug_rule() -> None:
    assert (
        _slug(" Differential privacy: `privacy.epsilon`") == "differential-privacy-privacyepsilon"
    )
    assert _slug("The test suite's time") == "the-test-suites-time"


def test_the_index_files_every_page() -> None:
    linked = {target for target, _ in _links(INDEX)}
    pages = {page.resolve() for page in DOCS.glob("*.md") if page != INDEX}
    assert sorted(p.name for p in pages - linked) == []
    text = INDEX.read_text()
    assert text.index("## Guides") < text.index("## Reports")


def test_every_link_of_the_index_and_the_readme_resolves() -> None:
    broken = []
    for page in (INDEX, REPO / "README.md"):
        for target, anchor in _links(page):
            if not target.exists():
                broken.append(f"{page.name}: {target}")
            elif anchor and target.suffix == ".md" and anchor not in _anchors(target):
                broken.append(f"{page.name}: {target.name}#{anchor}")
    assert broken == []


def test_the_readme_links_the_index_and_shows_its_picture() -> None:
    targets = {target for target, _ in _links(REPO / "README.md")}
    assert INDEX.resolve() in targets
    pictures = [t for t in targets if t.suffix == ".png"]
    assert pictures and all(p.stat().st_size < 200_000 for p in pictures)  # small, committed
    assert (REPO / "scripts" / "readme_figure.py").is_file()  # what draws it again
