"""A bounded pool of environments of one backend: one per concurrent episode, reused across episodes.

The plugin keeps one pool per (backend, options) in a worker and runs an episode as
``env = pool.acquire()``, :func:`~guitest.live.loop.run_episode`, then
``pool.release(env, broken=episode.error_source == "environment")`` (or ``with pool.lease() as env:``
where an EnvFailure escapes). At most ``size`` environments exist (for the browser backends: ``size`` browser contexts of
the process's one browser, or of its remote browsers, no more than ``episodes_per_endpoint`` on each); a lease waits
for a free one. An environment whose episode ended in an
:class:`~guitest.live.protocol.EnvFailure` is closed instead of reused, and so is an idle one whose optional
``usable()`` says False (a browser environment whose page crashed or whose browser was ended while it waited: it
would fail the next episode's reset). A backend whose environments share one resource (the browser thread) says how
busy it is, and the pool grows only while it has time to spare (GROW_EVERY).
"""

from __future__ import annotations

import collections
import contextlib
import threading
import time
from typing import Any, Callable, Iterator, Mapping

from ..live.protocol import EnvFailure, Environment
from . import open_env


# An environment may tell how busy the resource it shares with the others is (``load()``, 0..1: the browser
# backends' one browser thread per process). Then the pool grows by one environment at most every GROW_EVERY seconds,
# and only while that load is under BUSY: with a fast agent the thread is the bottleneck, and more browser contexts
# only add page loads and contention (MiniWoB++'s oracle at 8 contexts per worker ran half as fast as at 1), while
# with a slow agent the thread waits on the model and the pool grows to its size within size x GROW_EVERY seconds.
# While the load is at BUSY or more, an episode whose task's page is loaded in a busy environment also waits for that
# one rather than load the page in another (the page load would only take the busy thread's time from the others).
GROW_EVERY = 0.25
BUSY = 0.7


