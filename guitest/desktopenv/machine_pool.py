"""Several desktop machines shared by episodes: one episode per machine at a time, across threads, processes and hosts.

On one host a machine is leased by an exclusive ``flock`` on a lock file named after its URL, in a folder every
process of a run shares (``-n 2`` workers on one host), so two workers never drive one machine at
once; the kernel drops the lock when a process dies, so a crashed worker frees its machine.

Across hosts (several guitest runs, shards of one suite, sharing one pool of machines) a lock on a local disk holds
nothing: with ``lease_dir`` (``--lease-dir``, a folder every host mounts: NFS, a cluster file system) a machine is
leased by a lease file (:class:`LeaseFiles`) created with ``O_CREAT | O_EXCL``, which one creator wins on a shared file
system, holding its owner (host, process, a random token). The holder renews it (its modification time) every
``ttl / 3`` seconds from a thread of its own; a file not renewed for ``ttl`` seconds (its holder crashed, or its host
went away) is stale, and the next taker moves it aside (a rename, which one taker wins) and creates its own. Limits:
the hosts' clocks must agree to well within ``ttl`` (NTP), a holder stalled for more than ``ttl`` (a suspended VM) can
lose its lease to another, and the file system must honour ``O_EXCL`` and ``rename`` atomically (NFSv3 and later do).

A machine that stopped answering is *taken out* (:meth:`MachinePool.take_out`) for the rest of this
process: its episode is an error, later episodes go to the other machines.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import socket
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


#: seconds a shared lease file lives without being renewed (renewed every third of it while held)
LEASE_TTL = 60.0


class LeaseFiles:
    """Leases as files in a folder shared by hosts (see the module docstring): :meth:`take` one, :meth:`give_back` it;
    the files held are renewed every ``ttl / 3`` seconds while any is held."""

    def __init__(self, folder: str, ttl: float = LEASE_TTL) -> None:
        if ttl <= 0:
            raise EnvFailure(f"a lease's time to live must be more than 0 seconds, got {ttl:g}")
        self.folder = folder
        self.ttl = ttl
        self.owner = f"{socket.gethostname()} {os.getpid()}"
        self._held: dict[str, str] = {}  # path -> the token written in it
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._renewer: threading.Thread | None = None
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:
            raise EnvFailure(f"cannot use the lease folder {folder}: {exc}; --lease-dir must be a folder every host of the run can write") from None

    def take(self, path: str, about: str) -> bool:
        """Whether the lease file ``path`` was free (or stale) and is now held here (``about``: what it leases)."""
        token = secrets.token_hex(8)
        for _ in range(2):  # a stale file moved aside: once more
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                if not self._clear_stale(path):
                    return False
                continue
            try:
                os.write(fd, f"{token} {self.owner} {about}\n".encode())
                os.fsync(fd)
            finally:
                os.close(fd)
            with self._lock:
                self._held[path] = token
                self._start_renewing()
            return True
        return False

    def give_back(self, path: str) -> None:
        """Remove the lease file ``path`` when it is still this holder's (a lease lost to another stays theirs)."""
        with self._lock:
            token = self._held.pop(path, None)
        if token is not None and _token(path) == token:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass

    def _clear_stale(self, path: str) -> bool:
        """Move ``path`` aside when it has not been renewed for ``ttl`` seconds; whether it was moved by this call."""
        try:
            age = time.time() - os.stat(path).st_mtime
            seen = _token(path)
        except FileNotFoundError:
            return True  # released meanwhile: try to create it
        if age <= self.ttl:
            return False
        aside = f"{path}.stale-{secrets.token_hex(4)}"
        try:
            os.rename(path, aside)  # one taker wins the rename
        except FileNotFoundError:
            return False
        if _token(aside) != seen:  # renewed or replaced between the look and the rename: put it back
            try:
                os.link(aside, path)
            except FileExistsError:
                pass
            os.unlink(aside)
            return False
        os.unlink(aside)
        return True

    def _start_renewing(self) -> None:
        if self._renewer is None or not self._renewer.is_alive():
            self._renewer = threading.Thread(target=self._renew, name="guitest-lease-renewer", daemon=True)
            self._renewer.start()

    def _renew(self) -> None:
        """Touch every held lease file every ``ttl / 3`` seconds while any is held."""
        while True:
            self._wake.wait(self.ttl / 3)
            with self._lock:
                held = dict(self._held)
                if not held:
                    self._renewer = None
                    return
            for path, token in held.items():
                if _token(path) == token:
                    try:
                        os.utime(path)
                    except FileNotFoundError:
                        pass


