"""The browser backends' shared part: one headless Chromium per process on a thread of its own, driven by Playwright.

Threading: Playwright's sync API is bound to the thread that started it, and guitest runs cases in a
thread pool. So each process has one :class:`BrowserHost`: a dedicated thread that owns Playwright
and the browser and executes commands from a queue, one at a time. Any thread calls
:meth:`BrowserHost.call` with a function of Playwright objects; it runs on the browser thread and its
result (or exception) comes back. An environment holds one :class:`BrowserPage` (a browser context and
its page: one per concurrent episode) and does each of its steps in one call (action, settle,
screenshot, state read), so episodes running concurrently interleave step by step. Waiting (a ``wait``
action) happens in the caller's thread, never on the browser thread.

The browser: Debian's ``/usr/bin/chromium`` through ``executable_path`` (Playwright downloads
nothing), launched with :data:`LAUNCH_ARGS`. Override the path with ``env_options.executable`` or
``GUITEST_CHROMIUM``. A missing browser or Playwright is an :class:`EnvFailure` saying how to install it.
"""

from __future__ import annotations

import atexit
import base64
import collections
import concurrent.futures
import os
import queue
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

from ..live.actions import CLICK, DOUBLE_CLICK, DRAG, KEY, MOVE, RIGHT_CLICK, SCROLL, TYPE, Action
from ..live.keys import NAMED
from ..live.protocol import EnvFailure

DEFAULT_EXECUTABLE = "/usr/bin/chromium"
LAUNCH_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-smooth-scrolling",  # a wheel or arrow-key scroll lands at once: a screenshot never catches it on its way
)
INSTALL_BROWSER = "install Debian's Chromium with `apt-get install chromium` (or set GUITEST_CHROMIUM / env_options.executable to a Chromium binary)"
INSTALL_PLAYWRIGHT = "install it with `pip install 'guitest[live]'` (or `pip install playwright`; no `playwright install` is needed: guitest drives the system Chromium)"
CALL_TIMEOUT = 120.0  # seconds one browser command may take before the episode is an error
LOAD_WINDOW = 1.0  # seconds over which BrowserHost.load() measures how busy the browser thread is
NOTCH_PIXELS = 50  # CSS pixels per wheel notch (MiniWoB++'s own DEFAULT_SCROLL_AMOUNT)
PLAYWRIGHT_KEYS = {
    "ctrl": "Control", "shift": "Shift", "alt": "Alt", "meta": "Meta", "enter": "Enter", "tab": "Tab", "escape": "Escape",
    "backspace": "Backspace", "delete": "Delete", "space": "Space", "up": "ArrowUp", "down": "ArrowDown", "left": "ArrowLeft",
    "right": "ArrowRight", "home": "Home", "end": "End", "pageup": "PageUp", "pagedown": "PageDown", "insert": "Insert", "capslock": "CapsLock",
    **{f"f{i}": f"F{i}" for i in range(1, 13)},
}

T = TypeVar("T")


def executable(options: dict[str, Any] | None = None) -> str:
    """The Chromium binary: ``options["executable"]``, else ``GUITEST_CHROMIUM``, else :data:`DEFAULT_EXECUTABLE`."""
    return str((options or {}).get("executable") or os.environ.get("GUITEST_CHROMIUM") or DEFAULT_EXECUTABLE)


