"""The response cache: every model reply stored in SQLite, keyed by everything the reply depends on,
and the ledger of runs that decides whose replies a run may read back.

Key: the model spec and adapter, the profile, the endpoint (base URL without credentials) and the
model identity it reports, the prompt (system and user), a digest of the image as sent (the encoded
bytes when the adapter encodes, else the file plus the size sent), the generation settings and the
attempt index (:func:`guitest.run.case.key_parts`).

Whose replies are read back (``--cache``):

- ``resume`` (the default): only the replies of the run being resumed. A fresh run asks the model
  for everything; a run resumes the previous run of the same model and settings when it is given
  ``--lf``, or when that run did not end complete (killed, a worker lost, exit 11, its report not
  saved). The attempts of ``--repeats`` within one run are answered once each.
- ``on`` and ``read``: the replies of any earlier run with the same key. The risk: an endpoint that
  serves another checkpoint under the same name and reports the same identity (vLLM's
  ``--served-model-name`` and the same weights path) is answered from the old replies.
- ``write``: store, never read. ``refresh``: ask again and overwrite. ``off``: nothing.

Safe under ``-n 8``: WAL mode, one connection per thread. Replies are committed in batches
(every :data:`BATCH` replies or :data:`BATCH_SECONDS` seconds, and when the process ends its
session), because a commit per reply costs more interpreter time than the request itself on a
fast endpoint (docs/bench.md); a run killed at any moment (SIGKILL, power loss) loses at most the
replies of the last batch, which a re-run asks for again. The keys this run may read are loaded
once, so a lookup of a reply that is not there (every lookup of a fresh run) does not touch the file.
A batch that cannot be stored (a full disk) is counted and its reason kept (``failure``), and the
run goes on: the replies are scored all the same.

A run running now is told from a killed one by its :class:`RunLock`: it is never resumed, and with
``on`` and ``read`` its replies are never read.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # not POSIX: a live run is not told from a killed one (RunLock)
    fcntl = None  # type: ignore[assignment]

MODES = ("resume", "on", "off", "read", "write", "refresh")
DEFAULT_MODE = "resume"
FILENAME = "guitest-cache.sqlite"
LOCKS = "guitest-cache.runs"  # beside the file: one lock file per run running now (RunLock)
BATCH = 32  # replies per commit at most
BATCH_SECONDS = 1.0  # and at most this old when the next reply is stored
OPEN_TRIES = 20


@dataclass(frozen=True)
class Stored:
    """A reply read back from the cache: its text and finish reason, when (epoch seconds) and by which run it was
    recorded, and what its call used and cost then (a tally of :mod:`guitest.cost.usage`; None for a reply of a cache
    written before guitest recorded usage)."""

    text: str
    finish_reason: str | None
    created: float
    run: str | None
    usage: dict[str, Any] | None = None


@dataclass(frozen=True)
class Run:
    """This run as the ledger knows it: its id, the earlier run it resumes (None for a fresh run), and the runs of the
    same model and settings that were running on this cache when it started (passed over: never resumed nor read)."""

    id: str
    resumes: dict[str, Any] | None = None
    running: tuple[dict[str, Any], ...] = ()


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=60, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    return db


def _prepare(path: Path) -> None:
    """Create the file and its tables (or add the ``run`` and ``usage`` columns to a file of an earlier version).

    Several xdist workers may create the file at the same moment: switching to WAL and creating a
    table can meet a lock that the busy timeout does not cover, so retry.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    for attempt in range(OPEN_TRIES):
        try:
            db = _connect(path)
            try:
                db.execute("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, text TEXT NOT NULL, finish_reason TEXT, model TEXT, created REAL, run TEXT, usage TEXT)")
                db.execute("CREATE TABLE IF NOT EXISTS runs (id TEXT PRIMARY KEY, scope TEXT, started REAL, finished REAL, complete INTEGER)")
                columns = {row[1] for row in db.execute("PRAGMA table_info(replies)")}
                if "run" not in columns:
                    db.execute("ALTER TABLE replies ADD COLUMN run TEXT")
                if "usage" not in columns:  # a cache of a version before usage was recorded: its replies' usage is unknown
                    db.execute("ALTER TABLE replies ADD COLUMN usage TEXT")
            finally:
                db.close()
            return
        except sqlite3.OperationalError:
            if attempt == OPEN_TRIES - 1:
                raise
            time.sleep(0.05 * (attempt + 1))


