"""A client of the machine server OSWorld and Windows Agent Arena run on their VMs (and guitest's own local desktop).

Standard library HTTP only (``http.client`` opens the connection and sends the request, guitest's
:func:`~guitest.models.transport.read_response` reads the answer), a fresh connection per request, bounded
retries, and a timeout that is a deadline for each attempt as a whole (connect, send, wait, read): a machine
dripping its answer a byte at a time cannot stretch a request past it. Every failure is a
:class:`MachineFailure` (an :class:`~guitest.live.protocol.EnvFailure`) whose ``kind`` says what happened
and whose message says what to check:

========================  ==================================================================  =========
kind                      what happened                                                       taken out
========================  ==================================================================  =========
``unreachable``           the connection could not be opened (refused, no route, DNS)          yes
``dropped``               the server closed the connection before it answered                  yes
``timeout``               no answer within the client's timeout                                yes
``command_timeout``       the server answered that the command it ran timed out                no
``server_error``          HTTP 5xx (after retries for requests that are safe to repeat)       no
``bad_reply``             an answer of the wrong shape (not a PNG, not JSON, HTTP 4xx)         no
========================  ==================================================================  =========

"Taken out" (:attr:`MachineFailure.taken_out`): the machine stopped answering, so a pool stops giving
it to episodes. Requests that change the machine (``/execute``, ``/setup/*``) are retried only when the
connection could not be opened, never once sent: a click must not run twice.

Every text from the machine that goes into a message (error bodies, content types, replies of the wrong shape)
is shown through :func:`guitest.printable.printable`: control characters escaped, so a body holding
``ESC ] 0; ... BEL`` or ``ESC [ 2J`` cannot retitle or clear the user's terminal.

A guitest desktop (``guitest desktop up``, :mod:`guitest.localdesktop`) takes requests only with its secret. The client
sends ``Authorization: Bearer <token>`` when it has one: given as ``token``; else the token file of this user's own
desktop serving that loopback port (found through its state file, :func:`guitest.localdesktop.state.token_for`); else
``$GUITEST_DESKTOP_TOKEN`` for a loopback URL. OSWorld's and WAA's servers take no token and get none (their
URLs are no desktop's of this user, and not loopback).
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any, Sequence
from urllib.parse import urlencode, urlsplit

from ..localdesktop.state import LOOPBACK, TOKEN_VAR, token_for
from ..live.protocol import EnvFailure
from ..models.transport import HTTPFailure, read_response
from ..printable import printable

#: what OSWorld's and WAA's PythonController put before an action's pyautogui code
PYAUTOGUI_PREFIX = "import pyautogui; import time; pyautogui.FAILSAFE = False; "
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

UNREACHABLE, DROPPED, TIMEOUT, COMMAND_TIMEOUT, SERVER_ERROR, BAD_REPLY = (
    "unreachable",
    "dropped",
    "timeout",
    "command_timeout",
    "server_error",
    "bad_reply",
)
#: guitest's own endpoints (guitest/localdesktop/server.py): the reset between episodes, and what the server offers
RESET_PATH, INFO_PATH = "/guitest/reset", "/guitest/info"
#: failures after which the machine is considered gone
TAKEN_OUT = (UNREACHABLE, DROPPED, TIMEOUT)

_HINTS = {
    UNREACHABLE: "is its server running and reachable from here? For a local desktop run `guitest desktop up`; "
    "for an OSWorld or Windows Agent Arena VM check that the VM is up and its port (5000) is open",
    DROPPED: "the machine may have crashed or restarted its server",
    TIMEOUT: "the machine or its server is stuck (or far too slow); restart it",
    COMMAND_TIMEOUT: "the command ran longer than the server allows; the machine itself still answers",
    SERVER_ERROR: "the machine's server failed on this request; see its message",
    BAD_REPLY: "the machine's server does not speak the protocol guitest expects here",
}
_AUTH_HINT = (
    "a guitest desktop takes requests only with its secret: guitest finds the secret of a desktop its own user "
    "started (`guitest desktop up` prints where it is); for another user's desktop set GUITEST_DESKTOP_TOKEN"
)


class MachineFailure(EnvFailure):
    """A machine request failed; ``kind`` is one of the kinds in the module's table, ``url`` the machine,
    ``status`` the HTTP status when the server answered with an error (None when it did not answer)."""

    def __init__(self, kind: str, url: str, request: str, detail: str, status: int | None = None) -> None:
        self.kind = kind
        self.url = url
        self.request = request
        self.detail = printable(detail)
        self.status = status
        hint = _AUTH_HINT if status in (401, 403) else _HINTS[kind]
        super().__init__(printable(f"desktop machine {url}: {request}: {detail} ({hint})"))

    def within(self, context: str) -> "MachineFailure":
        """The same failure with ``context`` (a set-up step, a getter) named before the request."""
        return MachineFailure(self.kind, self.url, f"{context}: {self.request}", self.detail, self.status)

    @property
    def taken_out(self) -> bool:
        """Whether the machine stopped answering, so it should serve no more episodes."""
        return self.kind in TAKEN_OUT


@dataclass(frozen=True)
class Reply:
    """One HTTP answer: status, content type and body."""

    status: int
    content_type: str
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8"))

    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


def shown_url(url: str) -> str:
    """``url`` without credentials (``http://user:secret@host`` shows as ``http://host``), for messages; a name
    that is not a URL (a provider's machine, ``docker:...``) as it is."""
    if "://" not in url:
        return url
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:  # not a number: shown as written, for the message that says so
        port = ":" + parts.netloc.rpartition(":")[2]
    return f"{parts.scheme}://{host}{port}{parts.path.rstrip('/')}"


def multipart(fields: dict[str, str], files: dict[str, tuple[str, bytes]]) -> tuple[bytes, str]:
    """A ``multipart/form-data`` body and its content type, for form fields and files (name -> (filename, bytes))."""
    boundary = f"guitest-{uuid.uuid4().hex}"
    out = bytearray()
    for name, value in fields.items():
        out += f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode()
        out += value.encode("utf-8") + b"\r\n"
    for name, (filename, data) in files.items():
        safe = filename.replace('"', "_").replace("\r", "_").replace("\n", "_")
        out += (f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{safe}"\r\nContent-Type: application/octet-stream\r\n\r\n').encode()
        out += data + b"\r\n"
    out += f"--{boundary}--\r\n".encode()
    return bytes(out), f"multipart/form-data; boundary={boundary}"


def _excerpt(reply: Reply, limit: int = 300) -> str:
    """What a failed answer says: its JSON ``message``/``error`` when it has one, else the start of its text; its
    control characters escaped (:func:`~guitest.printable.printable`)."""
    text = reply.text()
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        text = str(data.get("message") or data.get("error") or text)
    text = printable(" ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 3] + "..."


# What each machine (by URL) said of itself at ``GET /guitest/info``, shared by every client of this process: an episode
# makes a client of its own, and the answer is the machine's, not the episode's.
_INFO: dict[str, dict[str, Any]] = {}
_INFO_LOCK = threading.Lock()


def forget(url: str) -> None:
    """Forget what the machine at ``url`` said of itself (its server was replaced: a new one may offer more)."""
    with _INFO_LOCK:
        _INFO.pop(shown_url(url.rstrip("/")), None)


class MachineClient:
    """One machine's server at ``url`` (``http://HOST:5000``). Thread-safe; each request opens its own connection.

    ``timeout``: seconds an ordinary request may take, from connecting to the last byte of the answer;
    ``command_timeout``: the same for ``/execute`` and set-up requests (the server's own limit is 120 s on OSWorld
    and WAA); ``connect_timeout``: at most this long of it for opening the connection; ``retries``: extra attempts
    for requests that are safe to repeat (and for connections that could not be opened), ``backoff`` seconds apart,
    doubling, each attempt with a deadline of its own; ``token``: the secret of a guitest desktop (None: found as
    the module's docstring says; never shown in messages).
    """

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 30.0,
        command_timeout: float = 130.0,
        connect_timeout: float = 5.0,
        retries: int = 2,
        backoff: float = 0.5,
        token: str | None = None,
    ) -> None:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        try:
            port = parts.port
        except ValueError:
            port = -1
        if parts.scheme not in ("http", "https") or not parts.hostname or port == -1:
            raise EnvFailure(f"--env-url {shown_url(parts.geturl())!r}: expected http://HOST:PORT (an OSWorld, WAA or `guitest desktop up` server)")
        self.url = shown_url(parts.geturl())
        self._scheme = parts.scheme
        self._host = parts.hostname
        self._port = port or (443 if parts.scheme == "https" else 80)
        self._base = parts.path.rstrip("/")
        self.timeout = timeout
        self.command_timeout = command_timeout
        self.connect_timeout = connect_timeout
        self.retries = retries
        self.backoff = backoff
        if token is None and self._host in LOOPBACK:
            token = token_for(self._host, self._port) or os.environ.get(TOKEN_VAR, "").strip() or None
        self._auth = f"Bearer {token}" if token else None

    # -- transport -----------------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        *,
        body: bytes | None = None,
        content_type: str | None = None,
        timeout: float | None = None,
        repeatable: bool = True,
        retries: int | None = None,
    ) -> Reply:
        """Send one request and return the answer (any status, a 5xx one after the retries it allows);
        MachineFailure for transport failures. ``repeatable``: the request may be sent again once it was sent
        (after a dropped connection, a timeout or a 5xx); a connection that could not be opened is always retried."""
        label = f"{method} {path}"
        limit = timeout or self.timeout
        attempts = 1 + max(0, self.retries if retries is None else retries)
        delay = self.backoff
        failure: MachineFailure | None = None
        for attempt in range(attempts):
            if attempt:
                time.sleep(delay)
                delay *= 2
            sent = False
            deadline = time.monotonic() + limit  # the whole attempt: connect, send, wait, read
            try:
                conn = self._connect(deadline)
                try:
                    assert conn.sock is not None
                    conn.sock.settimeout(max(deadline - time.monotonic(), 0.001))
                    headers = {"Connection": "close", "Accept-Encoding": "identity"}
                    if content_type:
                        headers["Content-Type"] = content_type
                    if self._auth:
                        headers["Authorization"] = self._auth
                    conn.request(method, self._base + path, body=body, headers=headers)
                    sent = True
                    resp = read_response(conn.sock, deadline)
                    reply = Reply(resp.status, resp.headers.get("content-type", ""), resp.body)
                finally:
                    conn.close()
            except _ConnectFailed as exc:
                failure = MachineFailure(UNREACHABLE, self.url, label, f"cannot connect: {exc}")
                continue
            except (socket.timeout, TimeoutError):
                failure = MachineFailure(TIMEOUT, self.url, label, f"no answer within {limit:g} s (the deadline of the whole request)")
                if not repeatable:
                    raise failure from None
                continue
            except (HTTPFailure, http.client.HTTPException, ConnectionError, OSError) as exc:
                failure = MachineFailure(DROPPED, self.url, label, f"the connection was closed before an answer ({type(exc).__name__}: {exc})")
                if sent and not repeatable:
                    raise failure from None
                continue
            if reply.status >= 500 and repeatable and attempt + 1 < attempts:
                continue
            return reply
        assert failure is not None
        raise failure

    def _connect(self, deadline: float) -> http.client.HTTPConnection:
        cls = http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
        conn = cls(self._host, self._port, timeout=max(min(self.connect_timeout, deadline - time.monotonic()), 0.001))
        try:
            conn.connect()
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            raise _ConnectFailed(f"{type(exc).__name__}: {exc}") from None
        return conn

    def _ok(self, reply: Reply, label: str, *, allow_404: bool = False) -> Reply | None:
        """``reply`` when it is a success; None for a 404 that is allowed; MachineFailure otherwise."""
        if 200 <= reply.status < 300:
            return reply
        if reply.status == 404 and allow_404:
            return None
        kind = SERVER_ERROR if reply.status >= 500 else BAD_REPLY
        raise MachineFailure(kind, self.url, label, f"HTTP {reply.status}: {_excerpt(reply)}", reply.status)

    def _json(self, reply: Reply, label: str) -> Any:
        try:
            return reply.json()
        except ValueError:
            raise MachineFailure(BAD_REPLY, self.url, label, f"expected JSON, got {reply.content_type or 'no content type'}: {_excerpt(reply, 120)}") from None

    def _field(self, reply: Reply, label: str, key: str) -> Any:
        """``key`` of a JSON answer; None when the server answered an error (it has no such thing to give)."""
        if reply.status != 200:
            return None
        data = self._json(reply, label)
        return data.get(key) if isinstance(data, dict) else None

    def _post_json(self, path: str, payload: dict[str, Any], *, timeout: float | None = None, repeatable: bool = False) -> Reply:
        return self.request("POST", path, body=json.dumps(payload).encode("utf-8"), content_type="application/json", timeout=timeout, repeatable=repeatable)

    # -- observation -----------------------------------------------------------------------------------

    def screenshot(self) -> bytes:
        """The screen as PNG bytes (the server draws the cursor in)."""
        reply = self._ok(self.request("GET", "/screenshot"), "GET /screenshot")
        assert reply is not None
        if not reply.body.startswith(PNG_MAGIC):
            raise MachineFailure(BAD_REPLY, self.url, "GET /screenshot", f"not a PNG ({len(reply.body)} bytes of {reply.content_type or 'unknown type'})")
        return reply.body

    def screen_size(self) -> tuple[int, int]:
        """The screen's size in the units pyautogui clicks in (``POST /screen_size``)."""
        label = "POST /screen_size"
        reply = self._ok(self.request("POST", label.split()[1]), label)
        data = self._json(reply, label)  # type: ignore[arg-type]
        try:
            return int(data["width"]), int(data["height"])
        except (KeyError, TypeError, ValueError):
            raise MachineFailure(BAD_REPLY, self.url, label, f"expected {{width, height}}, got {str(data)[:120]}") from None

    def accessibility(self, backend: str | None = None) -> str | None:
        """The accessibility tree as the server's XML text; None when the server cannot give one."""
        path = "/accessibility" + (f"?{urlencode({'backend': backend})}" if backend else "")
        return self._field(self.request("GET", path, timeout=max(self.timeout, 60.0)), f"GET {path}", "AT")

    def terminal(self) -> str | None:
        """The active terminal's text (OSWorld's ``/terminal``), None when the server has none."""
        return self._field(self.request("GET", "/terminal"), "GET /terminal", "output")

    def platform(self) -> str:
        """The machine's OS name as its server says it (``Linux``, ``Windows``, ``Darwin``)."""
        reply = self._ok(self.request("GET", "/platform"), "GET /platform")
        return reply.text().strip()  # type: ignore[union-attr]

    def probe(self, timeout: float = 3.0) -> bool:
        """Whether the machine answers at all (one short ``GET /platform``, no retries)."""
        try:
            return self.request("GET", "/platform", timeout=timeout, retries=0).status == 200
        except MachineFailure:
            return False

    # -- acting ----------------------------------------------------------------------------------------

    def execute(self, command: Sequence[str] | str, *, shell: bool = False, setup: bool = False, timeout: float | None = None) -> dict[str, Any]:
        """Run ``command`` on the machine (``POST /execute``, or ``/setup/execute``) and return its
        ``{status, output, error, returncode}``; a server-side timeout is a ``command_timeout`` failure."""
        path = "/setup/execute" if setup else "/execute"
        label = f"POST {path}"
        payload = {"command": command if isinstance(command, str) else list(command), "shell": shell}
        reply = self._post_json(path, payload, timeout=timeout or self.command_timeout)
        if reply.status >= 500:
            message = _excerpt(reply)
            kind = COMMAND_TIMEOUT if "timed out" in message.lower() or "timeout" in message.lower() else SERVER_ERROR
            raise MachineFailure(kind, self.url, label, f"HTTP {reply.status}: {message}", reply.status)
        self._ok(reply, label)
        data = self._json(reply, label)
        if not isinstance(data, dict):
            raise MachineFailure(BAD_REPLY, self.url, label, f"expected {{status, output, error, returncode}}, got {str(data)[:120]}")
        return {
            "status": data.get("status", ""),
            "output": data.get("output") or "",
            "error": data.get("error") or "",
            "returncode": data.get("returncode", data.get("return_code")),
        }

    def run_pyautogui(self, code: str, *, timeout: float | None = None) -> dict[str, Any]:
        """Run pyautogui ``code`` the way OSWorld's and WAA's clients do:
        ``["python", "-c", "import pyautogui; import time; pyautogui.FAILSAFE = False; <code>"]``."""
        return self.execute(["python", "-c", PYAUTOGUI_PREFIX + code], timeout=timeout)

    # -- files -----------------------------------------------------------------------------------------

    def get_file(self, path: str) -> bytes | None:
        """The bytes of the file at ``path`` on the machine (``POST /file``); None when it does not exist."""
        body = urlencode({"file_path": path}).encode()
        reply = self.request("POST", "/file", body=body, content_type="application/x-www-form-urlencoded", timeout=max(self.timeout, 120.0))
        found = self._ok(reply, "POST /file", allow_404=True)
        return None if found is None else found.body

    def upload(self, path: str, data: bytes) -> None:
        """Write ``data`` to ``path`` on the machine (``POST /setup/upload``, multipart ``file_path``, ``file_data``)."""
        body, ctype = multipart({"file_path": path}, {"file_data": (path.replace("\\", "/").rsplit("/", 1)[-1] or "file", data)})
        self._ok(self.request("POST", "/setup/upload", body=body, content_type=ctype, timeout=max(self.command_timeout, 600.0), repeatable=True), "POST /setup/upload")

    def list_directory(self, path: str) -> dict[str, Any] | None:
        """The directory tree under ``path`` (``POST /list_directory``); None when the server refuses it."""
        return self._field(self._post_json("/list_directory", {"path": path}, repeatable=True), "POST /list_directory", "directory_tree")

    def desktop_path(self) -> str | None:
        """The desktop folder of the machine's user (``POST /desktop_path``); None when the server has none."""
        return self._field(self.request("POST", "/desktop_path"), "POST /desktop_path", "desktop_path")

    # -- set-up ----------------------------------------------------------------------------------------

    def setup_call(self, endpoint: str, payload: dict[str, Any], *, timeout: float | None = None) -> Reply:
        """``POST /setup/<endpoint>`` with a JSON ``payload``; the answer as it is (the caller judges 4xx/5xx)."""
        return self._post_json(f"/setup/{endpoint}", payload, timeout=timeout or self.command_timeout)

    def info(self, timeout: float | None = None, retries: int | None = None) -> dict[str, Any]:
        """What this machine's server says of itself beyond the shared protocol (``GET /guitest/info``; a guitest
        desktop answers ``{server, reset}``); ``{}`` from any other server, however it says that it has no such route:
        OSWorld's answers 404, WAA's 500 (its catch-all error handler turns every unknown route into HTTP 500, as it
        does any exception). Asked once per machine in this process (the answer is kept, :func:`forget` drops it);
        MachineFailure when the machine does not answer at all."""
        with _INFO_LOCK:
            known = _INFO.get(self.url)
        if known is not None:
            return dict(known)
        # not repeatable: a 5xx here is WAA's word for "no such route", not a passing fault worth two more tries
        reply = self.request("GET", INFO_PATH, timeout=timeout, repeatable=False, retries=retries)
        data: dict[str, Any] = {}
        if reply.status == 200:
            try:
                answer = reply.json()
            except ValueError:
                answer = None
            if isinstance(answer, dict):
                data = answer
        with _INFO_LOCK:
            _INFO[self.url] = data
        return dict(data)

    def reset_desktop(self) -> bool:
        """Ask a guitest desktop server to close what earlier episodes opened and empty its home folder
        (``POST /guitest/reset``, a guitest extension). Sent only to a machine whose ``GET /guitest/info`` said it has
        a reset (:meth:`info`: ``reset: true``), never to another server (WAA's answers an unknown route with 500, which
        is no "I have no reset"); False when it was not sent."""
        if self.info().get("reset") is not True:
            return False
        self._ok(self.request("POST", RESET_PATH, timeout=self.command_timeout, repeatable=False), f"POST {RESET_PATH}")
        return True

    def resets(self, timeout: float = 3.0) -> bool | None:
        """Whether this machine is a guitest desktop whose reset is on (:meth:`info`, one short request without
        retries when not known yet): False for any other server (OSWorld's and WAA's have no reset), None when it
        does not answer."""
        try:
            return self.info(timeout=timeout, retries=0).get("reset") is True
        except MachineFailure:
            return None


class _ConnectFailed(Exception):
    """The TCP (or TLS) connection could not be opened: nothing was sent, so any request may be retried."""
