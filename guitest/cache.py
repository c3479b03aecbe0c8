"""The response cache: every model reply stored in SQLite, keyed by everything the reply depends on,
and the ledger of runs that decides whose replies a run may read back.

Key: the model spec and adapter, the profile, the endpoint (base URL without credentials) and the
model identity it reports, the prompt (system and user), a digest of the image as sent (the encoded
bytes when the adapter encodes, else the file plus the size sent), the generation settings and the
attempt index (:func:`guitest.case.key_parts`).

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
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MODES = ("resume", "on", "off", "read", "write", "refresh")
DEFAULT_MODE = "resume"
FILENAME = "guitest-cache.sqlite"
BATCH = 32  # replies per commit at most
BATCH_SECONDS = 1.0  # and at most this old when the next reply is stored
OPEN_TRIES = 20


@dataclass(frozen=True)
class Stored:
    """A reply read back from the cache: its text and finish reason, when (epoch seconds) and by which run it was recorded."""

    text: str
    finish_reason: str | None
    created: float
    run: str | None


@dataclass(frozen=True)
class Run:
    """This run as the ledger knows it: its id, and the earlier run it resumes (None for a fresh run)."""

    id: str
    resumes: dict[str, Any] | None = None


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=60, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    return db


def _prepare(path: Path) -> None:
    """Create the file and its tables (or add the ``run`` column to a file of an earlier version).

    Several xdist workers may create the file at the same moment: switching to WAL and creating a
    table can meet a lock that the busy timeout does not cover, so retry.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    for attempt in range(OPEN_TRIES):
        try:
            db = _connect(path)
            try:
                db.execute(
                    "CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, text TEXT NOT NULL, finish_reason TEXT, model TEXT, created REAL, run TEXT)"
                )
                db.execute("CREATE TABLE IF NOT EXISTS runs (id TEXT PRIMARY KEY, scope TEXT, started REAL, finished REAL, complete INTEGER)")
                columns = {row[1] for row in db.execute("PRAGMA table_info(replies)")}
                if "run" not in columns:
                    db.execute("ALTER TABLE replies ADD COLUMN run TEXT")
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
        self._pending: dict[str, tuple[str, str, str | None, str, float, str]] = {}  # stored, not yet committed
        self._since = time.monotonic()
        self._readable: set[str] | None = None  # the keys this run may read back (None: not loaded yet)
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
        """The SQL condition of the rows this run may read."""
        return ("run = ?", (self.run,)) if self.mode == "resume" else ("1", ())

    def get(self, key: str) -> Stored | None:
        """The reply stored under ``key`` that this run may read back, or None (also when this mode does not read)."""
        if not self.reads:
            return None
        with self._lock:
            pending = self._pending.get(key)
        if pending is not None:
            return Stored(pending[1], pending[2], pending[4], pending[5])
        condition, args = self._where()
        try:
            if self._readable is None:
                with self._lock:
                    if self._readable is None:
                        self._readable = {k for (k,) in self._connect().execute(f"SELECT key FROM replies WHERE {condition}", args)}
            if key not in self._readable:
                return None
            row = self._connect().execute(f"SELECT text, finish_reason, created, run FROM replies WHERE key = ? AND {condition}", (key, *args)).fetchone()
        except sqlite3.Error:
            return None  # a cache that cannot be read is a miss, never a failed case
        return Stored(row[0], row[1], row[2] or 0.0, row[3]) if row else None

    def put(self, key: str, text: str, finish_reason: str | None, model: str) -> None:
        """Store a reply when this mode writes: committed with its batch (see the module's docstring)."""
        if not self.writes:
            return
        with self._lock:
            self._pending[key] = (key, text, finish_reason, model, time.time(), self.run)
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


def _commit(db: sqlite3.Connection, rows: list[tuple[str, str, str | None, str, float, str]]) -> None:
    """Store a batch of replies in one transaction."""
    with db:
        db.execute("BEGIN")
        db.executemany("INSERT OR REPLACE INTO replies (key, text, finish_reason, model, created, run) VALUES (?, ?, ?, ?, ?, ?)", rows)


def failure_message(failure: str) -> str:
    """What a run says, once, when its response cache cannot store replies (``failure``: the file and the error)."""
    return (f"the response cache cannot store replies ({failure}). The run goes on and every reply is still scored and "
            "reported, but replies not stored would be asked again if this run were resumed. Free space there, or pass "
            "--cache-dir=DIR on another disk (--cache=off stores nothing)")


def new_run_id() -> str:
    """A run id: the local start time and a random suffix, e.g. ``20261201T081502-3f9a1c``."""
    return time.strftime("%Y%m%dT%H%M%S") + "-" + os.urandom(3).hex()


def open_run(folder: Path, scope: str, resume: bool) -> Run:
    """Record the start of a run of ``scope`` (a digest of the model and its settings) in the ledger beside the cache.

    The run resumes the latest earlier run of the same scope when ``resume`` (``--lf``) or when that
    run did not end complete (it never finished, or finished with cases missing); else it is a fresh run.
    A resumed run keeps the earlier run's id, so it reads the replies that run recorded.
    """
    path = Path(folder) / FILENAME
    _prepare(path)
    db = _connect(path)
    try:
        row = db.execute("SELECT id, started, finished, complete FROM runs WHERE scope = ? ORDER BY started DESC LIMIT 1", (scope,)).fetchone()
        if row is not None and (resume or not row[3]):
            why = "--lf" if resume else ("it did not finish" if row[2] is None else "it ended with cases missing or its report not saved")
            db.execute("UPDATE runs SET finished = NULL, complete = 0 WHERE id = ?", (row[0],))
            return Run(row[0], {"id": row[0], "started": row[1], "why": why})
        run = Run(new_run_id())
        db.execute("INSERT INTO runs (id, scope, started, finished, complete) VALUES (?, ?, ?, NULL, 0)", (run.id, scope, time.time()))
        return run
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
