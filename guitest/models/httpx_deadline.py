"""A deadline for the whole request through the official ``openai`` client (``--http-client=openai``).

httpx's timeouts bound each phase and each read, not the request: a server sending its body a chunk every 1.5 s
kept a request with ``--timeout=2`` going for 30 s. :class:`DeadlineTransport` wraps httpx's transport: the
connection is made with what is left of the deadline, and the body's stream raises ``httpx.ReadTimeout`` (which the
client reports as its timeout) at the first chunk read after the deadline. A request thus ends within the deadline
plus one read (itself bounded by ``--timeout``). It is built on the library the installed ``openai`` uses (httpx, or
httpx2 from openai 3 on). The lean client (:mod:`guitest.models.transport`) shortens every
read to the time left and ends exactly at the deadline.
"""

from __future__ import annotations

import importlib
import time
import urllib.parse
from typing import Any, Iterator

from .transport import proxy_for


def _http_module() -> Any:
    """The HTTP library the installed ``openai`` client is built on: ``httpx2`` (openai 3) or ``httpx`` (openai 1)."""
    from openai import _base_client

    module = getattr(_base_client, "httpx2", None) or getattr(_base_client, "httpx", None)
    if module is None:  # pragma: no cover - an openai release on yet another library
        module = importlib.import_module("httpx")
    return module


#: typed Any: which module it is depends on the installed openai (the two share the transport API used here)
httpx: Any = _http_module()


class _DeadlineStream(httpx.SyncByteStream):
    def __init__(self, inner: Any, deadline: float, request: Any) -> None:
        self.inner = inner
        self.deadline = deadline
        self.request = request

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self.inner:
            if time.monotonic() > self.deadline:
                raise httpx.ReadTimeout("the request's deadline passed while the reply was still arriving", request=self.request)
            yield chunk

    def close(self) -> None:
        self.inner.close()


class DeadlineTransport(httpx.BaseTransport):
    """An httpx transport whose every request ends by ``timeout`` seconds after it starts (see the module docstring)."""

    def __init__(self, timeout: float, base_url: str | None = None, **options: Any) -> None:
        self.timeout = timeout
        if base_url and "proxy" not in options:  # a transport of our own gets no proxy from the environment: give it
            parts = urllib.parse.urlsplit(base_url)
            proxy = proxy_for(parts.scheme, parts.hostname or "")
            if proxy is not None:
                options["proxy"] = f"http://{proxy[0]}:{proxy[1]}"
        self.inner = httpx.HTTPTransport(**options)

    def handle_request(self, request: Any) -> Any:
        deadline = time.monotonic() + self.timeout
        response = self.inner.handle_request(request)
        if time.monotonic() > deadline:
            response.close()
            raise httpx.ReadTimeout("the request's deadline passed before the reply's head arrived", request=request)
        response.stream = _DeadlineStream(response.stream, deadline, request)
        return response

    def close(self) -> None:
        self.inner.close()
