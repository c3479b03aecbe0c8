"""Reading the HTML report's viewer data back, as the page's script reads it: its index and each case's detail, from
the page itself (a page that carries its data: ``html.render``) or from its data folder (``html.page_files``)."""

from __future__ import annotations

import html
import json
import re
import urllib.parse
from pathlib import Path
from typing import Any

DATA_META = re.compile(r'<meta name="guitest-data" content="([^"]*)"')
CALL = re.compile(r"^window\.guitestViewer\.(index|chunk)\((.*),JSON\.parse\('(.*)'\)\);\n$", re.S)
JS_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)", re.S)


def data_folder(page: Path) -> Path | None:
    """The data folder the page at ``page`` names (``<stem>_files/<token>``), or None for a page that carries its data."""
    found = DATA_META.search(page.read_text("utf-8"))
    return page.parent / urllib.parse.unquote(html.unescape(found.group(1))) if found else None


def data_root(page: Path) -> Path:
    """The folder the relative links of the page's data start from, as the viewer reads them: that of the page that
    wrote the data, two levels above its data folder (a run folder, for the latest and passed pages at the top of the
    report folder), or the page's own folder for a page that carries its data."""
    folder = data_folder(page)
    return page.parent if folder is None else folder.parent.parent


def _js_string(body: str) -> str:
    """The text of a single-quoted JavaScript string literal's body, as the browser reads it."""
    return JS_ESCAPE.sub(lambda m: chr(int(m.group(1)[1:], 16)) if len(m.group(1)) == 5 else m.group(1), body)


def _call(path: Path) -> list[Any]:
    """The arguments of the viewer call a data file makes (it must be exactly one call: its literal arguments, then
    its data as JSON parsed from a string literal)."""
    found = CALL.match(path.read_text("utf-8"))
    assert found, f"{path} is not one call of the viewer"
    return [*json.loads("[" + found.group(2) + "]"), json.loads(_js_string(found.group(3)))]


def viewer_data(page: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The index and every case's detail (in the index's order) of the page at ``page`` (a path), or of the page text
    ``page`` that carries its data."""
    if isinstance(page, Path) and (folder := data_folder(page)) is not None:
        token, index = _call(folder / "index.js")
        assert token == index["token"] == folder.name
        details: list[dict[str, Any]] = []
        for k in range(len(index["starts"])):
            got_token, number, chunk = _call(folder / "c" / f"{k}.js")
            assert (got_token, number) == (token, k)
            details += chunk
        return index, details
    text = page.read_text("utf-8") if isinstance(page, Path) else page
    blocks = dict(re.findall(r'<script type="application/json" id="gv-([a-z0-9-]+)">(.*?)</script>', text, re.S))
    index = json.loads(blocks["index"])
    details = []
    for k in range(len(index["starts"])):
        details += json.loads(blocks[f"chunk-{k}"])
    return index, details


def pictures(index: dict[str, Any]) -> dict[str, Any]:
    """Case id -> the source(s) of its picture in the case list (a string, or [link, fallback])."""
    return {c["id"]: index["pictures"][c["p"]] for c in index["cases"] if c["p"] >= 0}