class EnvPool:
    """Up to ``size`` environments made by ``make()`` (default: :func:`guitest.envs.open_env` of ``name``)."""

    def __init__(
        self,
        name: str,
        options: Mapping[str, Any] | None = None,
        base_dir: str = ".",
        size: int = 1,
        make: Callable[[], Environment] | None = None,
    ) -> None:
        if size < 1:
            raise ValueError(f"an environment pool needs a size of at least 1, got {size}")
        self.name = name
        self.size = min(size, _remote_capacity(options) or size)
        self._make = make or (lambda: open_env(name, options, base_dir))
        self._idle: list[tuple[Environment, str | None]] = []  # (environment, the affinity it was released with)
        self._count = 0
        self._load: Callable[[], float] | None = None  # the newest environment's load(), when it has one
        self._probed = False
        self._busy: collections.Counter[str | None] = collections.Counter()  # affinity -> environments leased with it
        self._wanted: collections.Counter[str | None] = collections.Counter()  # affinity -> episodes waiting for one that has it
        self._grown_at = -GROW_EVERY
        self._closed = False
        self._cond = threading.Condition()

    def acquire(self, affinity: str | None = None) -> Environment:
        """A free environment: an idle one, else a new one while fewer than ``size`` exist (and the backend has time to
        spare, see GROW_EVERY), else the next one released. With ``affinity`` (the task an episode runs), an idle
        environment last released with the same affinity comes first: it has the task's page loaded already (a
        MiniWoB++ reset on a reused page takes about 0.1 s, a page load 0.3 s, a new browser context 0.7 s); when the
        one with that affinity is busy and so is the backend, the episode waits for it (see BUSY). An idle environment
        that is not ``usable()`` is closed on the way, not handed out."""
        unusable: list[Environment] = []
        try:
            idle = self._idle_or_room(affinity, unusable)
        finally:
            _close_all(unusable)
        if idle is not None:
            return idle
        try:
            env = self._make()
        except BaseException:
            with self._cond:
                self._count -= 1
                self._cond.notify_all()
            raise
        load = getattr(env, "load", None)
        with self._cond:
            self._busy[affinity] += 1
            self._load = load if callable(load) else None  # the newest environment's gauge (a replaced browser's)
            if not self._probed:  # the first environment has told whether this backend has one: the others may come
                self._probed = True
                self._cond.notify_all()
        return env

    def _idle_or_room(self, affinity: str | None, unusable: list[Environment]) -> Environment | None:
        """An idle environment for :meth:`acquire`, or None once there is room for a new one (counted already); waits
        until one of them. Idle environments that are not usable go to ``unusable``, for the caller to close."""
        wanting = False  # whether this call is counted among the waiters for its affinity's environment
        with self._cond:
            try:
                while True:
                    if self._closed:
                        raise EnvFailure(f"the {self.name} environment pool is closed")
                    unusable += self._drop_unusable()
                    match = self._idle_index(lambda a: a == affinity)
                    if match is not None:
                        return self._take(match, affinity)
                    if affinity is not None and self._busy.get(affinity) and self._busy_backend():
                        if not wanting:  # the environment that has this task's page is busy, and so is the backend
                            wanting = True
                            self._wanted[affinity] += 1
                        self._cond.wait(GROW_EVERY)
                        continue
                    if wanting:
                        wanting = False
                        _less(self._wanted, affinity)
                    free = self._idle_index(lambda a: not self._wanted.get(a))  # not one another episode waits for
                    if free is not None:
                        return self._take(free, affinity)
                    if self._count < self.size and self._may_grow():
                        self._count += 1
                        self._grown_at = time.monotonic()
                        return None
                    self._cond.wait(GROW_EVERY if self._count < self.size or self._idle else None)
            finally:
                if wanting:
                    _less(self._wanted, affinity)

    def _drop_unusable(self) -> list[Environment]:
        """Take the idle environments whose ``usable()`` says False out of the pool (with the lock held); the caller
        closes them once the lock is released."""
        dropped = [env for env, _ in self._idle if not _usable(env)]
        if dropped:
            self._idle = [(env, a) for env, a in self._idle if all(env is not d for d in dropped)]
            self._count -= len(dropped)
            self._cond.notify_all()  # room for new ones, for whoever waits
        return dropped

    def _idle_index(self, wanted: Callable[[str | None], bool]) -> int | None:
        """The most recently released idle environment whose affinity passes ``wanted``; with the lock held."""
        return next((i for i in range(len(self._idle) - 1, -1, -1) if wanted(self._idle[i][1])), None)

    def _take(self, index: int, affinity: str | None) -> Environment:
        env = self._idle.pop(index)[0]
        self._busy[affinity] += 1
        return env

    def _may_grow(self) -> bool:
        """Whether another environment may be made now (see GROW_EVERY); with the lock held."""
        if self._count == 0:
            return True
        if not self._probed:  # the first one is still being made
            return False
        if self._load is None:
            return True
        return time.monotonic() - self._grown_at >= GROW_EVERY and not self._busy_backend()

    def _busy_backend(self) -> bool:
        """Whether the backend's shared resource is busy (its load() at BUSY or more); False without a gauge."""
        if self._load is None:
            return False
        try:
            return self._load() >= BUSY
        except Exception:  # noqa: BLE001 - a backend's gauge must not stop its episodes
            return False

    def release(self, env: Environment, broken: bool = False, affinity: str | None = None) -> None:
        """Give ``env`` back; a ``broken`` one (its episode's environment failed) is closed and replaced on demand. An
        environment that holds a shared resource between episodes (a desktop machine) frees it in its optional
        ``release()``, called here."""
        if not broken:
            free = getattr(env, "release", None)
            if callable(free):
                try:
                    free()
                except EnvFailure:
                    broken = True
        with self._cond:
            _less(self._busy, affinity)
            if broken or self._closed:
                self._count -= 1
            else:
                self._idle.append((env, affinity))
            self._cond.notify_all()  # an episode waiting for this task's environment, and any waiting for one
        if broken or self._closed:
            env.close()

    @contextlib.contextmanager
    def lease(self) -> Iterator[Environment]:
        """``with pool.lease() as env:``: an environment for one episode, released afterwards (closed after an EnvFailure)."""
        env = self.acquire()
        broken = False
        try:
            yield env
        except EnvFailure:
            broken = True
            raise
        finally:
            self.release(env, broken)

    def close(self) -> None:
        """Close every idle environment; ones in use are closed when released."""
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
            self._count -= len(idle)
            self._cond.notify_all()
        for env, _ in idle:
            env.close()


def _remote_capacity(options: Mapping[str, Any] | None) -> int | None:
    """The most environments the remote browsers of ``options`` take from this process (:func:`.browser.capacity`);
    None without remote browsers, or with a bad option (each episode's environment then says what is wrong)."""
    if not options or not options.get("browser_endpoints"):
        return None
    from .browser import capacity

    try:
        return capacity(options)
    except EnvFailure:
        return None


def _usable(env: Environment) -> bool:
    """An environment's optional ``usable()`` (True without one, and when it raises: the episode then says what fails)."""
    check = getattr(env, "usable", None)
    if not callable(check):
        return True
    try:
        return bool(check())
    except Exception:  # noqa: BLE001
        return True


def _close_all(envs: list[Environment]) -> None:
    """Close each of ``envs``; one that fails to close is dropped all the same."""
    for env in envs:
        try:
            env.close()
        except Exception:  # noqa: BLE001 - an environment that cannot close is gone from the pool anyway
            pass


def _less(counts: "collections.Counter[str | None]", key: str | None) -> None:
    """One fewer of ``key`` in ``counts``; a count that reaches 0 is dropped (``counts.get(key)`` is then falsy)."""
    counts[key] -= 1
    if counts[key] <= 0:
        del counts[key]
