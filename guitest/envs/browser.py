"""The browser backends' shared part: one headless Chromium per process on a thread of its own, driven by Playwright.

Threading: Playwright's sync API is bound to the thread that started it, and guitest runs cases in a
thread pool. So each process has one :class:`BrowserHost`: a dedicated thread that owns Playwright
and the browser and executes commands from a queue, one at a time. Any thread calls
:meth:`BrowserHost.call` with a function of Playwright objects; it runs on the browser thread and its
result (or exception) comes back. An environment holds one :class:`BrowserPage` (a browser context and
its page: one per concurrent episode) and does each of its steps in one call (action, settle,
screenshot, state read), so episodes running concurrently interleave step by step. Waiting (a ``wait``
action) happens in the caller's thread, never on the browser thread.

Deadlines: a command may run ``timeout`` seconds (``env_options.command_timeout``, default
:data:`CALL_TIMEOUT`), counted from when it starts on the browser thread; a part of it may be bounded tighter
(:meth:`BrowserPage.bounded`). A watchdog thread per host stops what overruns, one step at a time, each given
:data:`GRACE` seconds: the page's running script is terminated (DevTools ``Runtime.terminateExecution``: a
synchronous ``while (true) {}`` ends, the page stays usable), then the page's browser context is closed (a Promise
that never settles, a renderer that died unseen), then the whole browser is abandoned: its processes are killed
(found by :attr:`BrowserHost.marker`, a switch only this host's Chromium carries), every command waiting for it
fails at once, and :func:`host` starts a new one. The command that overran fails with an EnvFailure in every
case; so does a command whose browser was killed or disconnected (Playwright's ``disconnected``).

The browser: Debian's ``/usr/bin/chromium`` through ``executable_path`` (Playwright downloads
nothing), launched with :data:`LAUNCH_ARGS`. Override the path with ``env_options.executable`` or
``GUITEST_CHROMIUM``. A missing browser or Playwright is an :class:`EnvFailure` saying how to install it.

Browsers on other hosts: ``env_options.browser_endpoints`` (``--browser-endpoint``, repeatable) lists browsers to
connect to instead of launching one, each through Playwright's own connect: a Chromium's DevTools endpoint
(``http://HOST:PORT`` of a Chromium started with ``--remote-debugging-port``, or its ``ws://.../devtools/browser/ID``)
through ``connect_over_cdp``, any other ``ws://`` URL (a Playwright browser server, ``launchServer`` or
``playwright run-server``) through ``connect``. Each endpoint is a :class:`BrowserHost` of its own (a connection and
its thread); a new page goes to the endpoint with the fewest of this process's pages, and the environment pool holds
at most ``episodes_per_endpoint`` (:data:`EPISODES_PER_ENDPOINT`) pages per endpoint in each process
(:func:`capacity`). Everything above holds as for a local browser (a context per episode, the watchdog; abandoning a
remote browser drops the connection, which closes its contexts, instead of killing processes), but the memory bound:
that is the remote host's to set. An endpoint that cannot be reached, or whose browser went away and cannot be reached
again, is taken out for the rest of the run (:func:`remote_host`): the episodes on it end in an EnvFailure (an error,
which ``--lf`` runs again), the next pages go to the others, and when none is left each new episode's EnvFailure names
them all with why.

Memory: each page's renderer process may take ``env_options.page_memory_mb`` (:data:`PAGE_MEMORY_MB`) of memory.
Chromium's own sandbox bounds a renderer with ``RLIMIT_DATA`` (sandbox/policy/linux/sandbox_linux.cc,
``SandboxLinux::LimitAddressSpace``: 8 or 16 GB; not ``RLIMIT_AS``, which V8's reserved address space exceeds), but
not under ``--no-sandbox``, which guitest runs with. So guitest sets ``RLIMIT_DATA`` itself on the browser's zygote
(the process every renderer is forked from, so every later renderer inherits it) and on the renderers and the GPU
process already running (:func:`limit_renderers`): the GPU process holds every page's WebGL textures, and one hostile
page's texture loop took it to 6.6 GB when only renderers were bounded. ``RLIMIT_DATA`` counts every private writable mapping, so it bounds the JavaScript heap, ArrayBuffers, strings and the
DOM alike: an allocation past it fails (an ArrayBuffer's is a ``RangeError`` the page's script sees) or ends the
renderer (the page crashes; its command fails with a message naming the bound, :meth:`BrowserHost.call`), and the
browser, its other pages and the next episode go on.
"""

