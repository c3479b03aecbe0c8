"""A lean HTTP/1.1 JSON client on the standard library, for ``--http-client=stdlib``.

The official ``openai`` client spends about 4 ms of CPU per chat request (request
transformation, pydantic parsing of the reply); at 100 ms replies and 32 requests in
flight that alone makes one process the bottleneck (docs/bench.md). This client does
one thing: POST a JSON body and return the status, headers and body, over keep-alive
connections kept per thread (a case thread reuses its connection; no pool lock), in
about 1 ms. HTTPS uses the default certificate store (``SSL_CERT_FILE`` honoured by
Python's ssl); ``HTTPS_PROXY``/``HTTP_PROXY``/``NO_PROXY`` are honoured as
:func:`urllib.request.getproxies` reads them. Errors are raised as :class:`HTTPFailure`
(no reply: connection refused or dropped, timeout) for the caller to classify.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import threading
import urllib.parse
import urllib.request
from dataclasses import dataclass


class HTTPFailure(Exception):
    """No HTTP reply arrived: ``timeout`` tells a timeout from a refused, reset or dropped connection."""

    def __init__(self, message: str, timeout: bool = False) -> None:
        super().__init__(message)
        self.timeout = timeout


@dataclass(frozen=True)
class Response:
    status: int
    headers: dict[str, str]
    body: bytes


class JSONPoster:
    """POSTs to URLs under one base URL, one keep-alive connection per calling thread."""

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
        self.proxy = _proxy_for(parts.scheme, self.host)
        self._local = threading.local()
        self._all: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def post(self, path: str, body: bytes) -> Response:
        """POST ``body`` to ``base_url + path``; a dropped keep-alive connection is reopened once before failing."""
        for fresh in (False, True):
            conn = self._connection(fresh)
            try:
                conn.request("POST", self._target(path), body=body, headers=self.headers)
                reply = conn.getresponse()
                data = reply.read()
            except (socket.timeout, TimeoutError) as exc:
                conn.close()
                raise HTTPFailure(f"timed out ({exc})", timeout=True) from None
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as exc:
                conn.close()
                if not fresh and getattr(conn, "_guitest_used", False):
                    continue  # the server closed an idle keep-alive connection: retry on a new one
                raise HTTPFailure(f"connection closed without a reply ({type(exc).__name__})") from None
            except (OSError, http.client.HTTPException) as exc:
                conn.close()
                raise HTTPFailure(f"{type(exc).__name__}: {exc}") from None
            conn._guitest_used = True  # type: ignore[attr-defined]
            if reply.will_close:
                conn.close()
            return Response(reply.status, {k.lower(): v for k, v in reply.getheaders()}, data)
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


def _proxy_for(scheme: str, host: str) -> tuple[str, int] | None:
    """The proxy ``(host, port)`` the environment sets for ``scheme://host``, or None (none set, or NO_PROXY covers it)."""
    proxies = urllib.request.getproxies()
    url = proxies.get(scheme)
    if not url or urllib.request.proxy_bypass(host) or host in ("127.0.0.1", "localhost", "::1"):
        return None
    parts = urllib.parse.urlsplit(url if "://" in url else f"http://{url}")
    if not parts.hostname:
        return None
    return parts.hostname, parts.port or 80