class ResponseCache:
    """A SQLite file of replies, read and written on behalf of one run (``run``: its id; see the module's docstring for ``mode``)."""

    def __init__(self, folder: Path, mode: str = DEFAULT_MODE, run: str = "") -> None:
        if mode not in MODES:
            raise ValueError(f"cache mode {mode!r}: expected one of {', '.join(MODES)}")
        self.mode = mode
        self.run = run
        self.path = Path(folder) / FILENAME
        self._local = threading.local()
        self.write_errors = 0  # replies that could not be stored
        self.failure: str | None = None  # the first reason a batch could not be stored: the file and the error
        self._lock = threading.Lock()
        self._flush_lock = threading.Lock()
        self._pending: dict[str, tuple[str, str, str | None, str, float, str, str | None]] = {}  # stored, not yet committed
        self._since = time.monotonic()
        self._readable: set[str] | None = None  # the keys this run may read back (None: not loaded yet)
        self._live: list[str] = []  # the other runs running now on this cache (read with the keys): never read from
        if mode != "off":
            _prepare(self.path)

    @property
    def reads(self) -> bool:
        return self.mode in ("resume", "on", "read")

    @property
    def writes(self) -> bool:
        return self.mode in ("resume", "on", "write", "refresh")

    def _connect(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = self._local.db = _connect(self.path)
        return db

    @staticmethod
    def key(parts: dict[str, Any]) -> str:
        """A stable digest of the key parts (plain builtins)."""
        return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8")).hexdigest()

    def _where(self) -> tuple[str, tuple[Any, ...]]:
        """The SQL condition of the rows this run may read: its own (``resume``), or any but those of the runs that
        were running on this cache when it first read (``on``, ``read``): their replies are never read."""
        if self.mode == "resume":
            return ("run = ?", (self.run,))
        if not self._live:
            return ("1", ())
        return (f"(run IS NULL OR run NOT IN ({', '.join('?' * len(self._live))}))", tuple(self._live))

    def get(self, key: str) -> Stored | None:
        """The reply stored under ``key`` that this run may read back, or None (also when this mode does not read)."""
        if not self.reads:
            return None
        with self._lock:
            pending = self._pending.get(key)
        if pending is not None:
            return Stored(pending[1], pending[2], pending[4], pending[5], _usage(pending[6]))
        try:
            if self._readable is None:
                with self._lock:
                    if self._readable is None:
                        if self.mode != "resume":
                            self._live = live_runs(self.path.parent, self.run)
                        condition, args = self._where()
                        self._readable = {k for (k,) in self._connect().execute(f"SELECT key FROM replies WHERE {condition}", args)}
            if key not in self._readable:
                return None
            condition, args = self._where()
            row = self._connect().execute(f"SELECT text, finish_reason, created, run, usage FROM replies WHERE key = ? AND {condition}", (key, *args)).fetchone()
        except (sqlite3.Error, OSError):
            return None  # a cache that cannot be read is a miss, never a failed case
        return Stored(row[0], row[1], row[2] or 0.0, row[3], _usage(row[4])) if row else None

    def put(self, key: str, text: str, finish_reason: str | None, model: str, usage: dict[str, Any] | None = None) -> None:
        """Store a reply (and its call's tally, ``usage``) when this mode writes: committed with its batch (see the module's docstring)."""
        if not self.writes:
            return
        with self._lock:
            self._pending[key] = (key, text, finish_reason, model, time.time(), self.run, json.dumps(usage) if usage else None)
            due = len(self._pending) >= BATCH or time.monotonic() - self._since >= BATCH_SECONDS
        if due:
            self.flush()

    def flush(self) -> None:
        """Commit every reply stored so far. Returns once they are in the file (or counted as write errors)."""
        with self._flush_lock:  # one commit at a time: a second flush waits for the first one's rows to land
            with self._lock:
                rows, self._pending = list(self._pending.values()), {}
                self._since = time.monotonic()
            if not rows:
                return
            try:
                _commit(self._connect(), rows)
            except sqlite3.Error as exc:
                self.write_errors += len(rows)  # the replies are still scored; they will only be asked again next run
                if self.failure is None:
                    self.failure = f"{self.path}: {exc}"
                return
            with self._lock:
                if self._readable is not None:
                    self._readable.update(r[0] for r in rows)

    def close(self) -> None:
        """Commit what is pending, then close this thread's connection. Safe to call more than once."""
        if self.writes:
            self.flush()
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None


def _commit(db: sqlite3.Connection, rows: list[tuple[str, str, str | None, str, float, str, str | None]]) -> None:
    """Store a batch of replies in one transaction."""
    with db:
        db.execute("BEGIN")
        db.executemany("INSERT OR REPLACE INTO replies (key, text, finish_reason, model, created, run, usage) VALUES (?, ?, ?, ?, ?, ?, ?)", rows)


def _usage(text: str | None) -> dict[str, Any] | None:
    """A stored call's tally, or None (none recorded, or not readable)."""
    if not text:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def failure_message(failure: str) -> str:
    """What a run says, once, when its response cache cannot store replies (``failure``: the file and the error)."""
    return (
        f"the response cache cannot store replies ({failure}). The run goes on and every reply is still scored and "
        "reported, but replies not stored would be asked again if this run were resumed. Free space there, or pass "
        "--cache-dir=DIR on another disk (--cache=off stores nothing)"
    )


def new_run_id() -> str:
    """A run id: the local start time and a random suffix, e.g. ``20261201T081502-3f9a1c``."""
    return time.strftime("%Y%m%dT%H%M%S") + "-" + os.urandom(3).hex()


def open_run(folder: Path, scope: str, resume: bool) -> tuple[Run, RunLock]:
    """Record the start of a run of ``scope`` (a digest of the model and its settings) in the ledger beside the cache,
    and take its lock (:class:`RunLock`), which the caller holds until the run ends.

    Runs of the same scope that are running now (their lock is held) are passed over: never resumed, and named
    in ``Run.running``. The run resumes the latest other run of the same scope when ``resume`` (``--lf``) or when
    that run did not end complete (it was killed, finished with cases missing, or its report was not saved); else
    it is a fresh run. A resumed run keeps the earlier run's id, so it reads the replies that run recorded.
    """
    folder = Path(folder)
    path = folder / FILENAME
    _prepare(path)
    db = _connect(path)
    try:
        running: list[dict[str, Any]] = []
        for run_id, started in db.execute("SELECT id, started FROM runs WHERE scope = ? ORDER BY started DESC", (scope,)).fetchall():
            lock = RunLock.take(folder, run_id)
            if lock is None:  # running now, in another process
                running.append({"id": run_id, "started": started, "pid": RunLock.holder(folder, run_id)})
                continue
            # the latest run that is over: read again under its lock (it may have ended since the list was read)
            finished, complete = db.execute("SELECT finished, complete FROM runs WHERE id = ?", (run_id,)).fetchone()
            if resume or not complete:
                why = "--lf" if resume else ("it did not finish" if finished is None else "it ended with cases missing, or its report or the copies of it not saved")
                db.execute("UPDATE runs SET finished = NULL, complete = 0 WHERE id = ?", (run_id,))
                return Run(run_id, {"id": run_id, "started": started, "why": why}, tuple(running)), lock
            lock.release()
            break
        run = Run(new_run_id(), None, tuple(running))
        lock = RunLock.take(folder, run.id)
        assert lock is not None, "a new run id is never locked"
        db.execute("INSERT INTO runs (id, scope, started, finished, complete) VALUES (?, ?, ?, NULL, 0)", (run.id, scope, time.time()))
        return run, lock
    finally:
        db.close()


def close_run(folder: Path, run: str, complete: bool) -> None:
    """Record the end of ``run``: ``complete`` when every selected case produced a result and its reports were written."""
    path = Path(folder) / FILENAME
    try:
        db = _connect(path)
        try:
            db.execute("UPDATE runs SET finished = ?, complete = ? WHERE id = ?", (time.time(), int(complete), run))
        finally:
            db.close()
    except sqlite3.Error:
        pass  # the next run then resumes this one, which only reads what this run itself recorded


class RunLock:
    """A run's lock, held by the process that runs it (the xdist controller, or a serial run) for the run's whole life:
    an exclusive ``flock`` on ``<cache folder>/guitest-cache.runs/<run id>.lock``. The OS releases it when that process
    dies, however it dies, so a run whose lock can be taken is over (ended or killed) and one whose lock is held is
    running now. Without ``fcntl`` (Windows) every lock can be taken: runs are told apart by the ledger alone."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @staticmethod
    def file(folder: Path, run_id: str) -> Path:
        """The lock file of run ``run_id`` in the cache folder ``folder``."""
        return Path(folder) / LOCKS / f"{run_id}.lock"

    @classmethod
    def take(cls, folder: Path, run_id: str) -> RunLock | None:
        """The lock of run ``run_id``, or None when another process holds it (that run is running now)."""
        path = cls.file(folder, run_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            if fcntl is None:
                return cls(path, fd)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                return None
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(path))
            except FileNotFoundError:
                same = False
            if same:
                with contextlib.suppress(OSError):  # the process id only helps a message (holder)
                    os.ftruncate(fd, 0)
                    os.write(fd, f"{os.getpid()}\n".encode())
                return cls(path, fd)
            os.close(fd)  # its holder removed the file as its run ended, after this process opened it: lock the new one

    @classmethod
    def held(cls, folder: Path, run_id: str) -> bool:
        """Whether run ``run_id`` is running now (another process holds its lock). Only looks: creates and removes nothing,
        so it works on a cache folder this process may only read."""
        if fcntl is None:
            return False
        try:
            fd = os.open(cls.file(folder, run_id), os.O_RDONLY)
        except OSError:
            return False  # no lock file: no process holds it (a run holds its file from start to end)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # shared: two processes looking at once never see each other
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False

    @classmethod
    def holder(cls, folder: Path, run_id: str) -> int | None:
        """The process id written by the holder of run ``run_id``'s lock, if it can be read."""
        try:
            return int(cls.file(folder, run_id).read_text("ascii").strip())
        except (OSError, ValueError):
            return None

    def release(self) -> None:
        """Remove the lock file and release the lock (removed first, while held, so no other process locks a file
        that is about to go). Safe to call more than once."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            self.path.unlink()
        os.close(self._fd)
        self._fd = None


def live_runs(folder: Path, own: str) -> list[str]:
    """The ids of the runs other than ``own`` that are running now on the cache in ``folder`` (their lock is held)."""
    path = Path(folder) / FILENAME
    db = _connect(path)
    try:
        unfinished = [run_id for (run_id,) in db.execute("SELECT id FROM runs WHERE finished IS NULL AND id != ?", (own,))]
    finally:
        db.close()
    return [run_id for run_id in unfinished if RunLock.held(folder, run_id)]


def image_digest(sent_data: bytes | None, image_path: str, sent_size: tuple[int, int]) -> str:
    """A digest of the image as sent: its encoded bytes when there are any, else the file and the size sent."""
    h = hashlib.sha256()
    if sent_data is not None:
        h.update(sent_data)
    else:
        with open(image_path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        h.update(f"{sent_size[0]}x{sent_size[1]}".encode())
    return h.hexdigest()