from __future__ import annotations

import atexit
import base64
import collections
import concurrent.futures
import contextlib
import os
import queue
import secrets
import signal
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, TypeVar

from ..live.actions import (
    CLICK,
    DOUBLE_CLICK,
    DRAG,
    HOLD_KEY,
    KEY,
    MIDDLE_CLICK,
    MODIFIABLE,
    MOUSE_DOWN,
    MOUSE_UP,
    MOVE,
    RIGHT_CLICK,
    SCROLL,
    TRIPLE_CLICK,
    TYPE,
    Action,
)
from ..live.keys import NAMED
from ..live.protocol import EnvFailure
from ..secrets import redact_urls
from .options import seconds_option

try:
    import resource
except ImportError:  # pragma: no cover - Windows: no resource limits, so no bound on a page's memory
    resource = None  # type: ignore[assignment]

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
CALL_TIMEOUT = 120.0  # default env_options.command_timeout: seconds one browser command may run before the watchdog stops it
GRACE = 5.0  # seconds each step of stopping an overrun command (terminate the script, close the page) has before the next
START_TIMEOUT = 90.0  # seconds Playwright and Chromium may take to start (Playwright's own launch timeout is 30 s)
LOAD_WINDOW = 1.0  # seconds over which BrowserHost.load() measures how busy the browser thread is
NOTCH_PIXELS = 50  # CSS pixels per wheel notch (MiniWoB++'s own DEFAULT_SCROLL_AMOUNT)
#: default env_options.page_memory_mb: the memory (MB of RLIMIT_DATA) each page's renderer may take; an idle renderer
#: holds 500-650 MB of it already (writable mappings reserved, not touched), so a page has about 1.4 GB of its own.
#: 0: no bound (Chromium's own, 8 GB or more, does not apply under --no-sandbox)
PAGE_MEMORY_MB = 2048
#: default env_options.episodes_per_endpoint: pages (episodes at once) on one remote browser, per process
EPISODES_PER_ENDPOINT = 4
CONNECT_TIMEOUT = 30.0  # seconds Playwright may take to connect to a remote browser
#: what a browser endpoint may be (see the module docstring)
ENDPOINT_FORMS = "http://HOST:PORT (a Chromium's DevTools endpoint, --remote-debugging-port), ws://HOST:PORT/devtools/browser/ID, or the ws:// URL of a Playwright browser server"
PLAYWRIGHT_KEYS = {
    "ctrl": "Control",
    "shift": "Shift",
    "alt": "Alt",
    "meta": "Meta",
    "enter": "Enter",
    "tab": "Tab",
    "escape": "Escape",
    "backspace": "Backspace",
    "delete": "Delete",
    "space": "Space",
    "up": "ArrowUp",
    "down": "ArrowDown",
    "left": "ArrowLeft",
    "right": "ArrowRight",
    "home": "Home",
    "end": "End",
    "pageup": "PageUp",
    "pagedown": "PageDown",
    "insert": "Insert",
    "capslock": "CapsLock",
    **{f"f{i}": f"F{i}" for i in range(1, 13)},
}

T = TypeVar("T")


def executable(options: Mapping[str, Any] | None = None) -> str:
    """The Chromium binary: ``options["executable"]``, else ``GUITEST_CHROMIUM``, else :data:`DEFAULT_EXECUTABLE`."""
    return str((options or {}).get("executable") or os.environ.get("GUITEST_CHROMIUM") or DEFAULT_EXECUTABLE)


