"""A page of a browser for an environment: :class:`BrowserPage`, a browser context with one page, for one episode at a
time, driven through its browser's thread; and :class:`OnBrowserPage`, what an environment on one does the same
whatever its pages.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Mapping, TypeVar

from ...live.protocol import EnvFailure
from . import counted, page_host
from .host import BrowserHost, on_loop
from .watchdog import CALL_TIMEOUT
from ..options import seconds_option

T = TypeVar("T")

# on every document of a context: the text caret is transparent (it blinks, so a screenshot that showed it would make
# the same screen of the same episode differ from run to run, and miss the per-step cache). A constructed style sheet,
# not a <style> element: a page whose Content-Security-Policy forbids inline styles (style-src without 'unsafe-inline',
# common in real web apps) refuses the element but not an adopted sheet, and the page's DOM gains no node of ours.
# The sheet is window.__guitestHideCaret; it is adopted again at DOMContentLoaded if the page's scripts replaced the list.
HIDE_CARET_JS = """(() => {
  if (window.__guitestHideCaret) return;
  const sheet = new CSSStyleSheet();
  sheet.replaceSync('*, *::before, *::after { caret-color: transparent !important; }');
  Object.defineProperty(window, '__guitestHideCaret', {value: sheet});
  const adopt = () => {
    if (!document.adoptedStyleSheets.includes(sheet)) document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
  };
  adopt();
  document.addEventListener('DOMContentLoaded', adopt);
})();"""


class OnBrowserPage:
    """What an environment on one :class:`BrowserPage` (``self.browser``) does the same whatever its pages: the
    environment pool's questions and closing."""

    browser: BrowserPage

    def load(self) -> float:
        """How busy the browser thread this environment shares is (EnvPool grows only while it has time to spare)."""
        return self.browser.load()

    def usable(self) -> bool:
        """Whether the next episode can run here (EnvPool replaces an idle environment that is not: its page crashed or
        its browser was ended)."""
        return self.browser.usable()

    def software(self) -> dict[str, list[str]]:
        """What the environment runs on, for the run's manifest: the browser of its page, as that browser says
        (``{"browser": ["chromium 131.0.6778.85"]}``); {} when it did not say."""
        said = self.browser.host.software
        return {"browser": [said]} if said else {}

    def close(self) -> None:
        """Close this environment's browser context."""
        self.browser.close()


class BrowserPage:
    """A browser context with one page, for one episode at a time, reused across episodes. ``init_scripts``: JavaScript
    every document of the context runs before its own scripts (after the caret's style sheet, HIDE_CARET_JS).
    ``options``: ``executable``, ``headless`` (which browser) and ``command_timeout`` (seconds one command may run,
    :data:`CALL_TIMEOUT`).

    :meth:`run` executes ``fn(page, *args)`` on the browser thread. The helpers of :mod:`guitest.envs.browser.steps` are
    meant to be called inside such a function (they take the Playwright page)."""

    def __init__(self, options: Mapping[str, Any], viewport: tuple[int, int], scale: float, init_scripts: tuple[str, ...] = ()) -> None:
        self.command_timeout = seconds_option(options, "command_timeout", CALL_TIMEOUT)
        self.viewport = viewport
        self.scale = scale
        self.gone: str | None = None  # "crashed" or "closed": Playwright's page events, seen on the browser thread
        self.host: BrowserHost = page_host(options)
        try:
            opened = self.host.call(self._open, init_scripts, timeout=self.command_timeout)
        except EnvFailure:
            if self.host.connected():
                raise
            # the browser had gone before Playwright said so (killed while its thread was idle): once more, on a new one
            self.host = page_host(options)
            opened = self.host.call(self._open, init_scripts, timeout=self.command_timeout)
        self._context, self.page, self._cdp = opened
        counted(self.host.endpoint, 1)
        self._page = self.page  # kept after close(), for interrupt() and discard()

    def _open(self, init_scripts: tuple[str, ...]) -> tuple[Any, Any, Any]:
        """The context, its page and the page's DevTools session; every document of the context runs HIDE_CARET_JS, then
        ``init_scripts``, before its own scripts."""
        context = self.host.browser.new_context(viewport={"width": self.viewport[0], "height": self.viewport[1]}, device_scale_factor=self.scale)
        for script in (HIDE_CARET_JS, *init_scripts):
            context.add_init_script(script)
        page = context.new_page()
        page.on("crash", lambda _page: setattr(self, "gone", "crashed"))
        page.on("close", lambda _page: setattr(self, "gone", self.gone or "closed"))
        try:  # screenshots through the DevTools protocol directly (steps.screenshot); the watchdog stops scripts with it
            page._guitest_cdp = context.new_cdp_session(page)
        except Exception:  # noqa: BLE001 - not Chromium, or no CDP: Playwright's own screenshot
            page._guitest_cdp = None
        return context, page, page._guitest_cdp

    def load(self) -> float:
        """How busy the browser thread all contexts share was over the last second (:meth:`BrowserHost.load`)."""
        return self.host.load()

    def usable(self) -> bool:
        """Whether the next episode can run here: not closed, the page neither crashed nor closed (the watchdog closes
        a page it cannot otherwise stop), its browser neither abandoned nor gone."""
        return self.page is not None and self.gone is None and self.host.connected()

    def run(self, fn: Callable[..., T], *args: Any, timeout: float | None = None) -> T:
        """``fn(page, *args)`` on the browser thread, at most ``timeout`` seconds (default ``command_timeout``) from when
        it starts there; EnvFailure on a Playwright error, a closed page or an overrun (this page is stopped: its script,
        then the page itself, see :mod:`guitest.envs.browser.watchdog`)."""
        if self.page is None:
            raise EnvFailure("this environment was closed")
        return self.host.call(fn, self.page, *args, timeout=self.command_timeout if timeout is None else timeout, owner=self)

    def bounded(self, seconds: float) -> contextlib.AbstractContextManager[None]:
        """Inside a function :meth:`run` runs: the ``with`` block may take ``seconds`` at most, or its script is stopped
        and :class:`~guitest.envs.browser.watchdog.Overran` raised (:meth:`BrowserHost.bounded`)."""
        return self.host.bounded(seconds)

    def interrupt(self) -> bool:
        """From the watchdog: terminate the JavaScript this page runs now (DevTools ``Runtime.terminateExecution``; the
        page stays usable). False when it cannot be sent."""
        cdp = self._cdp
        return cdp is not None and on_loop(self._page, lambda: cdp.send("Runtime.terminateExecution"))

    def discard(self) -> bool:
        """From the watchdog: close this page's browser context, so every call waiting on the page fails (the other
        contexts and the browser go on). False when it cannot be done."""
        return on_loop(self._page, self._context.close)

    def close(self) -> None:
        """Close the context (safe to call twice, and after the browser stopped)."""
        if self.page is None:
            return
        context, self.page = self._context, None
        counted(self.host.endpoint, -1)
        if self.host.alive:
            try:
                self.host.call(context.close, timeout=min(10.0, self.command_timeout), owner=self)
            except EnvFailure:
                pass
