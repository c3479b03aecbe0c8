"""The response cache: every model reply stored in SQLite, keyed by everything the reply depends on.

Key: the model spec and adapter, the profile, the prompt (system and user), a digest of
the image as sent (the encoded bytes when the adapter encodes, else the file plus the
size sent), the generation settings and the attempt index. A re-run (``--lf`` after a
crash, a ``-k`` subset, the same run again) answers from it without calling the model.

Safe under ``-n 8``: WAL mode, one connection per thread. Replies are committed in
batches (every :data:`BATCH` replies or :data:`BATCH_SECONDS` seconds, and at the end
of the run), because a commit per reply costs more interpreter time than the request
itself on a fast endpoint (docs/bench.md); a run killed at any moment (SIGKILL, power
loss) loses at most the replies of the last batch, which a re-run asks for again. The
keys stored when a process first reads the cache are kept in memory, so a lookup of a
reply that is not there (every lookup of a first run) does not touch the file; a reply
another process stores later is not seen, and is asked for again, which is never wrong.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

MODES = ("on", "off", "read", "write", "refresh")
FILENAME = "guitest-cache.sqlite"
BATCH = 32  # replies per commit at most
BATCH_SECONDS = 1.0  # and at most this old when the next reply is stored


class ResponseCache:
    """A SQLite file of replies. ``mode``: on (read and write), off, read (never write), write (never read), refresh (overwrite)."""

    def __init__(self, folder: Path, mode: str = "on") -> None:
        if mode not in MODES:
            raise ValueError(f"cache mode {mode!r}: expected one of {', '.join(MODES)}")
        self.mode = mode
        self.path = Path(folder) / FILENAME
        self._local = threading.local()
        self.write_errors = 0
        self._lock = threading.Lock()
        self._pending: dict[str, tuple[str, str, str | None, str, float]] = {}  # stored, not yet committed
        self._since = time.monotonic()
        self._stored: set[str] | None = None  # the keys in the file when first read (None: not read yet)
        if mode != "off":
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Several xdist workers may create the file at the same moment: switching to WAL and
            # creating the table can meet a lock that the busy timeout does not cover, so retry.
            for attempt in range(20):
                try:
                    self._connect().execute(
                        "CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, text TEXT NOT NULL, finish_reason TEXT, model TEXT, created REAL)"
                    )
                    break
                except sqlite3.OperationalError:
                    self.close()
                    if attempt == 19:
                        raise
                    time.sleep(0.05 * (attempt + 1))

    @property
    def reads(self) -> bool:
        return self.mode in ("on", "read")

    @property
    def writes(self) -> bool:
        return self.mode in ("on", "write", "refresh")

    def _connect(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            self._local.db = db
        return db

    @staticmethod
    def key(parts: dict[str, Any]) -> str:
        """A stable digest of the key parts (plain builtins)."""
        return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8")).hexdigest()

    def get(self, key: str) -> tuple[str, str | None] | None:
        """``(text, finish_reason)`` stored under ``key``, or None (also when this mode does not read)."""
        if not self.reads:
            return None
        with self._lock:
            pending = self._pending.get(key)
        if pending is not None:
            return pending[1], pending[2]
        try:
            if self._stored is None:
                with self._lock:
                    if self._stored is None:
                        self._stored = {k for (k,) in self._connect().execute("SELECT key FROM replies")}
            if key not in self._stored:
                return None
            row = self._connect().execute("SELECT text, finish_reason FROM replies WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error:
            return None  # a cache that cannot be read is a miss, never a failed case
        return (row[0], row[1]) if row else None

    def put(self, key: str, text: str, finish_reason: str | None, model: str) -> None:
        """Store a reply when this mode writes: committed with its batch (see the module's docstring)."""
        if not self.writes:
            return
        with self._lock:
            self._pending[key] = (key, text, finish_reason, model, time.time())
            due = len(self._pending) >= BATCH or time.monotonic() - self._since >= BATCH_SECONDS
        if due:
            self.flush()

    def flush(self) -> None:
        """Commit every reply stored so far."""
        with self._lock:
            rows, self._pending = list(self._pending.values()), {}
            self._since = time.monotonic()
        if not rows:
            return
        try:
            db = self._connect()
            with db:  # one transaction
                db.execute("BEGIN")
                db.executemany("INSERT OR REPLACE INTO replies (key, text, finish_reason, model, created) VALUES (?, ?, ?, ?, ?)", rows)
        except sqlite3.Error:
            self.write_errors += len(rows)  # the replies are still scored; they will only be asked again next run

    def close(self) -> None:
        """Commit what is pending, then close this thread's connection."""
        if self.writes:
            self.flush()
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None


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
