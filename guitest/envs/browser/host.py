"""One browser on a thread of its own, driven by Playwright: :class:`BrowserHost`.

Threading: Playwright's sync API is bound to the thread that started it, and guitest runs cases in a
thread pool. So each browser has one :class:`BrowserHost`: a dedicated thread that owns Playwright
and the browser and executes commands from a queue, one at a time. Any thread calls
:meth:`BrowserHost.call` with a function of Playwright objects; it runs on the browser thread and its
result (or exception) comes back. An environment holds one :class:`~guitest.envs.browser.page.BrowserPage` (a browser
context and its page: one per concurrent episode) and does each of its steps in one call (action, settle,
screenshot, state read), so episodes running concurrently interleave step by step. Waiting (a ``wait``
action) happens in the caller's thread, never on the browser thread.

Deadlines: each command runs within its deadline, kept by the host's watchdog (:mod:`guitest.envs.browser.watchdog`),
whose last step gives the whole browser up: its processes are killed (found by :attr:`BrowserHost.marker`, a switch
only this host's Chromium carries, :mod:`guitest.envs.browser.processes`; a remote browser's connection is dropped,
which closes its contexts, instead), every command waiting for it fails at once, and
:func:`guitest.envs.browser.host` starts a new one. A command whose browser was killed or disconnected (Playwright's
``disconnected``) fails with an EnvFailure too.
"""

from __future__ import annotations

import collections
import contextlib
import os
import queue
import secrets
import threading
import time
from typing import Any, Callable, TypeVar

from ...live.protocol import EnvFailure
from ...secrets import redact_urls
from .launch import START_TIMEOUT, first_line, start, what_to_check
from .processes import PAGE_MEMORY_MB, end_processes, holds
from .watchdog import CALL_TIMEOUT, Command, Owner, Watchdog, settle

LOAD_WINDOW = 1.0  # seconds over which BrowserHost.load() measures how busy the browser thread is

T = TypeVar("T")


