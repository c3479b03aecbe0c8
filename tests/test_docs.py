"""The documentation holds together, on GitHub and in the docs site (mkdocs.yml; docs/design.md, "The docs site").

The site's strict build (tox: ``properdocs build --strict``) fails on a link between pages to a page or file that does
not exist, on an anchor no heading of its page makes (by the site's rule) and on a page left out of the nav; a small
site built with its settings shows it does. These tests check what the build does not: the README's links (the README
is no page of the site), every page's anchors by GitHub's rule, links out of docs/ reaching their file, each page
rendering the same in the site as on GitHub, every "docs/PAGE.md, "Section"" that code, tests and docs cite naming a
heading of that page, the README and the site's front page each listing every page, and nothing citing design notes
outside the repository (docs/design.md is the project's own)."""

from __future__ import annotations

import importlib.util
import logging
import re
from collections import Counter
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
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


def broken_links(page: Path, *, files_in_docs: bool) -> list[str]:
    """The page's relative links whose file does not exist, and those whose anchor is none of GitHub's for that page;
    without ``files_in_docs``, a link to a file in docs/ is left to the site's build."""
    broken = []
    for target in LINK.findall(page.read_text("utf-8")):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            if files_in_docs or DOCS not in file.parents:
                broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading with that anchor in {file.relative_to(ROOT)} (by GitHub's rule)")
    return broken


def test_anchors_follow_githubs_rule(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text("# Shards: one suite, one `gate`\n\n```\n# not a heading\n```\n## Notes\n## Notes\n")
    assert anchors(page) == {"shards-one-suite-one-gate", "notes", "notes-1"}


def test_every_link_of_the_readme_reaches_its_file_and_heading() -> None:
    assert broken_links(ROOT / "README.md", files_in_docs=True) == []


@pytest.mark.parametrize("page", PAGES[1:], ids=lambda p: str(p.relative_to(ROOT)))
def test_a_pages_links_out_of_docs_reach_their_file_and_its_anchors_are_githubs_too(page: Path) -> None:
    assert broken_links(page, files_in_docs=False) == []


def test_every_cited_section_is_a_heading_of_its_page() -> None:
    wrong = []
    for file in CITING:
        text = file.read_text("utf-8")
        for page, section in CITATION.findall(text):
            target = DOCS / page
            if not target.is_file():
                wrong.append(f"{file.relative_to(ROOT)}: docs/{page} does not exist")
            elif not any(h.replace("`", "").startswith(" ".join(section.replace("`", "").split())) for h in sections(target)):
                wrong.append(f"{file.relative_to(ROOT)}: docs/{page} has no section {section!r}")
    assert wrong == []


def test_nothing_cites_design_notes_outside_the_repository() -> None:
    assert (DOCS / "design.md").is_file()
    citing = [str(f.relative_to(ROOT)) for f in [*CITING, *(ROOT / "tests" / "data").rglob("*.yaml")] if "DESIGN" + ".md" in f.read_text("utf-8")]
    assert citing == []


@pytest.mark.parametrize("index", ["README.md", "docs/index.md"])
def test_the_readme_and_the_sites_front_page_each_list_every_page(index: str) -> None:
    front = ROOT / index
    linked = {(front.parent / target.partition("#")[0]).resolve() for target in LINK.findall(front.read_text("utf-8"))}
    assert sorted(str(page.relative_to(ROOT)) for page in PAGES[1:] if page not in linked and page != front) == []


# -- the site renders each page as GitHub does ------------------------------------------------------------------------

#: the elements whose number tells how a page's blocks were read: lists and their items, code, tables, headings
STRUCTURE = ("ul", "ol", "li", "pre", "code", "table", "blockquote", "h1", "h2", "h3", "h4", "h5", "h6")


@cache
def _site_config() -> Any:
    from properdocs.config import load_config

    return load_config(str(ROOT / "mkdocs.yml"))


def structure(html: str) -> Counter[str]:
    """How many of each STRUCTURE element the HTML holds."""
    return Counter(tag for tag in re.findall(r"<(\w+)[\s>]", html) if tag in STRUCTURE)


def site_html(markdown_text: str) -> str:
    """The page as the site renders it: Python-Markdown with the site's Markdown extensions and their settings."""
    import markdown

    config = _site_config()
    return markdown.Markdown(extensions=config.markdown_extensions, extension_configs=config.mdx_configs).convert(markdown_text)


def github_html(markdown_text: str) -> str:
    """The page as GitHub renders it, near enough for its structure: CommonMark with tables (markdown-it-py)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").render(markdown_text)


def test_structure_tells_what_python_markdown_reads_otherwise() -> None:
    # a list right after a paragraph, and a code block indented for CommonMark's list item (2 + 4 spaces)
    text = "Steps:\n- one\n- two\n\nThen:\n\n- run\n\n      pytest suites/demo\n"
    assert (structure(github_html(text))["li"], structure(github_html(text))["pre"]) == (3, 1)
    assert (structure(site_html(text))["li"], structure(site_html(text))["pre"]) == (1, 0)


@pytest.mark.parametrize("page", PAGES[1:], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_page_renders_the_same_in_the_site_as_on_github(page: Path) -> None:
    text = page.read_text("utf-8")
    github, site = structure(github_html(text)), structure(site_html(text))
    differ = [f"<{tag}>: {github[tag]} on GitHub, {site[tag]} in the site" for tag in STRUCTURE if github[tag] != site[tag]]
    assert differ == [], (
        f"{page.relative_to(ROOT)} reads otherwise in the site; in a list item, indent a nested block (a paragraph, a code block, a list) "
        "by 4 spaces, put no fenced block there, and leave a blank line before a list or an item after a paragraph"
    )


# -- the site's own hook, and its strict settings ----------------------------------------------------------------------


def _hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("site_hooks", DOCS / "site_hooks.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_links_out_of_docs_become_their_text_in_the_site_and_a_missing_file_is_named(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("")
    page = "See [mod.py](../pkg/mod.py), [the package](../pkg/) and [`gone`](../pkg/gone.py#x), a page [here](other.md).\nCode: `[mod.py](../pkg/mod.py)`\n```\n[mod.py](../pkg/gone2.py)\n```\n"
    text, missing = _hooks().source_links(page, docs, docs)
    assert text.split("\n")[0] == "See mod.py, the package and `gone`, a page [here](other.md)."
    assert text.split("\n")[1:] == page.split("\n")[1:]
    assert missing == ["a link to '../pkg/gone.py#x', but there is no pkg/gone.py in the repository"]
    # a page one folder down: ../ stays inside docs/, ../../ leaves it
    text, missing = _hooks().source_links("[a](../a.md) [b](../../pkg/mod.py)", docs / "sub", docs)
    assert (text, missing) == ("[a](../a.md) b", [])


def test_the_sites_settings_fail_the_build_on_each_broken_reference(tmp_path: Path) -> None:
    from properdocs.commands.build import build
    from properdocs.config import load_config
    from properdocs.exceptions import Abort

    docs = tmp_path / "docs"
    docs.mkdir()
    (tmp_path / "real.py").write_text("")
    (docs / "index.md").write_text("# Home\n\n[b](b.md#the-part) [missing](missing.md) [anchor](b.md#nowhere) [real](../real.py) [source](../no_such_module.py)\n")
    (docs / "b.md").write_text("# B\n\n## The part\n")
    (docs / "orphan.md").write_text("# Left out of the nav\n")
    config = load_config(
        str(ROOT / "mkdocs.yml"),
        docs_dir=str(docs),
        site_dir=str(tmp_path / "site"),
        nav=["index.md", "b.md", "gone.md"],
        strict=True,
    )
    warnings: list[str] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: warnings.append(record.getMessage())  # type: ignore[method-assign]
    logging.getLogger("properdocs").addHandler(handler)
    try:
        with pytest.raises(Abort, match="5 warnings in strict mode"):
            build(config)
    finally:
        logging.getLogger("properdocs").removeHandler(handler)
    expected = [
        "contains a link 'missing.md', but the target is not found among documentation files",
        "contains a link 'b.md#nowhere', but the doc 'b.md' does not contain an anchor '#nowhere'",
        "a link to '../no_such_module.py', but there is no no_such_module.py in the repository",
        'not included in the "nav" configuration:\n  - orphan.md',
        "A reference to 'gone.md' is included in the 'nav' configuration, which is not found",
    ]
    assert [e for e in expected if not any(e in w for w in warnings)] == [], warnings
