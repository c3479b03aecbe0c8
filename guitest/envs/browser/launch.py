"""A browser started, on the browser thread: Playwright, then Debian's Chromium launched here or a browser on another
host connected to; what to install or check when it cannot be had.

The browser: Debian's ``/usr/bin/chromium`` through ``executable_path`` (Playwright downloads
nothing), launched with :data:`LAUNCH_ARGS`. Override the path with ``env_options.executable`` or
``GUITEST_CHROMIUM``. A missing browser or Playwright is an :class:`EnvFailure` saying how to install it.

A browser on another host (``env_options.browser_endpoints``, :mod:`guitest.envs.browser`) is reached through Playwright's
own connect: a Chromium's DevTools endpoint (``http://HOST:PORT`` of a Chromium started with
``--remote-debugging-port``, or its ``ws://.../devtools/browser/ID``) through ``connect_over_cdp``, any other ``ws://``
URL (a Playwright browser server, ``launchServer`` or ``playwright run-server``) through ``connect``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ...live.protocol import EnvFailure
from ...secrets import redact_urls
from .processes import limit_renderers, marked

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
START_TIMEOUT = 90.0  # seconds Playwright and Chromium may take to start (Playwright's own launch timeout is 30 s)
CONNECT_TIMEOUT = 30.0  # seconds Playwright may take to connect to a remote browser


def executable(options: Mapping[str, Any] | None = None) -> str:
    """The Chromium binary: ``options["executable"]``, else ``GUITEST_CHROMIUM``, else :data:`DEFAULT_EXECUTABLE`."""
    return str((options or {}).get("executable") or os.environ.get("GUITEST_CHROMIUM") or DEFAULT_EXECUTABLE)


def what_to_check(endpoint: str | None) -> str:
    """What to check when a browser cannot be had: the local one (``endpoint`` None), or the one at ``endpoint``."""
    if endpoint is None:
        return INSTALL_BROWSER
    return (
        "check that the browser runs there and this host can reach it (a Chromium started with --remote-debugging-port "
        "and --remote-debugging-address, or a Playwright browser server of a version this Playwright can connect to)"
    )


@dataclass(frozen=True)
class Started:
    """A browser started (see :func:`start`): Playwright, the browser, Playwright's error class, the browser's name and
    version as it says them, its process (None for a remote browser, or where /proc cannot be read), and whether the
    memory bound holds (:func:`guitest.envs.browser.processes.limit_renderers`)."""

    playwright: Any
    browser: Any
    error: type[BaseException]
    software: str | None
    pid: int | None
    memory_bound: bool


def start(executable_path: str, headless: bool, memory_mb: int, endpoint: str | None, marker: str, where: str, on_disconnect: Callable[[], None]) -> Started:
    """Playwright and a browser, on the calling thread (the browser thread: Playwright's sync API stays bound to it): the
    Chromium at ``executable_path`` launched with :data:`LAUNCH_ARGS` and the switch ``marker``, its pages' memory
    bounded to ``memory_mb`` MB (0: no bound), or the browser at ``endpoint`` connected to. ``on_disconnect`` is called
    (on that thread) when Playwright sees the browser go. EnvFailure saying what to install or check (``where``: the
    browser, as its messages name it)."""
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        raise EnvFailure(f"live browser tasks need Playwright, which is not installed: {INSTALL_PLAYWRIGHT}") from None
    if endpoint is None and (not os.path.isfile(executable_path) or not os.access(executable_path, os.X_OK)):
        raise EnvFailure(f"no Chromium at {executable_path}: {INSTALL_BROWSER}")
    try:
        playwright = sync_playwright().start()
    except Exception as exc:  # noqa: BLE001 - any start-up failure is an environment failure with its message
        raise EnvFailure(f"Playwright could not start: {type(exc).__name__}: {exc}") from None
    try:
        if endpoint is not None:
            browser = connect(playwright.chromium, endpoint)
        else:
            browser = playwright.chromium.launch(executable_path=executable_path, headless=headless, args=[*LAUNCH_ARGS, marker])
        browser.on("disconnected", lambda _browser: on_disconnect())
        software = _software(browser)
    except Exception as exc:  # noqa: BLE001
        playwright.stop()
        said = redact_urls(first_line(exc))
        raise EnvFailure(f"{where} could not be reached: {said}; {what_to_check(endpoint)}" if endpoint else f"{where} did not start: {said}; {INSTALL_BROWSER}") from None
    pid = None if endpoint is not None else next(iter(marked(marker)), None)
    bound = limit_renderers(pid, memory_mb << 20) if memory_mb and pid is not None else False
    return Started(playwright, browser, Error, software, pid, bound)


def over_cdp(endpoint: str) -> bool:
    """Whether ``endpoint`` is a Chromium's DevTools endpoint (``connect_over_cdp``) rather than a Playwright server's."""
    return endpoint.startswith(("http://", "https://")) or "/devtools/browser/" in endpoint


def connect(chromium: Any, endpoint: str) -> Any:
    """Playwright's own connection to the browser at ``endpoint`` (on the browser thread)."""
    timeout_ms = CONNECT_TIMEOUT * 1000
    if over_cdp(endpoint):
        return chromium.connect_over_cdp(endpoint, timeout=timeout_ms)
    return chromium.connect(endpoint, timeout=timeout_ms)


def _software(browser: Any) -> str | None:
    """The browser's name and version as Playwright has them from the browser itself (no command is sent): a remote
    browser's are its own, not this host's."""
    try:
        return f"{browser.browser_type.name} {browser.version}"
    except Exception:  # noqa: BLE001 - a browser that does not say: its version is not recorded, the episode goes on
        return None


def first_line(exc: BaseException) -> str:
    """An exception's message's first line (its type's name when it has none)."""
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
