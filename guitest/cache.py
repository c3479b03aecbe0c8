"""The response cache: every model reply stored in SQLite, keyed by everything the reply depends on.

Key: the model spec and adapter, the profile, the prompt (system and user), a digest of
the image as sent (the encoded bytes when the adapter encodes, else the file plus the
size sent), the generation settings and the attempt index. A re-run (``--lf`` after a
crash, a ``-k`` subset, the same run again) answers from it without calling the model.
Safe under ``-n 8``: WAL mode, one connection per thread, a commit per reply, so a run
killed at any moment loses at most the replies in flight.
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


class ResponseCache:
    """A SQLite file of replies. ``mode``: on (read and write), off, read (never write), write (never read), refresh (overwrite)."""

    def __init__(self, folder: Path, mode: str = "on") -> None:
        if mode not in MODES:
            raise ValueError(f"cache mode {mode!r}: expected one of {', '.join(MODES)}")
        self.mode = mode
        self.path = Path(folder) / FILENAME
        self._local = threading.local()
        self.write_errors = 0
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
        try:
            row = self._connect().execute("SELECT text, finish_reason FROM replies WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error:
            return None  # a cache that cannot be read is a miss, never a failed case
        return (row[0], row[1]) if row else None

    def put(self, key: str, text: str, finish_reason: str | None, model: str) -> None:
        """Store a reply (committed at once) when this mode writes."""
        if not self.writes:
            return
        try:
            self._connect().execute(
                "INSERT OR REPLACE INTO replies (key, text, finish_reason, model, created) VALUES (?, ?, ?, ?, ?)",
                (key, text, finish_reason, model, time.time()),
            )
        except sqlite3.Error:
            self.write_errors += 1  # the reply is still scored; it will only be asked again next run

    def close(self) -> None:
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