class BrowserHost:
    """One Chromium on a dedicated thread; :meth:`call` runs a function there. Start it with :func:`host`."""

    def __init__(self, executable_path: str, headless: bool = True) -> None:
        self.executable_path = executable_path
        self._queue: queue.Queue[tuple[Callable[..., Any], tuple[Any, ...], concurrent.futures.Future[Any]] | None] = queue.Queue()
        self._ready = threading.Event()
        self._error: EnvFailure | None = None
        self._playwright_error: type[BaseException] = RuntimeError
        self.browser: Any = None
        self._busy_lock = threading.Lock()
        self._calls: collections.deque[tuple[float, float]] = collections.deque()  # (start, end) of recent commands
        self._running_since: float | None = None
        self._thread = threading.Thread(target=self._run, args=(headless,), name="guitest-browser", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise self._error

    def _run(self, headless: bool) -> None:
        try:
            from playwright.sync_api import Error, sync_playwright
        except ImportError:
            self._error = EnvFailure(f"live browser tasks need Playwright, which is not installed: {INSTALL_PLAYWRIGHT}")
            self._ready.set()
            return
        self._playwright_error = Error
        if not os.path.isfile(self.executable_path) or not os.access(self.executable_path, os.X_OK):
            self._error = EnvFailure(f"no Chromium at {self.executable_path}: {INSTALL_BROWSER}")
            self._ready.set()
            return
        try:
            playwright = sync_playwright().start()
        except Exception as exc:  # noqa: BLE001 - any start-up failure is an environment failure with its message
            self._error = EnvFailure(f"Playwright could not start: {type(exc).__name__}: {exc}")
            self._ready.set()
            return
        try:
            self.browser = playwright.chromium.launch(executable_path=self.executable_path, headless=headless, args=list(LAUNCH_ARGS))
        except Exception as exc:  # noqa: BLE001
            playwright.stop()
            self._error = EnvFailure(f"Chromium at {self.executable_path} did not start: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}; {INSTALL_BROWSER}")
            self._ready.set()
            return
        self._ready.set()
        while True:
            item = self._queue.get()
            if item is None:
                break
            fn, args, future = item
            if future.set_running_or_notify_cancel():
                with self._busy_lock:
                    self._running_since = time.monotonic()
                try:
                    future.set_result(fn(*args))
                except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                    future.set_exception(exc)
                finally:
                    self._ran()
        while not self._queue.empty():  # commands that arrived while stopping are answered, not left waiting
            item = self._queue.get_nowait()
            if item is not None and item[2].set_running_or_notify_cancel():
                item[2].set_exception(EnvFailure("the browser was stopped"))
        try:
            self.browser.close()
        except Exception:  # noqa: BLE001 - a crashed browser cannot be closed; Playwright still stops
            pass
        finally:
            playwright.stop()

    def _ran(self) -> None:
        """Note the command that just ended (on the browser thread)."""
        end = time.monotonic()
        with self._busy_lock:
            if self._running_since is not None:
                self._calls.append((self._running_since, end))
            self._running_since = None
            while self._calls and self._calls[0][1] < end - LOAD_WINDOW:
                self._calls.popleft()

    def load(self) -> float:
        """The fraction of the last second the browser thread spent running commands (0..1). Every environment of
        the process shares this thread: near 1, another browser context adds no episodes per second, only work."""
        now = time.monotonic()
        since = now - LOAD_WINDOW
        with self._busy_lock:
            spans = list(self._calls)
            if self._running_since is not None:
                spans.append((self._running_since, now))
        return min(sum(max(0.0, end - max(start, since)) for start, end in spans) / LOAD_WINDOW, 1.0)

    @property
    def alive(self) -> bool:
        """Whether the browser thread runs (the browser itself may still have crashed: :meth:`connected`)."""
        return self._thread.is_alive()

    def connected(self) -> bool:
        """Whether the browser process still answers."""
        try:
            return bool(self.call(lambda: self.browser.is_connected(), timeout=10))
        except EnvFailure:
            return False

    def call(self, fn: Callable[..., T], *args: Any, timeout: float = CALL_TIMEOUT) -> T:
        """``fn(*args)`` run on the browser thread; a Playwright error or a timeout becomes an EnvFailure."""
        if not self.alive:
            raise EnvFailure("the browser has stopped (guitest.envs.shutdown was called, or it crashed)")
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._queue.put((fn, args, future))
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise EnvFailure(f"a browser command took longer than {timeout:g} s") from None
        except self._playwright_error as exc:
            raise EnvFailure(f"browser: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None

    def stop(self) -> None:
        """Close the browser and end its thread (waits up to 10 s)."""
        if self.alive:
            self._queue.put(None)
            self._thread.join(timeout=10)


_hosts: dict[tuple[str, bool], BrowserHost] = {}
_hosts_lock = threading.Lock()


def host(options: dict[str, Any] | None = None) -> BrowserHost:
    """This process's browser for ``options`` (``executable``, ``headless``), started on first use."""
    key = (executable(options), bool((options or {}).get("headless", True)))
    with _hosts_lock:
        running = _hosts.get(key)
        if running is not None and running.alive and not running.connected():
            running.stop()  # the browser crashed or was killed: start a new one
        if running is None or not running.alive:
            running = _hosts[key] = BrowserHost(*key)
        return running


def shutdown() -> None:
    """Close every browser this process started (safe to call twice)."""
    with _hosts_lock:
        for running in _hosts.values():
            running.stop()
        _hosts.clear()


atexit.register(shutdown)


@dataclass(frozen=True)
class Area:
    """The part of the page a screenshot shows, in CSS pixels, and the zoom (screenshot pixels per CSS pixel)."""

    x: float
    y: float
    width: float
    height: float
    scale: float

    @property
    def size(self) -> tuple[int, int]:
        """The screenshot's pixel size."""
        return (round(self.width * self.scale), round(self.height * self.scale))

    def to_css(self, point: tuple[float, float]) -> tuple[float, float] | None:
        """A screenshot pixel as a CSS pixel of the page; None when it lies outside the screenshot."""
        x, y = point
        w, h = self.size
        if not (0 <= x <= w and 0 <= y <= h):
            return None
        return (self.x + x / self.scale, self.y + y / self.scale)


class BrowserPage:
    """A browser context with one page, for one episode at a time, reused across episodes. ``init_scripts``: JavaScript
    every document of the context runs before its own scripts (after the caret's style sheet, HIDE_CARET_JS).

    :meth:`run` executes ``fn(page, *args)`` on the browser thread. The helpers below are meant to be
    called inside such a function (they take the Playwright page)."""

    def __init__(self, options: dict[str, Any], viewport: tuple[int, int], scale: float, init_scripts: tuple[str, ...] = ()) -> None:
        self.host = host(options)
        self.viewport = viewport
        self.scale = scale
        self._context, self.page = self.host.call(self._open, init_scripts)

    def _open(self, init_scripts: tuple[str, ...]) -> tuple[Any, Any]:
        """The context and its page; every document of the context runs HIDE_CARET_JS, then ``init_scripts``, before its own scripts."""
        context = self.host.browser.new_context(viewport={"width": self.viewport[0], "height": self.viewport[1]}, device_scale_factor=self.scale)
        for script in (HIDE_CARET_JS, *init_scripts):
            context.add_init_script(script)
        page = context.new_page()
        try:  # screenshots through the DevTools protocol directly (see screenshot())
            page._guitest_cdp = context.new_cdp_session(page)
        except Exception:  # noqa: BLE001 - not Chromium, or no CDP: Playwright's own screenshot
            page._guitest_cdp = None
        return context, page

    def load(self) -> float:
        """How busy the browser thread all contexts share was over the last second (:meth:`BrowserHost.load`)."""
        return self.host.load()

    def run(self, fn: Callable[..., T], *args: Any, timeout: float = CALL_TIMEOUT) -> T:
        """``fn(page, *args)`` on the browser thread (EnvFailure on a Playwright error or a closed page)."""
        if self.page is None:
            raise EnvFailure("this environment was closed")
        return self.host.call(fn, self.page, *args, timeout=timeout)

    def close(self) -> None:
        """Close the context (safe to call twice, and after the browser stopped)."""
        if self.page is None:
            return
        context, self.page = self._context, None
        if self.host.alive:
            try:
                self.host.call(context.close, timeout=10)
            except EnvFailure:
                pass


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
SCROLL_JS = "() => [window.scrollX, window.scrollY]"


def screenshot(page: Any, area: Area) -> bytes:
    """A PNG of ``area`` (viewport CSS pixels) at its zoom, on the browser thread, caret hidden (HIDE_CARET_JS).

    Taken with the DevTools protocol's ``Page.captureScreenshot`` (the clip moved by the page's scroll offset, as
    Playwright does) with ``optimizeForSpeed`` (faster PNG compression: the same pixels, lossless, larger files):
    Playwright's own ``page.screenshot`` adds a caret style, a fonts wait and round trips per shot, and with the
    slower compression MiniWoB++'s scripted episodes ran at 3.5-4.0 per second in two processes against 4.2-4.6
    (docs/bench.md). A page without a CDP session falls back to Playwright's."""
    cdp = getattr(page, "_guitest_cdp", None)
    if cdp is None:
        return page.screenshot(clip={"x": area.x, "y": area.y, "width": area.width, "height": area.height}, type="png", animations="allow", caret="hide")
    sx, sy = page.evaluate(SCROLL_JS)
    clip = {"x": area.x + sx, "y": area.y + sy, "width": area.width, "height": area.height, "scale": area.scale}
    return base64.b64decode(cdp.send("Page.captureScreenshot", {"format": "png", "clip": clip, "captureBeyondViewport": False, "optimizeForSpeed": True})["data"])


def perform(page: Any, action: Action, area: Area, pointer: tuple[float, float]) -> tuple[tuple[float, float], tuple[str, ...]]:
    """Execute ``action`` (points in screenshot pixels of ``area``) on the page (on the browser thread).

    Returns the pointer's new position (CSS pixels) and notes: ``outside_screen`` (a point outside the
    screenshot: nothing is done, an agent cannot see there), ``unknown_key``. ``wait``, ``done`` and
    ``fail`` do nothing here."""
    point = area.to_css(action.point) if action.point is not None else pointer
    end = area.to_css(action.end) if action.end is not None else None
    if point is None or (action.end is not None and end is None):
        return pointer, ("outside_screen",)
    mouse, keyboard = page.mouse, page.keyboard
    kind = action.kind
    if kind == CLICK:
        mouse.click(*point)
    elif kind == DOUBLE_CLICK:
        mouse.dblclick(*point)
    elif kind == RIGHT_CLICK:
        mouse.click(*point, button="right")
    elif kind == MOVE:
        mouse.move(*point)
    elif kind == DRAG and end is not None:
        mouse.move(*point)
        mouse.down()
        mouse.move(*end, steps=8)
        mouse.up()
        point = end
    elif kind == SCROLL:
        mouse.move(*point)
        mouse.wheel(action.scroll[0] * NOTCH_PIXELS, action.scroll[1] * NOTCH_PIXELS)
    elif kind == TYPE:  # any text arrives, non-ASCII too; a paste as one input event, without key events
        keyboard.insert_text(action.text) if action.paste else keyboard.type(action.text)
    elif kind == KEY:
        names = [PLAYWRIGHT_KEYS.get(k, k) for k in action.keys]
        if not names or any(k not in NAMED and len(k) != 1 for k in action.keys):
            return pointer, ("unknown_key",)
        keyboard.press("+".join(names))
    # the pointer moved again where it is: what the action changed under it (a cover shown, a menu closed) updates the
    # hover state now, with this input event, not at a later frame the step may or may not have waited for (a menu's
    # mouseleave timer then started before or after the settle looked, by the machine's speed)
    mouse.move(*point)
    return point, ()


def fresh_document(page: Any, url: str, wait_until: str = "load") -> None:
    """Load ``url`` as a new document that nothing of the page's earlier documents reaches, as a new context's first
    one (on the browser thread): through ``about:blank``. Straight from one page of a site to another (or the same) at
    a zoom of 2 or more, the new document's screens came out with other bytes in most tries when the old document had
    a change not yet painted (text a shade darker: its anti-aliasing, not the layout), so the same screen of the same
    episode differed by what had run before; two animation frames before leaving, hiding the old document, or the
    switches --disable-partial-raster, PaintHolding and RenderDocument did not help (docs/live.md, Determinism)."""
    page.goto("about:blank", wait_until="commit")
    page.goto(url, wait_until=wait_until)


def settle(page: Any, frames: int = 2) -> None:
    """Let the page paint what the last action changed: wait for ``frames`` animation frames (on the browser thread)."""
    if frames > 0:
        page.evaluate(
            "n => new Promise(done => { const tick = k => k <= 0 ? done() : requestAnimationFrame(() => tick(k - 1)); tick(n); })",
            frames,
        )


def capped_wait(seconds: float, limit: float) -> float:
    """Sleep ``seconds`` (at most ``limit``) in the caller's thread; returns the time slept."""
    slept = max(0.0, min(seconds, limit))
    if slept:
        time.sleep(slept)
    return slept