class Overran(EnvFailure):
    """A bounded part of a browser command (:meth:`BrowserHost.bounded`) did not finish within ``seconds`` and the
    watchdog stopped it (``steps``: what it did)."""

    def __init__(self, seconds: float, steps: tuple[str, ...]) -> None:
        super().__init__(f"did not finish within {seconds:g} s ({'; '.join(steps)})")
        self.seconds = seconds
        self.steps = steps


class _Command:
    """A function for the browser thread, its future, and what the watchdog knows of it (guarded by the host's lock)."""

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...], timeout: float, owner: "BrowserPage | None") -> None:
        self.fn, self.args, self.timeout, self.owner = fn, args, timeout, owner
        self.future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self.due: float | None = None  # when the watchdog acts next; None until the command starts
        self.steps: list[str] = []  # what the watchdog did to it

    def overran(self) -> str:
        return f"a browser command took longer than {self.timeout:g} s (env_options.command_timeout): {'; '.join(self.steps)}"


def _settle(future: concurrent.futures.Future[Any], value: Any = None, error: BaseException | None = None) -> None:
    """Give ``future`` its result or exception unless it has one already (the watchdog may have failed it first)."""
    try:
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)
    except concurrent.futures.InvalidStateError:
        pass


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


class BrowserHost:
    """One Chromium on a dedicated thread; :meth:`call` runs a function there, within its deadline (see the module
    docstring). Start it with :func:`host`."""

    def __init__(self, executable_path: str, headless: bool = True, memory_mb: int = PAGE_MEMORY_MB, endpoint: str | None = None) -> None:
        self.executable_path = executable_path
        self.headless = headless
        self.memory_mb = memory_mb
        self.endpoint = endpoint  # a remote browser's (see the module docstring); None: a Chromium launched here
        self.where = f"the browser at {redact_urls(endpoint)}" if endpoint else f"Chromium at {executable_path}"
        self.memory_bound = False  # whether the bound holds, once started (Linux, a zygote found)
        # on this host's browser process only (Chromium ignores a switch it does not know and passes it to no child):
        # how the watchdog finds the processes to end, and never another's
        self.marker = f"--guitest-browser={os.getpid()}-{secrets.token_hex(8)}"
        self._queue: queue.Queue[_Command | None] = queue.Queue()
        self._ready = threading.Event()
        self._error: EnvFailure | None = None
        self._playwright_error: type[BaseException] = RuntimeError
        self.browser: Any = None
        self.software: str | None = None  # the browser's name and version as it says them once started ("chromium 131.0.6778.85")
        self.pid: int | None = None  # the browser process (None where /proc cannot be read)
        self._lock = threading.Condition()  # guards what follows; the watchdog waits on it
        self._current: _Command | None = None
        self._abandoned: str | None = None  # why, once the browser was given up
        self._finished = False  # the browser thread has ended
        self._watch_until: float | None = None  # when the sleeping watchdog wakes by itself (None: only when notified)
        self._disconnected = False  # Playwright saw the browser go (killed, crashed, closed)
        self._calls: collections.deque[tuple[float, float]] = collections.deque()  # (start, end) of recent commands
        self._running_since: float | None = None
        self._thread = threading.Thread(target=self._run, args=(headless,), name="guitest-browser", daemon=True)
        self._watchdog = threading.Thread(target=self._watch, name="guitest-browser-watchdog", daemon=True)
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT):
            self._abandon(f"{self.where} did not start within {START_TIMEOUT:g} s")
            raise EnvFailure(f"{self.where} did not start within {START_TIMEOUT:g} s; {self._check()}")
        if self._error is not None:
            raise self._error
        self._watchdog.start()

    def _check(self) -> str:
        """What to check when this host's browser cannot be had."""
        if self.endpoint is None:
            return INSTALL_BROWSER
        return (
            "check that the browser runs there and this host can reach it (a Chromium started with --remote-debugging-port "
            "and --remote-debugging-address, or a Playwright browser server of a version this Playwright can connect to)"
        )

    # -- the browser thread ----------------------------------------------------------------------

    def _run(self, headless: bool) -> None:
        try:
            from playwright.sync_api import Error, sync_playwright
        except ImportError:
            self._error = EnvFailure(f"live browser tasks need Playwright, which is not installed: {INSTALL_PLAYWRIGHT}")
            self._ready.set()
            return
        self._playwright_error = Error
        if self.endpoint is None and (not os.path.isfile(self.executable_path) or not os.access(self.executable_path, os.X_OK)):
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
            if self.endpoint is not None:
                self.browser = _connect(playwright.chromium, self.endpoint)
            else:
                self.browser = playwright.chromium.launch(executable_path=self.executable_path, headless=headless, args=[*LAUNCH_ARGS, self.marker])
            self.browser.on("disconnected", lambda _browser: self._lost())
            self.software = _software(self.browser)
        except Exception as exc:  # noqa: BLE001
            playwright.stop()
            said = redact_urls(_first_line(exc))
            self._error = EnvFailure(f"{self.where} could not be reached: {said}; {self._check()}" if self.endpoint else f"{self.where} did not start: {said}; {INSTALL_BROWSER}")
            self._ready.set()
            return
        self.pid = None if self.endpoint is not None else next(iter(_marked(self.marker)), None)
        if self.memory_mb and self.pid is not None:
            self.memory_bound = limit_renderers(self.pid, self.memory_mb << 20)
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
                playwright.stop()

    def _serve(self) -> None:
        """Run commands from the queue until a None, or until the browser is abandoned."""
        while True:
            command = self._queue.get()
            if command is None or self._abandoned is not None:
                if command is not None:
                    _settle(command.future, error=EnvFailure(self._abandoned or "the browser was stopped"))
                return
            if not command.future.set_running_or_notify_cancel():
                continue
            now = time.monotonic()
            with self._lock:
                command.due = now + command.timeout
                self._current = command
                self._running_since = now
                self._wake_for(command.due)
            try:
                _settle(command.future, command.fn(*command.args))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                _settle(command.future, error=exc)
            finally:
                self._ran()

    def _ran(self) -> None:
        """Note the command that just ended (on the browser thread)."""
        end = time.monotonic()
        with self._lock:
            self._current = None
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
                _settle(command.future, error=EnvFailure(why))

    # -- the watchdog ----------------------------------------------------------------------------

    def _watch(self) -> None:
        """Stop the running command when it overruns its deadline: its script, then its page, then the browser."""
        try:
            while True:
                with self._lock:
                    command = self._current
                    if self._abandoned is not None or self._finished:
                        return
                    if command is None or command.due is None or time.monotonic() < command.due:
                        self._watch_until = None if command is None or command.due is None else command.due
                        self._lock.wait(None if self._watch_until is None else self._watch_until - time.monotonic())
                        self._watch_until = None
                        continue
                    step = self._next_step(command)
                if step is not None and not step():
                    with self._lock:  # the step could not be taken (no event loop to reach): the next one at once
                        command.due = time.monotonic()
        except BaseException as exc:  # noqa: BLE001 - a watchdog that stops must not leave commands waiting forever
            self._abandon(f"the browser's watchdog failed ({type(exc).__name__}: {exc}); the browser was ended")

    def _wake_for(self, due: float) -> None:
        """Wake the watchdog if it would sleep past ``due`` (with the lock held). Not on every command: a watchdog that
        sleeps until an earlier command's deadline wakes before this one's anyway, and each wake-up is a switch of
        threads (about 40 us a command when every start and end woke it)."""
        if self._watch_until is None or self._watch_until > due:
            self._lock.notify_all()

    def _next_step(self, command: _Command) -> Callable[[], bool] | None:
        """What to do to ``command``, which is past due (with the lock held); the next step is due GRACE seconds later."""
        command.due = time.monotonic() + GRACE
        owner, taken = command.owner, len(command.steps)
        if owner is not None and taken == 0:
            command.steps.append("its script was stopped")
            return owner.interrupt
        if owner is not None and taken == 1:
            command.steps.append("its page was closed")
            return owner.discard
        command.steps.append("the browser did not answer and was ended; the next episode gets a new one")
        why = command.overran()

        def abandon() -> bool:
            self._abandon(why)
            return True

        return abandon

    @contextlib.contextmanager
    def bounded(self, seconds: float) -> Iterator[None]:
        """On the browser thread, inside a command: the code in the ``with`` block may run ``seconds`` more at most. Past
        that the watchdog stops it as it would the whole command (its page's script first), and :class:`Overran` is
        raised here. Outside a command it bounds nothing."""
        with self._lock:
            command = self._current
            if command is None or command.due is None:
                command = None
            else:
                saved, taken = command.due, len(command.steps)
                command.due = min(command.due, time.monotonic() + seconds)
                self._wake_for(command.due)
        if command is None:
            yield
            return
        try:
            yield
        except Exception:
            steps = self._unbound(command, saved, taken)
            if steps:
                raise Overran(seconds, steps) from None
            raise
        steps = self._unbound(command, saved, taken)
        if steps:  # finished only as the watchdog acted: what it did may still reach the page
            raise Overran(seconds, steps)

    def _unbound(self, command: _Command, saved: float, taken: int) -> tuple[str, ...]:
        """End a bounded part: the command's own deadline again, unless the watchdog acted meanwhile (its steps then)."""
        with self._lock:
            if len(command.steps) == taken:
                command.due = saved
                return ()
            return tuple(command.steps[taken:])

    def _abandon(self, why: str) -> None:
        """Give this browser up (from any thread): fail the running and every waiting command with ``why``, end its
        processes (so the browser thread, blocked in Playwright, unwinds), and let :func:`host` start a new one."""
        with self._lock:
            if self._abandoned is not None:
                return
            self._abandoned = why
            running = self._current
            self._lock.notify_all()
        _forget(self)
        if running is not None:
            _settle(running.future, error=EnvFailure(why))
        self._fail_waiting(f"the browser was ended before this command ran: {why}")
        self._queue.put(None)
        if self.endpoint is not None and self.browser is not None:  # nothing of it runs here: drop the connection
            _on_loop(self.browser, self.browser.close)
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
        return self.alive and not gone and (self.pid is None or _holds(self.pid, self.marker))

    def call(self, fn: Callable[..., T], *args: Any, timeout: float = CALL_TIMEOUT, owner: "BrowserPage | None" = None) -> T:
        """``fn(*args)`` run on the browser thread, at most ``timeout`` seconds from when it starts there (the commands
        before it in the queue run first). A Playwright error, an overrun (the watchdog then stops ``owner``'s page, or
        the browser) and a browser that is gone become an EnvFailure."""
        if not self.alive:
            raise EnvFailure(self._abandoned or "the browser has stopped (guitest.envs.shutdown was called, or it crashed)")
        command = _Command(fn, args, timeout, owner)
        self._queue.put(command)
        if not self.alive:  # abandoned or stopped between the check and the put: nobody will take it
            _settle(command.future, error=EnvFailure(self._abandoned or "the browser has stopped"))
        try:
            value = command.future.result()
        except EnvFailure:
            raise
        except self._playwright_error as exc:
            if command.steps:
                raise EnvFailure(command.overran()) from None
            said = _first_line(exc)
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


