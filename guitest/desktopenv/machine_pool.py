"""Several desktop machines shared by episodes: one episode per machine at a time, across threads and processes.

A machine is leased by an exclusive ``flock`` on a lock file named after its URL, in a folder every
process of a run shares (``-n 2`` workers on one host), so two workers never drive one machine at
once; the kernel drops the lock when a process dies, so a crashed worker frees its machine. A
machine that stopped answering is *taken out* (:meth:`MachinePool.take_out`) for the rest of this
process: its episode is an error, later episodes go to the other machines.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
import time
from typing import Sequence

from ..live.protocol import EnvFailure
from .client import shown_url

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: leases hold within one process only
    fcntl = None  # type: ignore[assignment]


def default_lock_dir() -> str:
    """The folder of lease files shared by the processes of one user on this host."""
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    return os.path.join(tempfile.gettempdir(), f"guitest-machine-leases-{uid}")


class Lease:
    """One machine held by one episode until :meth:`release` (safe to call twice)."""

    def __init__(self, pool: "MachinePool", url: str, fd: int | None) -> None:
        self.pool = pool
        self.url = url
        self._fd = fd
        self.released = False

    def release(self) -> None:
        """Give the machine back to the pool."""
        self.pool._release(self)


class MachinePool:
    """The machines at ``urls``, handed out one episode at a time each.

    ``wait``: seconds :meth:`acquire` waits for a free machine before it gives up; ``lock_dir``: the
    folder of lease files (the default is shared by all processes of this user).
    """

    def __init__(self, urls: Sequence[str], *, wait: float = 900.0, lock_dir: str | None = None, poll: float = 0.2) -> None:
        cleaned = [u.strip().rstrip("/") for u in urls if u and u.strip()]
        if not cleaned:
            raise EnvFailure("the desktop backend needs a machine: pass --env-url=http://HOST:5000 (repeat it for several machines), or start one with `guitest desktop up`")
        self.urls = list(dict.fromkeys(cleaned))
        self.wait = wait
        self.poll = poll
        self.lock_dir = lock_dir or default_lock_dir()
        os.makedirs(self.lock_dir, exist_ok=True)
        self._cond = threading.Condition()
        self._held: set[str] = set()
        self._out: dict[str, str] = {}
        # processes start their search at different machines, so -n workers spread at once
        self._start = os.getpid() % len(self.urls)

    def acquire(self, wait: float | None = None) -> Lease:
        """A free machine, waiting up to ``wait`` seconds; EnvFailure when all are taken out or none frees up."""
        deadline = time.monotonic() + (self.wait if wait is None else wait)
        with self._cond:
            while True:
                live = [u for u in self.urls if u not in self._out]
                if not live:
                    reasons = "; ".join(f"{shown_url(u)}: {r}" for u, r in self._out.items())
                    raise EnvFailure(f"every desktop machine was taken out of service in this run ({reasons}); restart them and re-run with --lf")
                order = self.urls[self._start:] + self.urls[: self._start]
                for url in order:
                    if url in self._out or url in self._held:
                        continue
                    fd = self._try_lock(url)
                    if fd is not False:
                        self._held.add(url)
                        return Lease(self, url, fd)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise EnvFailure(
                        f"no desktop machine became free within {self.wait if wait is None else wait:g} s "
                        f"({len(live)} in service, all busy with other episodes): give more --env-url machines or run fewer workers (-n)"
                    )
                # woken by a release in this process; other processes' releases are seen on the next poll
                self._cond.wait(min(self.poll, left))

    def take_out(self, url: str, reason: str) -> None:
        """Stop handing out ``url`` in this process (it stopped answering)."""
        with self._cond:
            self._out.setdefault(url, reason)
            self._cond.notify_all()

    @property
    def taken_out(self) -> dict[str, str]:
        """The machines taken out so far, with the reason."""
        with self._cond:
            return dict(self._out)

    def _lock_path(self, url: str) -> str:
        return os.path.join(self.lock_dir, hashlib.sha256(url.encode()).hexdigest()[:24] + ".lock")

    def _try_lock(self, url: str) -> int | None | bool:
        """The lease file's descriptor when its lock was free (None without fcntl), False when it is held."""
        if fcntl is None:
            return None
        fd = os.open(self._lock_path(url), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()} {shown_url(url)}\n".encode())
        return fd

    def _release(self, lease: Lease) -> None:
        with self._cond:
            if lease.released:
                return
            lease.released = True
            self._held.discard(lease.url)
            if lease._fd is not None:
                try:
                    fcntl.flock(lease._fd, fcntl.LOCK_UN)
                finally:
                    os.close(lease._fd)
            self._cond.notify_all()
