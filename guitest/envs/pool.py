"""A bounded pool of environments of one backend: one per concurrent episode, reused across episodes.

The plugin keeps one pool per (backend, options) in a worker and runs an episode as
``env = pool.acquire()``, :func:`~guitest.live.loop.run_episode`, then
``pool.release(env, broken=episode.error_source == "environment")`` (or ``with pool.lease() as env:``
where an EnvFailure escapes). At most ``size`` environments exist (for the browser backends: ``size`` browser contexts of
the process's one browser); a lease waits for a free one. An environment whose episode ended in an
:class:`~guitest.live.protocol.EnvFailure` is closed instead of reused.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable, Iterator, Mapping

from ..live.protocol import EnvFailure, Environment
from . import open_env


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
        self.size = size
        self._make = make or (lambda: open_env(name, options, base_dir))
        self._idle: list[tuple[Environment, str | None]] = []  # (environment, the affinity it was released with)
        self._count = 0
        self._closed = False
        self._cond = threading.Condition()

    def acquire(self, affinity: str | None = None) -> Environment:
        """A free environment (made when fewer than ``size`` exist; else the next one released). With ``affinity`` (the
        task an episode runs), an idle environment last released with the same affinity comes first: it has the task's
        page loaded already (a MiniWoB++ reset on a reused page takes 20 ms, a fresh page load many times that)."""
        with self._cond:
            while True:
                if self._closed:
                    raise EnvFailure(f"the {self.name} environment pool is closed")
                if self._idle:
                    match = next((i for i in range(len(self._idle) - 1, -1, -1) if self._idle[i][1] == affinity), len(self._idle) - 1)
                    return self._idle.pop(match)[0]
                if self._count < self.size:
                    self._count += 1
                    break
                self._cond.wait()
        try:
            return self._make()
        except BaseException:
            with self._cond:
                self._count -= 1
                self._cond.notify()
            raise

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
            if broken or self._closed:
                self._count -= 1
            else:
                self._idle.append((env, affinity))
            self._cond.notify()
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
