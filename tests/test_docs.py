"""The documentation holds together: every link between the README and docs/ pages reaches a file (and a heading, for
an anchor), every "docs/PAGE.md, "Section"" that code, tests and docs cite names a heading of that page, and nothing
cites design notes outside the repository (docs/design.md is the project's own)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: the text files that cite the docs: the pages themselves, the code's messages and help texts, the tests
CITING = [*PAGES, *sorted((ROOT / "guitest").rglob("*.py")), *sorted((ROOT / "tests").glob("*.py")), ROOT / "pyproject.toml"]

LINK = re.compile(r"\]\(([^)\s]+)\)")
#: docs/PAGE.md, "Section" | docs/PAGE.md ("Section") | docs/PAGE.md "Section" | [PAGE.md](PAGE.md), "Section"
CITATION = re.compile(r"(?:docs/|\]\()([a-z_]+\.md)\)?(?:, | \(| )\"([^\"]+)\"")
FENCE = re.compile(r"^(```|~~~)")


def headings(page: Path) -> list[str]:
    """The page's Markdown headings, in order, outside fenced code blocks."""
    out, fenced = [], False
    for line in page.read_text("utf-8").split("\n"):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            out.append(line.lstrip("#").strip())
    return out


def sections(page: Path) -> list[str]:
    """What a citation may name on the page: its headings, and the bold words that open a paragraph (``**Budgets.**``)."""
    return headings(page) + re.findall(r"^\*\*([^*]+)\*\*", page.read_text("utf-8"), re.M)


def anchors(page: Path) -> set[str]:
    """The anchors GitHub makes of the page's headings: lower case, punctuation but hyphens dropped, spaces as
    hyphens, a repeated one suffixed -1, -2, ..."""
    seen: Counter[str] = Counter()
    out = set()
    for heading in headings(page):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        out.add(slug if not seen[slug] else f"{slug}-{seen[slug]}")
        seen[slug] += 1
    return out


def test_anchors_follow_githubs_rule(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text("# Shards: one suite, one `gate`\n\n```\n# not a heading\n```\n## Notes\n## Notes\n")
    assert anchors(page) == {"shards-one-suite-one-gate", "notes", "notes-1"}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_between_the_pages_reaches_its_file_and_heading(page: Path) -> None:
    broken = []
    for target in LINK.findall(page.read_text("utf-8")):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading with that anchor in {file.relative_to(ROOT)}")
    assert broken == []


def test_every_cited_section_is_a_heading_of_its_page() -> None:
    wrong = []
    for file in CITING:
        text = file.read_text("utf-8")
        for page, section in CITATION.findall(text):
            target = ROOT / "docs" / page
            if not target.is_file():
                wrong.append(f"{file.relative_to(ROOT)}: docs/{page} does not exist")
            elif not any(h.replace("`", "").startswith(" ".join(section.replace("`", "").split())) for h in sections(target)):
                wrong.append(f"{file.relative_to(ROOT)}: docs/{page} has no section {section!r}")
    assert wrong == []


def test_nothing_cites_design_notes_outside_the_repository() -> None:
    assert (ROOT / "docs" / "design.md").is_file()
    citing = [str(f.relative_to(ROOT)) for f in [*CITING, *(ROOT / "tests" / "data").rglob("*.yaml")] if "DESIGN" + ".md" in f.read_text("utf-8")]
    assert citing == []


def test_the_readme_indexes_every_docs_page() -> None:
    linked = {target.partition("#")[0] for target in LINK.findall((ROOT / "README.md").read_text("utf-8"))}
    assert sorted(f"docs/{page.name}" for page in PAGES[1:] if f"docs/{page.name}" not in linked) == []