class BrowserHost:
    """One Chromium on a dedicated thread; :meth:`call` runs a function there, within its deadline (see the module
    docstring). Start it with :func:`guitest.envs.browser.host`, which passes ``on_abandon``: called with the host once
    its browser is given up."""

    def __init__(self, executable_path: str, headless: bool = True, memory_mb: int = PAGE_MEMORY_MB, endpoint: str | None = None, on_abandon: Callable[[BrowserHost], None] | None = None) -> None:
        self.executable_path = executable_path
        self.headless = headless
        self.memory_mb = memory_mb
        self.endpoint = endpoint  # a remote browser's (guitest.envs.browser); None: a Chromium launched here
        self.where = f"the browser at {redact_urls(endpoint)}" if endpoint else f"Chromium at {executable_path}"
        self.memory_bound = False  # whether the bound holds, once started (Linux, a zygote found)
        # on this host's browser process only (Chromium ignores a switch it does not know and passes it to no child):
        # how the watchdog finds the processes to end, and never another's
        self.marker = f"--guitest-browser={os.getpid()}-{secrets.token_hex(8)}"
        self._on_abandon = on_abandon
        self._queue: queue.Queue[Command | None] = queue.Queue()
        self._ready = threading.Event()
        self._error: EnvFailure | None = None
        self._playwright_error: type[BaseException] = RuntimeError
        self.browser: Any = None
        self.software: str | None = None  # the browser's name and version as it says them once started ("chromium 131.0.6778.85")
        self.pid: int | None = None  # the browser process (None where /proc cannot be read)
        self._lock = threading.Condition()  # guards what follows; the watchdog waits on it
        self._abandoned: str | None = None  # why, once the browser was given up
        self._finished = False  # the browser thread has ended
        self._disconnected = False  # Playwright saw the browser go (killed, crashed, closed)
        self._calls: collections.deque[tuple[float, float]] = collections.deque()  # (start, end) of recent commands
        self._running_since: float | None = None
        self._watchdog = Watchdog(self._lock, lambda: self._abandoned is not None or self._finished, self._abandon)
        self._thread = threading.Thread(target=self._run, args=(headless,), name="guitest-browser", daemon=True)
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT):
            self._abandon(f"{self.where} did not start within {START_TIMEOUT:g} s")
            raise EnvFailure(f"{self.where} did not start within {START_TIMEOUT:g} s; {what_to_check(self.endpoint)}")
        if self._error is not None:
            raise self._error
        self._watchdog.start()

    # -- the browser thread ----------------------------------------------------------------------

    def _run(self, headless: bool) -> None:
        try:
            started = start(self.executable_path, headless, self.memory_mb, self.endpoint, self.marker, self.where, self._lost)
        except EnvFailure as exc:
            self._error = exc
            self._ready.set()
            return
        self._playwright_error = started.error
        self.browser, self.software, self.pid, self.memory_bound = started.browser, started.software, started.pid, started.memory_bound
        self._ready.set()
        try:
            self._serve()
        finally:
            with self._lock:
                self._finished = True
                self._lock.notify_all()
            self._fail_waiting("the browser was stopped" if self._abandoned is None else self._abandoned)
            try:
                if self._abandoned is None:  # an abandoned browser was killed: there is nothing to close
                    self.browser.close()
            except Exception:  # noqa: BLE001 - a crashed browser cannot be closed; Playwright still stops
                pass
            finally:
                started.playwright.stop()

    def _serve(self) -> None:
        """Run commands from the queue until a None, or until the browser is abandoned."""
        while True:
            command = self._queue.get()
            if command is None or self._abandoned is not None:
                if command is not None:
                    settle(command.future, error=EnvFailure(self._abandoned or "the browser was stopped"))
                return
            if not command.future.set_running_or_notify_cancel():
                continue
            now = time.monotonic()
            with self._lock:
                self._watchdog.begin(command, now)
                self._running_since = now
            try:
                settle(command.future, command.fn(*command.args))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                settle(command.future, error=exc)
            finally:
                self._ran()

    def _ran(self) -> None:
        """Note the command that just ended (on the browser thread)."""
        end = time.monotonic()
        with self._lock:
            self._watchdog.current = None
            if self._running_since is not None:
                self._calls.append((self._running_since, end))
            self._running_since = None
            while self._calls and self._calls[0][1] < end - LOAD_WINDOW:
                self._calls.popleft()

    def _lost(self) -> None:
        """Playwright's ``disconnected`` (on the browser thread): the browser process is gone; commands in flight fail."""
        with self._lock:
            self._disconnected = True

    def _fail_waiting(self, why: str) -> None:
        """Fail every command still queued (they would otherwise wait for a thread that no longer serves them)."""
        while True:
            try:
                command = self._queue.get_nowait()
            except queue.Empty:
                return
            if command is not None:
                settle(command.future, error=EnvFailure(why))

    def bounded(self, seconds: float) -> contextlib.AbstractContextManager[None]:
        """On the browser thread, inside a command: the ``with`` block may run ``seconds`` more at most
        (:meth:`guitest.envs.browser.watchdog.Watchdog.bounded`)."""
        return self._watchdog.bounded(seconds)

    def _abandon(self, why: str) -> None:
        """Give this browser up (from any thread): fail the running and every waiting command with ``why``, end its
        processes (so the browser thread, blocked in Playwright, unwinds), and let :func:`guitest.envs.browser.host`
        start a new one."""
        with self._lock:
            if self._abandoned is not None:
                return
            self._abandoned = why
            running = self._watchdog.current
            self._lock.notify_all()
        if self._on_abandon is not None:
            self._on_abandon(self)
        if running is not None:
            settle(running.future, error=EnvFailure(why))
        self._fail_waiting(f"the browser was ended before this command ran: {why}")
        self._queue.put(None)
        if self.endpoint is not None and self.browser is not None:  # nothing of it runs here: drop the connection
            on_loop(self.browser, self.browser.close)
        else:
            end_processes(self.marker)

    # -- for any thread --------------------------------------------------------------------------

    def load(self) -> float:
        """The fraction of the last second the browser thread spent running commands (0..1). Every environment of
        the process shares this thread: near 1, another browser context adds no episodes per second, only work."""
        now = time.monotonic()
        since = now - LOAD_WINDOW
        with self._lock:
            spans = list(self._calls)
            if self._running_since is not None:
                spans.append((self._running_since, now))
        return min(sum(max(0.0, end - max(start, since)) for start, end in spans) / LOAD_WINDOW, 1.0)

    @property
    def alive(self) -> bool:
        """Whether the browser thread serves commands (the browser itself may have gone: :meth:`connected`)."""
        return self._abandoned is None and not self._finished and self._thread.is_alive()

    def connected(self) -> bool:
        """Whether the browser thread serves commands, Playwright has not seen the browser go, and its process is there
        (no round trip: Playwright learns of a browser killed while its thread was idle only at the next command)."""
        with self._lock:
            gone = self._disconnected
        return self.alive and not gone and (self.pid is None or holds(self.pid, self.marker))

    def call(self, fn: Callable[..., T], *args: Any, timeout: float = CALL_TIMEOUT, owner: Owner | None = None) -> T:
        """``fn(*args)`` run on the browser thread, at most ``timeout`` seconds from when it starts there (the commands
        before it in the queue run first). A Playwright error, an overrun (the watchdog then stops ``owner``'s page, or
        the browser) and a browser that is gone become an EnvFailure."""
        if not self.alive:
            raise EnvFailure(self._abandoned or "the browser has stopped (guitest.envs.shutdown was called, or it crashed)")
        command = Command(fn, args, timeout, owner)
        self._queue.put(command)
        if not self.alive:  # abandoned or stopped between the check and the put: nobody will take it
            settle(command.future, error=EnvFailure(self._abandoned or "the browser has stopped"))
        try:
            value = command.future.result()
        except EnvFailure:
            raise
        except self._playwright_error as exc:
            if command.steps:
                raise EnvFailure(command.overran()) from None
            said = first_line(exc)
            if (owner is not None and owner.gone == "crashed") or "crashed" in said.lower():
                raise EnvFailure(self.crashed(said)) from None
            if self.endpoint is not None and not self.connected():
                raise EnvFailure(f"{self.where} went away ({said}); re-run this episode with --lf (the next pages go to the endpoints left)") from None
            raise EnvFailure(f"browser: {said}") from None
        if command.steps:  # it returned only as the watchdog acted: what it did may still reach the page
            raise EnvFailure(command.overran())
        return value

    def crashed(self, said: str) -> str:
        """The message of a command whose page crashed (``said``: Playwright's words)."""
        if not self.memory_bound:
            return f"the page's renderer crashed ({said}); the next episode gets a new page"
        return (
            f"the page's renderer crashed ({said}): a page that takes more than env_options.page_memory_mb "
            f"({self.memory_mb} MB) of memory is ended so, the likely cause; the next episode gets a new page (re-run this one "
            "with --lf, or raise page_memory_mb for a page that needs more)"
        )

    def stop(self) -> None:
        """Close the browser and end its thread (waits up to 10 s; a browser thread that does not end is abandoned)."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join(timeout=10)
            if self._thread.is_alive():
                self._abandon("the browser did not close within 10 s and was ended")
        with self._lock:
            self._finished = True
            self._lock.notify_all()


def on_loop(owner: Any, fn: Callable[[], Any]) -> bool:
    """Run ``fn`` (sync Playwright calls) on the browser thread while a command blocks it (``owner``: a Playwright object
    of that thread, a page or the browser). Playwright's sync API runs its event loop on that thread whenever a call
    waits, in a greenlet of its own; ``fn`` is scheduled on that loop in a new greenlet, as Playwright runs event
    handlers. The loop is Playwright's private ``_loop``: when it is missing (another Playwright version) or closed,
    False, and the watchdog takes its next step."""
    loop = getattr(owner, "_loop", None)
    if loop is None:
        return False

    def in_a_greenlet() -> None:
        import greenlet  # noqa: PLC0415 - Playwright's own dependency, present whenever a page exists

        def body() -> None:
            try:
                fn()
            except Exception:  # noqa: BLE001 - the page or the browser may be gone already: the next step follows
                pass

        greenlet.greenlet(body).switch()

    try:
        loop.call_soon_threadsafe(in_a_greenlet)
    except RuntimeError:  # the loop is closed: Playwright has stopped
        return False
    return True