def _token(path: str) -> str | None:
    """The token a lease file holds (its first word), None when it is gone."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(64).split(" ", 1)[0] or None
    except FileNotFoundError:
        return None


class Lease:
    """One machine held by one episode until :meth:`release` (safe to call twice)."""

    def __init__(self, pool: "MachinePool", url: str, fd: int | None, file: str | None = None) -> None:
        self.pool = pool
        self.url = url
        self._fd = fd
        self._file = file  # the shared lease file held (lease_dir), else None
        self.released = False

    def release(self) -> None:
        """Give the machine back to the pool."""
        self.pool._release(self)


class MachinePool:
    """The machines at ``urls``, handed out one episode at a time each.

    ``wait``: seconds :meth:`acquire` waits for a free machine before it gives up; ``lock_dir``: the
    folder of lock files (the default is shared by all processes of this user on this host); ``lease_dir``: a folder
    shared by hosts, whose lease files (:class:`LeaseFiles`, renewed while held, stale after ``lease_ttl`` seconds)
    lease the machines across hosts instead; ``spread``: each process starts its search at another machine (so
    ``-n`` workers spread at once), else every search starts at the first (a pool of machines made only as needed).
    """

    def __init__(
        self,
        urls: Sequence[str],
        *,
        wait: float = 900.0,
        lock_dir: str | None = None,
        poll: float = 0.2,
        lease_dir: str | None = None,
        lease_ttl: float = LEASE_TTL,
        spread: bool = True,
    ) -> None:
        cleaned = [u.strip().rstrip("/") for u in urls if u and u.strip()]
        if not cleaned:
            raise EnvFailure("the desktop backend needs a machine: pass --env-url=http://HOST:5000 (repeat it for several machines), or start one with `guitest desktop up`")
        self.urls = list(dict.fromkeys(cleaned))
        self.wait = wait
        self.poll = poll
        self.files = LeaseFiles(lease_dir, lease_ttl) if lease_dir else None
        self.lock_dir = lease_dir or lock_dir or default_lock_dir()
        os.makedirs(self.lock_dir, exist_ok=True)
        self._cond = threading.Condition()
        self._held: set[str] = set()
        self._out: dict[str, str] = {}
        self._closed = False
        # processes start their search at different machines, so -n workers spread at once
        self._start = os.getpid() % len(self.urls) if spread else 0

    def acquire(self, wait: float | None = None) -> Lease:
        """A free machine, waiting up to ``wait`` seconds; EnvFailure when all are taken out or none frees up."""
        deadline = time.monotonic() + (self.wait if wait is None else wait)
        with self._cond:
            while True:
                if self._closed:
                    raise EnvFailure("the run is ending: its machine pool was closed before a machine came free")
                live = [u for u in self.urls if u not in self._out]
                if not live:
                    reasons = "; ".join(f"{shown_url(u)}: {r}" for u, r in self._out.items())
                    raise EnvFailure(f"every desktop machine was taken out of service in this run ({reasons}); restart them and re-run with --lf")
                order = self.urls[self._start :] + self.urls[: self._start]
                for url in order:
                    if url in self._out or url in self._held:
                        continue
                    if self.files is not None:
                        path = self._lock_path(url)
                        if self.files.take(path, shown_url(url)):
                            self._held.add(url)
                            return Lease(self, url, None, path)
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

    def close(self) -> None:
        """Hand out no more machines (the end of the run): every :meth:`acquire` waiting or to come fails at once;
        leases held stay until released."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

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
            if lease._file is not None and self.files is not None:
                self.files.give_back(lease._file)
            if lease._fd is not None:
                try:
                    fcntl.flock(lease._fd, fcntl.LOCK_UN)
                finally:
                    os.close(lease._fd)
            self._cond.notify_all()
