"""The deadline of a browser's commands, and the watchdog that keeps it.

A command may run ``timeout`` seconds (``env_options.command_timeout``, default :data:`CALL_TIMEOUT`), counted from when
it starts on the browser thread; a part of it may be bounded tighter (:meth:`Watchdog.bounded`). A watchdog thread per
browser stops what overruns, one step at a time, each given :data:`GRACE` seconds: the page's running script is
terminated (its :class:`Owner`'s ``interrupt``: DevTools ``Runtime.terminateExecution``, a synchronous ``while (true) {}``
ends, the page stays usable), then the page's browser context is closed (its ``discard``: a Promise that never
settles, a renderer that died unseen), then the whole browser is given up (:meth:`guitest.envs.browser.host.BrowserHost.call`
says what then fails). The command that overran fails with an EnvFailure in every case.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import threading
import time
from typing import Any, Callable, Iterator, Protocol

from ...live.protocol import EnvFailure

CALL_TIMEOUT = 120.0  # default env_options.command_timeout: seconds one browser command may run before the watchdog stops it
GRACE = 5.0  # seconds each step of stopping an overrun command (terminate the script, close the page) has before the next


class Overran(EnvFailure):
    """A bounded part of a browser command (:meth:`Watchdog.bounded`) did not finish within ``seconds`` and the
    watchdog stopped it (``steps``: what it did)."""

    def __init__(self, seconds: float, steps: tuple[str, ...]) -> None:
        super().__init__(f"did not finish within {seconds:g} s ({'; '.join(steps)})")
        self.seconds = seconds
        self.steps = steps


class Owner(Protocol):
    """The page a command runs for (:class:`guitest.envs.browser.page.BrowserPage`): what the watchdog stops of it."""

    gone: str | None  # "crashed" or "closed": Playwright's page events

    def interrupt(self) -> bool:
        """Terminate the page's running script; False when it cannot be done."""
        ...

    def discard(self) -> bool:
        """Close the page's browser context; False when it cannot be done."""
        ...


class Command:
    """A function for the browser thread, its future, and what the watchdog knows of it (guarded by the host's lock)."""

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...], timeout: float, owner: Owner | None) -> None:
        self.fn, self.args, self.timeout, self.owner = fn, args, timeout, owner
        self.future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self.due: float | None = None  # when the watchdog acts next; None until the command starts
        self.steps: list[str] = []  # what the watchdog did to it

    def overran(self) -> str:
        return f"a browser command took longer than {self.timeout:g} s (env_options.command_timeout): {'; '.join(self.steps)}"


def settle(future: concurrent.futures.Future[Any], value: Any = None, error: BaseException | None = None) -> None:
    """Give ``future`` its result or exception unless it has one already (the watchdog may have failed it first)."""
    try:
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)
    except concurrent.futures.InvalidStateError:
        pass


class Watchdog:
    """The thread that stops a browser's running command when it overruns its deadline: its script, then its page, then
    the browser (``give_up(why)``). It shares the host's ``lock`` (a Condition, notified when the browser is given up
    or its thread ends) and ends once ``over()`` (asked with the lock held) says so."""

    def __init__(self, lock: threading.Condition, over: Callable[[], bool], give_up: Callable[[str], None]) -> None:
        self._lock = lock
        self._over = over
        self._give_up = give_up
        self.current: Command | None = None  # the command running on the browser thread (guarded by the lock)
        self._watch_until: float | None = None  # when the sleeping watchdog wakes by itself (None: only when notified)
        self._thread = threading.Thread(target=self._watch, name="guitest-browser-watchdog", daemon=True)

    def start(self) -> None:
        """Start watching (once the browser has started)."""
        self._thread.start()

    def begin(self, command: Command, now: float) -> None:
        """``command`` started on the browser thread at ``now`` (with the lock held): its deadline counts from then."""
        command.due = now + command.timeout
        self.current = command
        self._wake_for(command.due)

    def _watch(self) -> None:
        """Stop the running command when it overruns its deadline: its script, then its page, then the browser."""
        try:
            while True:
                with self._lock:
                    command = self.current
                    if self._over():
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
            self._give_up(f"the browser's watchdog failed ({type(exc).__name__}: {exc}); the browser was ended")

    def _wake_for(self, due: float) -> None:
        """Wake the watchdog if it would sleep past ``due`` (with the lock held). Not on every command: a watchdog that
        sleeps until an earlier command's deadline wakes before this one's anyway, and each wake-up is a switch of
        threads (about 40 us a command when every start and end woke it)."""
        if self._watch_until is None or self._watch_until > due:
            self._lock.notify_all()

    def _next_step(self, command: Command) -> Callable[[], bool] | None:
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
            self._give_up(why)
            return True

        return abandon

    @contextlib.contextmanager
    def bounded(self, seconds: float) -> Iterator[None]:
        """On the browser thread, inside a command: the code in the ``with`` block may run ``seconds`` more at most. Past
        that the watchdog stops it as it would the whole command (its page's script first), and :class:`Overran` is
        raised here. Outside a command it bounds nothing."""
        with self._lock:
            command = self.current
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

    def _unbound(self, command: Command, saved: float, taken: int) -> tuple[str, ...]:
        """End a bounded part: the command's own deadline again, unless the watchdog acted meanwhile (its steps then)."""
        with self._lock:
            if len(command.steps) == taken:
                command.due = saved
                return ()
            return tuple(command.steps[taken:])
