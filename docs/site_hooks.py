"""The docs site's one hook (mkdocs.yml, ``hooks``): links from a page to files of the repository outside docs/.

docs/design.md links the modules it describes (``[suite.py](../guitest/suite.py)``): in a clone, on GitHub or in an
editor, such a link opens the file. The site holds no copy of the source, so there the link becomes its text, and a
link whose file does not exist is a warning, which fails the strict build as a broken link between pages does (those
are the build's own to check: mkdocs.yml, ``validation``). Links inside code (fenced blocks, backticks) are left as
they are.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from typing import Any

#: under the build's logger, so that a warning counts in --strict
LOG = logging.getLogger("properdocs.hooks.site_hooks")
#: a Markdown link whose target starts by leaving the page's folder ([text](../path), [text](../path#anchor)), or a
#: code span, whose text is no link (whichever starts first)
LINK_OR_CODE = re.compile(r"\[((?:[^\]`]|`[^`]*`)*)\]\((\.\./[^)\s]*)\)|(`+).*?\3")
FENCE = re.compile(r"^\s*(```|~~~)")


def source_links(markdown: str, page_dir: Path, docs_dir: Path) -> tuple[str, list[str]]:
    """The page's Markdown with every link to a path outside ``docs_dir`` replaced by the link's text, and a message
    for each such link whose file or folder does not exist (naming the link and the path it resolved to, relative to
    the folder above ``docs_dir``). Links that
    stay inside ``docs_dir``, and anything in fenced code blocks or code spans, are left unchanged."""
    docs_dir = docs_dir.resolve()
    missing: list[str] = []

    def replace(match: re.Match[str]) -> str:
        if match.group(3):
            return match.group(0)
        text, target = match.group(1), match.group(2)
        path = (page_dir / target.partition("#")[0]).resolve()
        if path == docs_dir or docs_dir in path.parents:
            return match.group(0)
        if not path.exists():
            missing.append(f"a link to '{target}', but there is no {os.path.relpath(path, docs_dir.parent)} in the repository")
        return text

    out, fenced = [], False
    for line in markdown.split("\n"):
        if FENCE.match(line):
            fenced = not fenced
        out.append(line if fenced else LINK_OR_CODE.sub(replace, line))
    return "\n".join(out), missing


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """The build's hook: :func:`source_links` on each page, its messages logged as warnings naming the page."""
    docs_dir = Path(config["docs_dir"])
    text, missing = source_links(markdown, (docs_dir / page.file.src_uri).parent, docs_dir)
    for message in missing:
        LOG.warning("Doc file '%s' contains %s", page.file.src_uri, message)
    return text
