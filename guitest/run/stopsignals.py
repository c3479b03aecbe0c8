"""SIGTERM and SIGHUP end a run as Ctrl-C does, so a run stopped by a CI job's timeout keeps its report.

Neither pytest nor pytest-xdist handles SIGTERM or SIGHUP (pytest 9.2's ``_pytest/main.py`` ends a session early only
on ``KeyboardInterrupt``; xdist 3.8's ``dsession.py`` and ``remote.py`` install no handler): the signal's default
kills the process at once, with no report and, under xdist, workers left to notice their controller's end. While a
run has guitest cases to run, :class:`StopSignals` takes them over in that process: the first one raises
:class:`Stopped` (a ``KeyboardInterrupt``) in the main thread, and pytest ends the session as on Ctrl-C. Later ones,
and any that arrives once the run is ending (:meth:`StopSignals.finishing`: the report is being written), are only
noted, so a runner that sends two (GitHub Actions: SIGINT, then SIGTERM 7.5 s later) cannot cut the report short.
The run then exits ``128 + the signal's number`` (:func:`exit_code`), what a shell reports for a process the signal
killed.

A signal the process ignores (``nohup`` ignores SIGHUP) or that something else handles is left alone; the handlers
before are put back by :meth:`StopSignals.restore`. :meth:`StopSignals.pass_on_to` names processes that get the same
signal when it reaches this one only (an xdist controller's workers, when a container's runtime signals its first
process alone).
"""

from __future__ import annotations

import os
import signal
import threading
from types import FrameType
from typing import Any

#: the signals taken over, by name (a platform without one, SIGHUP on Windows, has fewer)
NAMES = ("SIGTERM", "SIGHUP")


class Stopped(KeyboardInterrupt):
    """A stop signal arrived: pytest ends the session as on Ctrl-C. Its message is what pytest prints at the end."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(
            f"{signal.Signals(signum).name}: guitest stopped the run as on Ctrl-C; the report holds the cases that finished (marked incomplete): run the same command with --lf to finish it"
        )


def exit_code(signum: int) -> int:
    """The exit status of a run a signal stopped: ``128 + signum`` (143 for SIGTERM, 129 for SIGHUP), what a shell
    reports for a process that signal killed, so a caller that tests for it still sees it."""
    return 128 + signum


def signals() -> list[signal.Signals]:
    """The signals this platform has of :data:`NAMES`."""
    return [s for s in (getattr(signal, name, None) for name in NAMES) if s is not None]


class StopSignals:
    """One process's stop signals while it runs guitest cases (see the module docstring)."""

    def __init__(self) -> None:
        self.received: int | None = None  # the first stop signal that arrived
        self._previous: dict[int, Any] = {}  # signal -> the handler before, for those taken over
        self._ending = False
        self._tried = False
        self._others: set[int] = set()

    @property
    def installed(self) -> bool:
        """Whether this process's stop signals are taken over now."""
        return bool(self._previous)

    def install(self) -> bool:
        """Take over each stop signal whose handling is the default (the process would die of it); one the process
        ignores or handles otherwise is left alone. Only the main thread can: elsewhere nothing changes. Whether any
        was taken over (a later call changes nothing)."""
        if self._tried or threading.current_thread() is not threading.main_thread():
            return bool(self._previous)
        self._tried = True
        for sig in signals():
            if signal.getsignal(sig) is signal.SIG_DFL:
                self._previous[sig] = signal.signal(sig, self._arrived)
        return bool(self._previous)

    def finishing(self) -> None:
        """The run is ending (its report is being written): from now on a stop signal is noted, never raised."""
        self._ending = True

    def pass_on_to(self, pid: int) -> None:
        """Send a stop signal that reaches this process on to process ``pid`` too."""
        self._others.add(pid)

    def forget(self, pid: int) -> None:
        """Process ``pid`` has ended: send it nothing (its number may be given to another process)."""
        self._others.discard(pid)

    def restore(self) -> None:
        """Put back the handlers there were before :meth:`install` (where a handler of ours is still the one set)."""
        if threading.current_thread() is not threading.main_thread():
            return
        for sig, previous in self._previous.items():
            if signal.getsignal(sig) == self._arrived:
                signal.signal(sig, previous)
        self._previous.clear()

    def _arrived(self, signum: int, frame: FrameType | None) -> None:
        first = self.received is None
        if first:
            self.received = signum
            for pid in sorted(self._others):
                try:
                    os.kill(pid, signum)
                except OSError:  # ended already, or not ours to signal
                    pass
        if first and not self._ending:
            raise Stopped(signum)