def _software(browser: Any) -> str | None:
    """The browser's name and version as Playwright has them from the browser itself (no command is sent): a remote
    browser's are its own, not this host's."""
    try:
        return f"{browser.browser_type.name} {browser.version}"
    except Exception:  # noqa: BLE001 - a browser that does not say: its version is not recorded, the episode goes on
        return None


def _holds(pid: int, marker: str) -> bool:
    """Whether process ``pid`` runs with the switch ``marker`` (False once it is gone, a zombie, or another's)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return marker.encode() in handle.read().split(b"\0")
    except OSError:
        return False


def _marked(marker: str) -> list[int]:
    """The processes of this user whose command line holds the switch ``marker`` (none where /proc cannot be read)."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    uid = os.getuid()
    found = []
    for entry in entries:
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid != uid:
                    continue
            except OSError:
                continue
            if _holds(int(entry), marker):
                found.append(int(entry))
    return found


#: the processes of a browser a page's memory lands in, bounded beside the zygotes: its renderer, and the GPU process,
#: which holds every page's WebGL textures and buffers (SwiftShader's, under --disable-gpu): one hostile page's texture
#: loop took it to 6.6 GB while the renderers held their bound
BOUNDED_TYPES = (b"--type=renderer", b"--type=gpu-process")


def limit_renderers(browser_pid: int, limit: int) -> bool:
    """Set ``RLIMIT_DATA`` to ``limit`` bytes on the zygote processes of the browser ``browser_pid`` (its process group,
    which Playwright makes for it), then on its renderer and GPU processes already running (:data:`BOUNDED_TYPES`).
    Chromium forks every later renderer, and the GPU process it starts again after a crash, from a zygote, so each
    inherits the bound; the processes are listed again after the zygotes are bounded, so one forked in between is
    bounded too (the GPU process starts on the browser's own time, before or after the bound). True when a zygote was
    limited (every later renderer is then bounded); False where it cannot be done (not Linux, no zygote)."""
    if resource is None or not hasattr(resource, "prlimit"):
        return False
    zygotes = sum(_limit(pid, limit) for pid, switches in _typed(browser_pid) if b"--type=zygote" in switches)
    for pid, switches in _typed(browser_pid):
        if any(kind in switches for kind in BOUNDED_TYPES):
            _limit(pid, limit)
    return zygotes > 0


