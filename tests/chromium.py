"""Debian's Chromium for the tests that open a page, through Playwright with ``executable_path`` (Playwright's own
browser download is never needed). CI (tox) installs it with tests/setup_browser.sh and sets
GUITEST_REQUIRE_BROWSER, so there a missing browser fails; elsewhere it skips the test."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any, Iterator

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]


@contextlib.contextmanager
def launched() -> Iterator[Any]:
    """A launched Chromium (Playwright's Browser), closed on leaving."""
    missing = pytest.fail if os.environ.get("GUITEST_REQUIRE_BROWSER") else pytest.skip
    if not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)):
        missing(f"{CHROMIUM} not found: install Debian's chromium (apt-get install -y chromium) to run the browser test")
    try:
        from playwright import sync_api
    except ImportError:
        missing("the playwright package is not installed (pip install playwright; no 'playwright install' needed)")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()
