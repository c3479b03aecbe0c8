"""The browser backends' shared part: this process's browsers, one headless Chromium launched here or a connection to
each browser on another host, started on first use and again when one was given up, and the browser a new page opens on.

A browser is driven on a thread of its own (:mod:`guitest.envs.browser.host`: :class:`BrowserHost`, its commands
run one at a time), each command within its deadline (:mod:`guitest.envs.browser.watchdog`), started by Playwright
(:mod:`guitest.envs.browser.launch`), its processes found, memory-bounded and ended through ``/proc``
(:mod:`guitest.envs.browser.processes`). An environment holds a page of it (:mod:`guitest.envs.browser.page`), and
does each step there (:mod:`guitest.envs.browser.steps`: an action, the paint settled, a screenshot).

Browsers on other hosts: ``env_options.browser_endpoints`` (``--browser-endpoint``, repeatable) lists browsers to
connect to instead of launching one, each through Playwright's own connect (:data:`ENDPOINT_FORMS`,
:func:`guitest.envs.browser.launch.connect`). Each endpoint is a :class:`BrowserHost` of its own (a connection and
its thread); a new page goes to the endpoint with the fewest of this process's pages, and the environment pool holds
at most ``episodes_per_endpoint`` (:data:`EPISODES_PER_ENDPOINT`) pages per endpoint in each process
(:func:`capacity`). Everything holds as for a local browser (a context per episode, the watchdog; abandoning a
remote browser drops the connection, which closes its contexts, instead of killing processes), but the memory bound:
that is the remote host's to set. An endpoint that cannot be reached, or whose browser went away and cannot be reached
again, is taken out for the rest of the run (:func:`remote_host`): the episodes on it end in an EnvFailure (an error,
which ``--lf`` runs again), the next pages go to the others, and when none is left each new episode's EnvFailure names
them all with why.
"""

from __future__ import annotations

import atexit
import collections
import threading
from typing import Any, Mapping

from ...live.protocol import EnvFailure
from ...secrets import redact_urls
from .host import BrowserHost
from .launch import executable
from .processes import PAGE_MEMORY_MB

#: default env_options.episodes_per_endpoint: pages (episodes at once) on one remote browser, per process
EPISODES_PER_ENDPOINT = 4
#: what a browser endpoint may be (see the module docstring)
ENDPOINT_FORMS = "http://HOST:PORT (a Chromium's DevTools endpoint, --remote-debugging-port), ws://HOST:PORT/devtools/browser/ID, or the ws:// URL of a Playwright browser server"

_hosts: dict[tuple[str, bool, int, str | None], BrowserHost] = {}
_hosts_lock = threading.RLock()  # re-entered when a browser that failed to start is abandoned inside host()
_out: dict[str, str] = {}  # endpoint -> why it was taken out (for the rest of the run)
_pages: collections.Counter[str] = collections.Counter()  # endpoint -> this process's open pages on it


def page_memory(options: Mapping[str, Any] | None) -> int:
    """``options["page_memory_mb"]`` (default :data:`~guitest.envs.browser.processes.PAGE_MEMORY_MB`) as a whole number
    of MB, 0 for no bound; EnvFailure naming the option."""
    value = (options or {}).get("page_memory_mb", PAGE_MEMORY_MB)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0 or (0 < value < 512):
        raise EnvFailure(f"env_options.page_memory_mb must be a whole number of MB, 512 or more (or 0: no bound), got {value!r}")
    return value