def _typed(leader: int) -> list[tuple[int, list[bytes]]]:
    """The processes of the group ``leader`` leads, each with the switches of its command line."""
    found = []
    for pid in _group(leader):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                # split at spaces too: Chromium's child processes rewrite their command line as one string (setproctitle)
                found.append((pid, handle.read().replace(b"\0", b" ").split()))
        except OSError:
            continue
    return found


def _limit(pid: int, limit: int) -> bool:
    """``RLIMIT_DATA`` of ``limit`` bytes on process ``pid``; False when it is gone meanwhile, or its hard limit is
    already lower than ours (kept)."""
    try:
        resource.prlimit(pid, resource.RLIMIT_DATA, (limit, limit))
    except (OSError, ValueError):
        return False
    return True


def _group(leader: int) -> list[int]:
    """The processes of this user in the process group ``leader`` leads (none where /proc cannot be read)."""
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if entry.isdigit():
            try:
                if os.getpgid(int(entry)) == leader:
                    found.append(int(entry))
            except OSError:
                continue
    return found


def end_processes(marker: str) -> int:
    """SIGKILL the process of this user whose command line holds the switch ``marker`` (one browser's own) and its
    process group: Playwright starts Chromium as the leader of a group of its own, whose members are that browser's
    renderer, GPU and utility processes. Returns how many browsers were ended (0 where /proc cannot be read)."""
    ended = 0
    for pid in _marked(marker):
        try:
            if os.getpgid(pid) == pid:
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
            ended += 1
        except OSError:  # gone meanwhile
            continue
    return ended


