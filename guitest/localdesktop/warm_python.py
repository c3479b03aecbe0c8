"""A Python interpreter kept running with pyautogui imported, so an action's ``python -c`` costs milliseconds.

The desktop server hands it the code of an ``["python", "-c", "import pyautogui; ..."]`` command
instead of starting a new interpreter (0.3-0.4 s each, mostly importing pyautogui). What the code
sees is what ``python -c`` gives it: a fresh ``__main__`` namespace, pyautogui's default settings,
the home folder as working directory, and its standard output and error (its subprocesses' too)
captured at the file-descriptor level and returned with the exit status. A run that exceeds its
timeout kills the interpreter (and what it started); the next run starts a new one.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import threading
from typing import Any

PRELOAD = "pyautogui"


class WarmTimeout(Exception):
    """The code ran longer than its timeout; the interpreter was killed."""


class WarmPython:
    """One warm interpreter (``python``), run with ``env`` in ``cwd``; one run at a time (:meth:`busy` says so)."""

    def __init__(self, python: str = sys.executable, env: dict[str, str] | None = None, cwd: str | None = None) -> None:
        self.python = python
        self.env = env
        self.cwd = cwd
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._req: int | None = None
        self._rep: Any = None

    def _start(self) -> None:
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        self._proc = subprocess.Popen(
            [self.python, "-m", "guitest.localdesktop.warm_python", str(req_r), str(rep_w)],
            pass_fds=(req_r, rep_w),
            env=self.env,
            cwd=self.cwd,
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(req_r)
        os.close(rep_w)
        self._req = req_w
        self._rep = os.fdopen(rep_r, "rb")

    def try_run(self, code: str, timeout: float) -> dict[str, Any] | None:
        """Run ``code`` and return ``{output, error, returncode}``; None when a run is already going on
        (the caller then starts its own ``python -c``). WarmTimeout after ``timeout`` seconds."""
        if not self._lock.acquire(blocking=False):
            return None
        try:
            for attempt in range(2):
                if self._proc is None or self._proc.poll() is not None:
                    self._stop()
                    self._start()
                try:
                    return self._run(code, timeout)
                except (BrokenPipeError, EOFError):
                    self._stop()  # the interpreter died between runs (or during this one): one more try
                    if attempt:
                        raise
            raise AssertionError("unreachable")
        finally:
            self._lock.release()

    def _run(self, code: str, timeout: float) -> dict[str, Any]:
        assert self._req is not None and self._rep is not None
        os.write(self._req, json.dumps({"code": code}).encode() + b"\n")
        sel = selectors.DefaultSelector()
        sel.register(self._rep, selectors.EVENT_READ)
        try:
            if not sel.select(timeout):
                self._stop()
                raise WarmTimeout(f"timed out after {timeout:g} s")
        finally:
            sel.close()
        line = self._rep.readline()
        if not line:
            raise EOFError("the warm interpreter exited")
        return json.loads(line)

    def _stop(self) -> None:
        if self._proc is not None:
            try:
                os.killpg(self._proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self._proc.wait()
        for closer in (lambda: os.close(self._req) if self._req is not None else None, lambda: self._rep and self._rep.close()):
            try:
                closer()
            except OSError:
                pass
        self._proc, self._req, self._rep = None, None, None

    @property
    def pid(self) -> int | None:
        """The interpreter's process id while it runs."""
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    def close(self) -> None:
        """Stop the interpreter."""
        with self._lock:
            self._stop()


def _child(req_fd: int, rep_fd: int) -> None:
    """The warm interpreter's loop: one JSON request per line in, one JSON reply per line out."""
    import builtins
    import importlib
    import tempfile
    import traceback

    module = importlib.import_module(PRELOAD)
    defaults = {name: getattr(module, name) for name in ("PAUSE", "FAILSAFE", "MINIMUM_DURATION", "MINIMUM_SLEEP") if hasattr(module, name)}
    requests = os.fdopen(req_fd, "rb")
    replies = os.fdopen(rep_fd, "wb")
    home = os.getcwd()
    saved = os.dup(1), os.dup(2)
    for line in requests:
        code = json.loads(line)["code"]
        for name, value in defaults.items():
            setattr(module, name, value)
        os.chdir(home)
        sys.argv = ["-c"]
        out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        status = 0
        try:
            exec(compile(code, "<string>", "exec"), {"__name__": "__main__", "__builtins__": builtins})  # noqa: S102 - the protocol runs code
        except SystemExit as exc:
            status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if exc.code is not None and not isinstance(exc.code, int):
                print(exc.code, file=sys.stderr)
        except BaseException:  # noqa: BLE001 - reported like python -c reports it
            traceback.print_exc()
            status = 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
        texts = []
        for f in (out, err):
            f.seek(0)
            texts.append(f.read().decode("utf-8", "replace"))
            f.close()
        replies.write(json.dumps({"output": texts[0], "error": texts[1], "returncode": status}).encode() + b"\n")
        replies.flush()


if __name__ == "__main__":
    _child(int(sys.argv[1]), int(sys.argv[2]))
