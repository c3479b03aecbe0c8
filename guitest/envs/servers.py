"""Local web servers for live tasks, bound to 127.0.0.1 by default, one of each kind per process, stopped by :func:`shutdown`.

- :func:`static` serves a folder (a web app's files, MiniWoB++'s html folder) from a thread.
- :func:`command` starts a suite's own server process (``["python3", "server.py", "--port", "{port}"]``):
  ``{port}`` becomes a free port and ``{host}`` the address to listen on; the server is ready when ``ready_path``
  answers. Its output goes to a log file whose path an EnvFailure names when it does not come up.

A browser on another host (``browser_endpoints``, :mod:`.browser`) cannot reach 127.0.0.1 here: :func:`address` reads
the options that say where to listen (``serve_bind``) and the name the remote browser uses for this host
(``serve_host``), and the URLs handed out carry that name.
"""

from __future__ import annotations

import atexit
import functools
import http.server
import os
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from typing import Any, Mapping, Sequence

from ..live.protocol import EnvFailure

HOST = "127.0.0.1"
#: bind addresses that listen on every interface: the URL needs a name the browser can reach (serve_host)
EVERY_INTERFACE = ("0.0.0.0", "::", "")

_lock = threading.Lock()
_static: dict[tuple[str, str, str], tuple[http.server.ThreadingHTTPServer, str]] = {}
_commands: dict[tuple[tuple[str, ...], str, str, str], tuple[subprocess.Popen[bytes], str]] = {}


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


def address(options: Mapping[str, Any] | None = None) -> tuple[str, str]:
    """Where guitest's page servers listen and the host name their URLs carry: ``options["serve_bind"]`` (default
    127.0.0.1) and ``options["serve_host"]`` (default: the bind address). EnvFailure when binding every interface
    without a name to put in the URLs."""
    options = options or {}
    bind = str(options.get("serve_bind") or HOST).strip()
    host = str(options.get("serve_host") or "").strip()
    if not host:
        if bind in EVERY_INTERFACE:
            raise EnvFailure(f"serve_bind {bind!r} listens on every interface: give serve_host (--serve-host), the name or address remote browsers reach this host by")
        host = bind
    return bind, host


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def static(root: str, options: Mapping[str, Any] | None = None) -> str:
    """The base URL (``http://127.0.0.1:PORT/``, or the ``serve_host`` of :func:`address`) of a server for the folder
    ``root``, started on first use."""
    root = os.path.realpath(root)
    if not os.path.isdir(root):
        raise EnvFailure(f"cannot serve {root}: no such folder")
    bind, host = address(options)
    key = (root, bind, host)
    with _lock:
        if key in _static:
            return _static[key][1]
        try:
            server = _Server((bind, 0), functools.partial(_QuietHandler, directory=root))
        except OSError as exc:
            raise EnvFailure(f"cannot serve {root} on {bind}: {exc}; check serve_bind (--serve-bind), an address of this host") from None
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, name=f"guitest-static-{server.server_port}", daemon=True).start()
        url = f"http://{_url_host(host)}:{server.server_port}/"
        _static[key] = (server, url)
        return url


class _Server(http.server.ThreadingHTTPServer):
    """A threading HTTP server on IPv4 or IPv6, by the bind address."""

    def __init__(self, address: tuple[str, int], handler: Any) -> None:
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        super().__init__(address, handler)


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def command(argv: Sequence[str], cwd: str, ready_path: str = "/", timeout: float = 20.0, options: Mapping[str, Any] | None = None) -> str:
    """The base URL of the server ``argv`` starts in ``cwd`` (``{port}`` in an argument becomes a free port, ``{host}``
    the address to listen on: ``serve_bind`` of :func:`address`), started on first use and reused by later episodes in
    this process; EnvFailure when it exits or does not answer."""
    bind, host = address(options)
    key = (tuple(argv), os.path.realpath(cwd), bind, host)
    with _lock:
        running = _commands.get(key)
        if running is not None and running[0].poll() is None:
            return running[1]
        port = free_port()
        args = [a.replace("{port}", str(port)).replace("{host}", bind) for a in argv]
        log = tempfile.NamedTemporaryFile(prefix="guitest-server-", suffix=".log", delete=False)
        try:
            proc = subprocess.Popen(args, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as exc:
            raise EnvFailure(f"cannot start the suite's server {args} in {cwd}: {exc}") from None
        finally:
            log.close()
        url = f"http://{_url_host(host)}:{port}/"
        probe = f"http://{HOST if bind in EVERY_INTERFACE else _url_host(bind)}:{port}/"  # asked from this host
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise EnvFailure(f"the suite's server {args} exited with status {proc.returncode} before answering; its output is in {log.name}")
            try:
                with urllib.request.urlopen(probe + ready_path.lstrip("/"), timeout=1):
                    break
            except urllib.error.HTTPError:
                break  # it answers, even if not 200
            except (urllib.error.URLError, OSError):
                if time.monotonic() > deadline:
                    _stop(proc)
                    raise EnvFailure(f"the suite's server {args} did not answer {probe}{ready_path.lstrip('/')} within {timeout:g} s; its output is in {log.name}") from None
                time.sleep(0.05)
        _commands[key] = (proc, url)
        return url


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=5)
    except (ProcessLookupError, PermissionError):
        pass
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=5)


def shutdown() -> None:
    """Stop every server this process started (safe to call twice)."""
    with _lock:
        for server, _ in _static.values():
            server.shutdown()
            server.server_close()
        _static.clear()
        for proc, _ in _commands.values():
            _stop(proc)
        _commands.clear()


atexit.register(shutdown)