_hosts: dict[tuple[str, bool, int, str | None], BrowserHost] = {}
_hosts_lock = threading.RLock()  # re-entered when a browser that failed to start is abandoned inside host()


def page_memory(options: Mapping[str, Any] | None) -> int:
    """``options["page_memory_mb"]`` (default :data:`PAGE_MEMORY_MB`) as a whole number of MB, 0 for no bound;
    EnvFailure naming the option."""
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
            running = _hosts[key] = BrowserHost(*key)
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


def over_cdp(endpoint: str) -> bool:
    """Whether ``endpoint`` is a Chromium's DevTools endpoint (``connect_over_cdp``) rather than a Playwright server's."""
    return endpoint.startswith(("http://", "https://")) or "/devtools/browser/" in endpoint


def _connect(chromium: Any, endpoint: str) -> Any:
    """Playwright's own connection to the browser at ``endpoint`` (on the browser thread)."""
    timeout_ms = CONNECT_TIMEOUT * 1000
    if over_cdp(endpoint):
        return chromium.connect_over_cdp(endpoint, timeout=timeout_ms)
    return chromium.connect(endpoint, timeout=timeout_ms)


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


_out: dict[str, str] = {}  # endpoint -> why it was taken out (for the rest of the run)
_pages: collections.Counter[str] = collections.Counter()  # endpoint -> this process's open pages on it


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