def host(options: Mapping[str, Any] | None = None, endpoint: str | None = None) -> BrowserHost:
    """This process's browser for ``options`` (``executable``, ``headless``, ``page_memory_mb``), or its connection to
    the remote browser at ``endpoint``, started on first use and again when the one before was abandoned, stopped, or
    seen gone by Playwright (killed, crashed, disconnected)."""
    key = (executable(options), bool((options or {}).get("headless", True)), page_memory(options), endpoint)
    with _hosts_lock:
        running = _hosts.get(key)
        if running is not None and running.connected():
            return running
        _hosts.pop(key, None)
    if running is not None:
        running.stop()  # the browser crashed or was killed: its thread ends, a new one starts
    with _hosts_lock:
        running = _hosts.get(key)  # another thread may have started one meanwhile
        if running is None or not running.connected():
            running = _hosts[key] = BrowserHost(*key, on_abandon=_forget)
        return running


def endpoints(options: Mapping[str, Any] | None) -> tuple[str, ...]:
    """``options["browser_endpoints"]`` (a URL or a list), each checked to be a form of :data:`ENDPOINT_FORMS`, in order
    and without repeats; EnvFailure naming one that is not."""
    given = (options or {}).get("browser_endpoints") or ()
    if isinstance(given, str):
        given = [given]
    out: list[str] = []
    for each in given:
        url = str(each).strip()
        if not url.startswith(("http://", "https://", "ws://", "wss://")):
            raise EnvFailure(f"browser endpoint {redact_urls(url)!r}: expected {ENDPOINT_FORMS}")
        out.append(url)
    return tuple(dict.fromkeys(out))


def episodes_per_endpoint(options: Mapping[str, Any] | None) -> int:
    """``options["episodes_per_endpoint"]`` (default :data:`EPISODES_PER_ENDPOINT`); EnvFailure naming the option."""
    value = (options or {}).get("episodes_per_endpoint", EPISODES_PER_ENDPOINT)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise EnvFailure(f"env_options.episodes_per_endpoint (--browser-episodes) must be a whole number, 1 or more, got {value!r}")
    return value


def capacity(options: Mapping[str, Any] | None) -> int | None:
    """The most pages this process may hold on its remote browsers (None: a local browser, bounded by the pool alone)."""
    urls = endpoints(options)
    return len(urls) * episodes_per_endpoint(options) if urls else None


def remote_host(options: Mapping[str, Any]) -> BrowserHost:
    """The connection to the remote browser a new page goes to: of the endpoints not taken out, the one with the fewest
    of this process's pages (the first listed on a tie). One that cannot be reached is taken out and the next tried;
    EnvFailure naming every endpoint with why when none is left."""
    urls = endpoints(options)
    while True:
        with _hosts_lock:
            left = [url for url in urls if url not in _out]
            if not left:
                why = "; ".join(f"{redact_urls(url)}: {_out[url]}" for url in urls)
                raise EnvFailure(f"no browser endpoint is left (each was taken out for this run: {why}); start or fix them and re-run the episodes that failed with --lf")
            chosen = min(left, key=lambda url: _pages[url])
        try:
            return host(options, chosen)
        except EnvFailure as exc:
            with _hosts_lock:
                _out.setdefault(chosen, str(exc))


def page_host(options: Mapping[str, Any]) -> BrowserHost:
    """The browser a new page opens on: a remote one when ``options`` list endpoints, else this process's own."""
    return remote_host(options) if endpoints(options) else host(options)


def counted(endpoint: str | None, change: int) -> None:
    """Count a page opened (``change`` 1) or closed (-1) on the remote browser at ``endpoint`` (None: a local one, not counted)."""
    if endpoint is not None:
        with _hosts_lock:
            _pages[endpoint] += change


def _forget(gone: BrowserHost) -> None:
    """Let :func:`host` start a new browser in place of ``gone``."""
    with _hosts_lock:
        for key, running in list(_hosts.items()):
            if running is gone:
                del _hosts[key]


def shutdown() -> None:
    """Close every browser this process started, and its connections to remote ones, which may be tried again after it
    (safe to call twice)."""
    with _hosts_lock:
        running = list(_hosts.values())
        _hosts.clear()
        _out.clear()
        _pages.clear()
    for each in running:
        each.stop()


atexit.register(shutdown)
