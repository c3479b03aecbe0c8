"""A lean HTTP/1.1 JSON client on the standard library, for ``--http-client=stdlib``.

The official ``openai`` client spends about 4 ms of CPU per chat request (request
transformation, pydantic parsing of the reply); at 100 ms replies and 32 requests in
flight that alone makes one process the bottleneck (docs/bench.md). This client does
one thing: POST a JSON body and return the status, headers and body, over keep-alive
connections kept per thread (a case thread reuses its connection; no pool lock).

:mod:`http.client` opens the connections (TCP, the CONNECT tunnel through a proxy,
TLS); the exchange itself is done here: the request head and body leave in one
``sendall`` and the reply is read by :func:`read_response` (status line, headers,
a ``Content-Length``, chunked or close-delimited body, interim 1xx replies skipped),
which costs a fraction of ``http.client``'s reply parsing (that goes through the
``email`` package). HTTPS uses the default certificate store (``SSL_CERT_FILE``
honoured by Python's ssl); ``HTTPS_PROXY``/``HTTP_PROXY``/``NO_PROXY`` are honoured as
:func:`urllib.request.getproxies` reads them. Errors are raised as :class:`HTTPFailure`
(no reply: connection refused or dropped, timeout, a reply that is not HTTP) for the
caller to classify.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass


class HTTPFailure(Exception):
    """No HTTP reply arrived: ``timeout`` tells a timeout from a refused, reset or dropped connection; ``cut``: a reply
    began but its connection closed in its middle (the server had answered: counted as a cut reply)."""

    def __init__(self, message: str, timeout: bool = False, cut: bool = False) -> None:
        super().__init__(message)
        self.timeout = timeout
        self.cut = cut


MAX_HEAD = 64 * 1024  # bytes of status line and headers at most
RECV = 256 * 1024


@dataclass(frozen=True)
class Response:
    status: int
    headers: dict[str, str]  # names in lower case; repeated headers joined with ", "
    body: bytes
    will_close: bool = False  # the server closes the connection after this reply


class Closed(HTTPFailure):
    """The connection ended before the first byte of a reply (a keep-alive connection the server dropped)."""


def read_response(sock: socket.socket, deadline: float | None = None) -> Response:
    """Read one HTTP/1.x reply from ``sock``; interim 1xx replies are skipped. Raises :class:`HTTPFailure`, and
    ``socket.timeout`` once the ``time.monotonic()`` ``deadline`` has passed (None: each read waits the socket's
    own timeout)."""
    reader = _Reader(sock, deadline)
    while True:
        head = reader.until(b"\r\n\r\n", MAX_HEAD, first=True)
        status_line, *lines = head.decode("latin-1").split("\r\n")
        version, _, rest = status_line.partition(" ")
        code = rest[:3]
        if not version.startswith("HTTP/1.") or not code.isdigit():
            raise HTTPFailure(f"not an HTTP reply: {status_line[:80]!r}")
        status = int(code)
        headers: dict[str, str] = {}
        name = ""
        for line in lines:
            if line[:1] in (" ", "\t") and name:  # an obsolete folded continuation line
                headers[name] += " " + line.strip()
                continue
            name, sep, value = line.partition(":")
            if not sep:
                raise HTTPFailure(f"malformed header line in the reply: {line[:80]!r}")
            name = name.strip().lower()
            headers[name] = f"{headers[name]}, {value.strip()}" if name in headers else value.strip()
        if 100 <= status < 200 and status != 101:
            continue  # 100 Continue, 103 Early Hints: the real reply follows
        break
    connection = headers.get("connection", "").lower()
    close = "close" in connection or (version == "HTTP/1.0" and "keep-alive" not in connection)
    if status in (204, 304):
        body = b""
    elif "chunked" in headers.get("transfer-encoding", "").lower():
        body = _chunked(reader)
    elif "content-length" in headers:
        try:
            length = int(headers["content-length"].split(",")[0])
        except ValueError:
            raise HTTPFailure(f"bad Content-Length in the reply: {headers['content-length'][:40]!r}") from None
        body = reader.exactly(length)
    else:  # the body ends when the server closes the connection
        body = reader.rest()
        close = True
    if reader.buffer:  # bytes past the reply: the connection cannot be trusted for another request
        close = True
    return Response(status, headers, body, close)


def _chunked(reader: "_Reader") -> bytes:
    parts: list[bytes] = []
    while True:
        line = reader.until(b"\r\n", MAX_HEAD).split(b";", 1)[0].strip()
        try:
            size = int(line, 16)
        except ValueError:
            raise HTTPFailure(f"bad chunk size in the reply: {line[:40]!r}") from None
        if size == 0:
            while reader.until(b"\r\n", MAX_HEAD):  # trailer lines, up to the empty one
                pass
            return b"".join(parts)
        parts.append(reader.exactly(size))
        if reader.exactly(2) != b"\r\n":
            raise HTTPFailure("malformed chunked body in the reply")


class _Reader:
    """Buffered reads from a socket: up to a delimiter, an exact count, or the end of the stream."""

    def __init__(self, sock: socket.socket, deadline: float | None = None) -> None:
        self.sock = sock
        self.buffer = b""
        self.deadline = deadline

    def _recv(self, n: int) -> bytes:
        """One read, waiting no longer than the deadline allows: a server dripping its reply a byte at a time cannot
        stretch a request past it (the socket's timeout alone bounds each read, not the request)."""
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise socket.timeout("the request's deadline passed while the reply was still arriving")
            self.sock.settimeout(left)
        return self.sock.recv(n)

    def _more(self, first: bool = False) -> None:
        data = self._recv(RECV)
        if not data:
            if first and not self.buffer:
                raise Closed("connection closed without a reply")
            raise HTTPFailure("connection closed in the middle of the reply", cut=True)
        self.buffer += data

    def until(self, delimiter: bytes, limit: int, first: bool = False) -> bytes:
        """The bytes before ``delimiter`` (which is consumed)."""
        start = 0
        while True:
            at = self.buffer.find(delimiter, start)
            if at >= 0:
                out, self.buffer = self.buffer[:at], self.buffer[at + len(delimiter) :]
                return out
            if len(self.buffer) > limit:
                raise HTTPFailure(f"reply head longer than {limit} bytes")
            start = max(len(self.buffer) - len(delimiter) + 1, 0)
            self._more(first and not self.buffer)

    def exactly(self, n: int) -> bytes:
        if len(self.buffer) < n:
            parts = [self.buffer]
            have = len(self.buffer)
            while have < n:
                data = self._recv(max(RECV, n - have))
                if not data:
                    raise HTTPFailure(f"connection closed in the middle of the reply ({have} of {n} body bytes)", cut=True)
                parts.append(data)
                have += len(data)
            self.buffer = b"".join(parts)
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def rest(self) -> bytes:
        parts = [self.buffer]
        while data := self._recv(RECV):
            parts.append(data)
        self.buffer = b""
        return b"".join(parts)


class JSONPoster:
    """POSTs (and GETs) to URLs under one base URL, one keep-alive connection per calling thread."""

    def __init__(self, base_url: str, timeout: float, headers: dict[str, str]) -> None:
        parts = urllib.parse.urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base URL {base_url!r} is not an http:// or https:// URL")
        self.https = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port or (443 if self.https else 80)
        self.prefix = parts.path.rstrip("/")
        self.timeout = timeout
        self.headers = {"Content-Type": "application/json", "Accept": "application/json", **headers}
        self._lines_post = "".join(f"{k}: {v}\r\n" for k, v in self.headers.items())
        self._lines_get = "".join(f"{k}: {v}\r\n" for k, v in self.headers.items() if k != "Content-Type")
        self.proxy = proxy_for(parts.scheme, self.host)
        default_port = 443 if self.https else 80
        host = f"[{self.host}]" if ":" in self.host else self.host
        self.host_header = host if self.port == default_port else f"{host}:{self.port}"
        self._local = threading.local()
        self._all: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def post(self, path: str, body: bytes) -> Response:
        """POST ``body`` to ``base_url + path``; a dropped keep-alive connection is reopened once before failing."""
        return self._exchange("POST", path, body)

    def get(self, path: str) -> Response:
        """GET ``base_url + path`` (same connections, headers and failures as :meth:`post`)."""
        return self._exchange("GET", path, None)

    def _exchange(self, method: str, path: str, body: bytes | None) -> Response:
        start = f"{method} {self._target(path)} HTTP/1.1\r\nHost: {self.host_header}\r\nAccept-Encoding: identity\r\n"
        if body is None:
            head = (start + self._lines_get + "\r\n").encode("latin-1")
        else:
            head = (start + f"Content-Length: {len(body)}\r\n" + self._lines_post + "\r\n").encode("latin-1")
        deadline = time.monotonic() + self.timeout  # --timeout bounds the whole request: connect, send, wait, read
        for fresh in (False, True):
            conn = self._connection(fresh)
            reused = conn.sock is not None
            try:
                if conn.sock is None:
                    conn.timeout = max(deadline - time.monotonic(), 0.001)
                    conn.connect()
                conn.sock.settimeout(max(deadline - time.monotonic(), 0.001))
                conn.sock.sendall(head)  # head and body sent apart, as http.client does (its connect sets TCP_NODELAY):
                if body:  # joined, a 4K screenshot's 5 MB body would be copied once more (1-2 ms of CPU a case)
                    conn.sock.sendall(body)
                reply = read_response(conn.sock, deadline)
            except (socket.timeout, TimeoutError) as exc:
                conn.close()
                raise HTTPFailure(f"timed out ({exc})", timeout=True) from None
            except (Closed, ConnectionResetError, BrokenPipeError) as exc:
                conn.close()
                if reused and not fresh:
                    continue  # the server closed an idle keep-alive connection: retry on a new one
                raise HTTPFailure(f"connection closed without a reply ({type(exc).__name__})") from None
            except HTTPFailure:
                conn.close()
                raise
            except (OSError, http.client.HTTPException) as exc:
                conn.close()
                raise HTTPFailure(f"{type(exc).__name__}: {exc}") from None
            if reply.will_close:
                conn.close()
            return reply
        raise AssertionError("unreachable")

    def _target(self, path: str) -> str:
        target = self.prefix + path
        if self.proxy and not self.https:  # a plain-HTTP proxy takes the absolute URL
            return f"http://{self.host}:{self.port}{target}"
        return target

    def _connection(self, fresh: bool) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is not None and not fresh:
            return conn
        if self.proxy and self.https:  # TLS to the server inside a CONNECT tunnel through the proxy
            conn = http.client.HTTPSConnection(*self.proxy, timeout=self.timeout, context=ssl.create_default_context())
            conn.set_tunnel(self.host, self.port)
        elif self.proxy:
            conn = http.client.HTTPConnection(*self.proxy, timeout=self.timeout)
        elif self.https:
            conn = http.client.HTTPSConnection(self.host, self.port, timeout=self.timeout, context=ssl.create_default_context())
        else:
            conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        self._local.conn = conn
        with self._lock:
            self._all.append(conn)
        return conn

    def close(self) -> None:
        """Close every connection any thread opened."""
        with self._lock:
            for conn in self._all:
                conn.close()
            self._all.clear()


def proxy_for(scheme: str, host: str) -> tuple[str, int] | None:
    """The proxy ``(host, port)`` the environment sets for ``scheme://host``, or None (none set, or NO_PROXY covers it)."""
    proxies = urllib.request.getproxies()
    url = proxies.get(scheme)
    if not url or urllib.request.proxy_bypass(host) or host in ("127.0.0.1", "localhost", "::1"):
        return None
    parts = urllib.parse.urlsplit(url if "://" in url else f"http://{url}")
    if not parts.hostname:
        return None
    return parts.hostname, parts.port or 80