def _page_host(options: Mapping[str, Any]) -> BrowserHost:
    """The browser a new page opens on: a remote one when ``options`` list endpoints, else this process's own."""
    return remote_host(options) if endpoints(options) else host(options)


def _counted(endpoint: str | None, change: int) -> None:
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
    ``options``: ``executable``, ``headless`` (which browser) and ``command_timeout`` (seconds one command may run,
    :data:`CALL_TIMEOUT`).

    :meth:`run` executes ``fn(page, *args)`` on the browser thread. The helpers below are meant to be
    called inside such a function (they take the Playwright page)."""

    def __init__(self, options: Mapping[str, Any], viewport: tuple[int, int], scale: float, init_scripts: tuple[str, ...] = ()) -> None:
        self.command_timeout = seconds_option(options, "command_timeout", CALL_TIMEOUT)
        self.viewport = viewport
        self.scale = scale
        self.gone: str | None = None  # "crashed" or "closed": Playwright's page events, seen on the browser thread
        self.host = _page_host(options)
        try:
            opened = self.host.call(self._open, init_scripts, timeout=self.command_timeout)
        except EnvFailure:
            if self.host.connected():
                raise
            # the browser had gone before Playwright said so (killed while its thread was idle): once more, on a new one
            self.host = _page_host(options)
            opened = self.host.call(self._open, init_scripts, timeout=self.command_timeout)
        self._context, self.page, self._cdp = opened
        _counted(self.host.endpoint, 1)
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
        try:  # screenshots through the DevTools protocol directly (see screenshot()); the watchdog stops scripts with it
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
        then the page itself, see the module docstring)."""
        if self.page is None:
            raise EnvFailure("this environment was closed")
        return self.host.call(fn, self.page, *args, timeout=self.command_timeout if timeout is None else timeout, owner=self)

    def bounded(self, seconds: float) -> contextlib.AbstractContextManager[None]:
        """Inside a function :meth:`run` runs: the ``with`` block may take ``seconds`` at most, or its script is stopped
        and :class:`Overran` raised (:meth:`BrowserHost.bounded`)."""
        return self.host.bounded(seconds)

    def interrupt(self) -> bool:
        """From the watchdog: terminate the JavaScript this page runs now (DevTools ``Runtime.terminateExecution``; the
        page stays usable). False when it cannot be sent."""
        cdp = self._cdp
        return cdp is not None and _on_loop(self._page, lambda: cdp.send("Runtime.terminateExecution"))

    def discard(self) -> bool:
        """From the watchdog: close this page's browser context, so every call waiting on the page fails (the other
        contexts and the browser go on). False when it cannot be done."""
        return _on_loop(self._page, self._context.close)

    def close(self) -> None:
        """Close the context (safe to call twice, and after the browser stopped)."""
        if self.page is None:
            return
        context, self.page = self._context, None
        _counted(self.host.endpoint, -1)
        if self.host.alive:
            try:
                self.host.call(context.close, timeout=min(10.0, self.command_timeout), owner=self)
            except EnvFailure:
                pass


def _on_loop(owner: Any, fn: Callable[[], Any]) -> bool:
    """Run ``fn`` (sync Playwright calls) on the browser thread while a command blocks it (``owner``: a Playwright object
    of that thread, a page or the browser). Playwright's sync API runs its event loop on that thread whenever a call
    waits, in a greenlet of its own; ``fn`` is scheduled on that loop in a new greenlet, as Playwright runs event
    handlers. The loop is Playwright's private ``_loop``: when it is missing (another Playwright version) or closed,
    False, and the watchdog takes its next step."""
    loop = getattr(owner, "_loop", None)
    if loop is None:
        return False

    def start() -> None:
        import greenlet  # noqa: PLC0415 - Playwright's own dependency, present whenever a page exists

        def body() -> None:
            try:
                fn()
            except Exception:  # noqa: BLE001 - the page or the browser may be gone already: the next step follows
                pass

        greenlet.greenlet(body).switch()

    try:
        loop.call_soon_threadsafe(start)
    except RuntimeError:  # the loop is closed: Playwright has stopped
        return False
    return True


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
    screenshot: nothing is done, an agent cannot see there), ``unknown_key``, ``hold_key_pressed_at_once`` (a
    ``hold_key`` is pressed and released: the browser thread serves every page of the worker, so it never sleeps
    with a key down). A pointer action's ``keys`` are held down around it. ``wait``, ``done`` and ``fail`` do
    nothing here."""
    point = area.to_css(action.point) if action.point is not None else pointer
    end = area.to_css(action.end) if action.end is not None else None
    if point is None or (action.end is not None and end is None):
        return pointer, ("outside_screen",)
    keyboard = page.keyboard
    held = [PLAYWRIGHT_KEYS.get(k, k) for k in action.keys] if action.kind in MODIFIABLE else []
    pressed = 0
    try:
        for key in held:
            if key not in PLAYWRIGHT_KEYS.values() and len(key) != 1:
                return pointer, ("unknown_key",)
            keyboard.down(key)
            pressed += 1
        return _perform(page, action, point, end, pointer)
    finally:
        for key in reversed(held[:pressed]):
            keyboard.up(key)


def _perform(page: Any, action: Action, point: tuple[float, float], end: tuple[float, float] | None, pointer: tuple[float, float]) -> tuple[tuple[float, float], tuple[str, ...]]:
    """:func:`perform` once the held keys are down."""
    mouse, keyboard = page.mouse, page.keyboard
    kind = action.kind
    notes: tuple[str, ...] = ()
    if kind == CLICK:
        mouse.click(*point)
    elif kind == DOUBLE_CLICK:
        mouse.dblclick(*point)
    elif kind == RIGHT_CLICK:
        mouse.click(*point, button="right")
    elif kind == TRIPLE_CLICK:
        mouse.click(*point, click_count=3)
    elif kind == MIDDLE_CLICK:
        mouse.click(*point, button="middle")
    elif kind == MOUSE_DOWN:
        mouse.move(*point)
        mouse.down()
    elif kind == MOUSE_UP:
        mouse.move(*point)
        mouse.up()
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
    elif kind in (KEY, HOLD_KEY):
        names = [PLAYWRIGHT_KEYS.get(k, k) for k in action.keys]
        if not names or any(k not in NAMED and len(k) != 1 for k in action.keys):
            return pointer, ("unknown_key",)
        keyboard.press("+".join(names))
        notes = ("hold_key_pressed_at_once",) if kind == HOLD_KEY else ()
    # the pointer moved again where it is: what the action changed under it (a cover shown, a menu closed) updates the
    # hover state now, with this input event, not at a later frame the step may or may not have waited for (a menu's
    # mouseleave timer then started before or after the settle looked, by the machine's speed)
    mouse.move(*point)
    return point, notes


def fresh_document(page: Any, url: str, wait_until: str = "load") -> None:
    """Load ``url`` as a new document that nothing of the page's earlier documents reaches, as a new context's first
    one (on the browser thread): through ``about:blank``. Straight from one page of a site to another (or the same) at
    a zoom of 2 or more, the new document's screens came out with other bytes in most tries when the old document had
    a change not yet painted (text a shade darker: its anti-aliasing, not the layout), so the same screen of the same
    episode differed by what had run before; two animation frames before leaving, hiding the old document, or the
    switches --disable-partial-raster, PaintHolding and RenderDocument did not help (docs/live_miniwob.md, Determinism)."""
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
