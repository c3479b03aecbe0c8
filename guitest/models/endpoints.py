"""The endpoints of one model: which one a request goes to, and when one is taken out.

``--base-url`` given more than once spreads a run's requests over several servers of the same
model (vLLM or SGLang replicas, one per GPU). Each request goes to the endpoint with the fewest
requests in flight from this process (ties: the one that has answered fewest). An endpoint is
taken out for the rest of the run when it fails ``limit`` times in a row (``--retries`` + 1, the
tries one case makes) with no reply at all (refused, dropped, timed out) or with a 5xx, if it
never answered or another endpoint is still in: so a dead replica gets no more requests and its
cases go to the others, and a single endpoint that was never reachable stops every case from
retrying (the rest are errors at once, ``--lf`` asks them later).
"""

from __future__ import annotations

import base64
import threading
import urllib.parse
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator


class Retryable(Exception):
    """A failure worth another try; carries the server's Retry-After when it gave one. ``no_reply``: no HTTP
    reply came at all; ``server_error``: a 5xx. Both count towards taking the endpoint out."""

    def __init__(self, message: str, retry_after: float | None = None, *, no_reply: bool = False, server_error: bool = False) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.no_reply = no_reply
        self.server_error = server_error


def credentials(url: str | None, key: str | None) -> tuple[str, list[str], str]:
    """``(Authorization header, the secrets in it, kind)`` for an endpoint: HTTP Basic from the ``user:password``
    of the URL when it has one (what curl and httpx do with such a URL), else the bearer API key
    (``EMPTY`` when none is set, as OpenAI-compatible servers without auth expect)."""
    if url:
        parts = urllib.parse.urlsplit(url)
        if parts.username is not None or parts.password is not None:
            user = urllib.parse.unquote(parts.username or "")
            password = urllib.parse.unquote(parts.password or "")
            token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
            return f"Basic {token}", [password, token, f"{user}:{password}"], "basic"
    return f"Bearer {key or 'EMPTY'}", [key or ""], "bearer"


@dataclass(eq=False)
class Endpoint:
    """One server: its base URL (no credentials), the Authorization header, its clients, and what it did."""

    index: int
    base_url: str
    auth: str
    auth_kind: str
    client: Any
    poster: Any = None
    in_flight: int = 0
    replies: int = 0
    failures: int = 0
    failing: int = 0  # failures in a row, reset by any reply
    server_errors: int = 0  # 5xx replies: an endpoint that gives them is there, but failing
    answered: bool = False
    down: str | None = None
    last_error: str = field(default="", repr=False)


class EndpointPool:
    """Picks an endpoint per try and takes failing ones out (see the module's docstring). Thread-safe."""

    def __init__(self, endpoints: list[Endpoint], limit: int) -> None:
        self.endpoints = endpoints
        self.limit = max(limit, 1)
        self._lock = threading.Lock()

    def pick(self, avoid: Endpoint | None = None) -> Endpoint | None:
        """The endpoint for the next try (another than ``avoid`` when one is in), or None when all are out."""
        with self._lock:
            up = [e for e in self.endpoints if e.down is None]
            if not up:
                return None
            others = [e for e in up if e is not avoid] or up
            return min(others, key=lambda e: (e.in_flight, e.replies + e.failures, e.index))

    def all_down(self) -> bool:
        """Whether every endpoint has been taken out (no request can be sent any more)."""
        with self._lock:
            return all(e.down is not None for e in self.endpoints)

    def has_other(self, endpoint: Endpoint) -> bool:
        """Whether another endpoint than ``endpoint`` is in (a retry there need not wait)."""
        with self._lock:
            return any(e.down is None and e is not endpoint for e in self.endpoints)

    @contextmanager
    def using(self, endpoint: Endpoint) -> Iterator[None]:
        """Count a request in flight on ``endpoint`` and record how it ended (a reply, or a failure)."""
        with self._lock:
            endpoint.in_flight += 1
        try:
            yield
        except Retryable as exc:
            self._failed(endpoint, exc)
            raise
        except BaseException:
            with self._lock:  # an HTTP reply that is an error for this request (401, 400): the endpoint answered
                endpoint.in_flight -= 1
                endpoint.answered = True
                endpoint.failing = 0
            raise
        else:
            with self._lock:
                endpoint.in_flight -= 1
                endpoint.replies += 1
                endpoint.answered = True
                endpoint.failing = 0

    def _failed(self, endpoint: Endpoint, exc: Retryable) -> None:
        with self._lock:
            endpoint.in_flight -= 1
            endpoint.failures += 1
            endpoint.last_error = str(exc)
            if not (exc.no_reply or exc.server_error):
                endpoint.answered = True  # a 429 or a malformed reply: it is there, only busy or broken for now
                return
            endpoint.failing += 1
            endpoint.server_errors += exc.server_error
            others_up = any(e.down is None and e is not endpoint for e in self.endpoints)
            if endpoint.down is None and endpoint.failing >= self.limit and (others_up or not endpoint.answered):
                endpoint.down = f"{endpoint.failing} failures in a row, the last: {exc}"

    def why_down(self) -> tuple[str, str, str]:
        """``(url, state, reason)`` of an endpoint taken out (for the message of a case that was not asked): its
        state is ``unreachable`` when it never gave an HTTP reply, else ``failing``; the reason is its last error."""
        with self._lock:
            down = [e for e in self.endpoints if e.down is not None] or self.endpoints
            last = down[-1]
            return last.base_url, "failing" if last.answered or last.server_errors else "unreachable", last.last_error or (last.down or "taken out")

    def stats(self) -> list[dict[str, Any]]:
        """Per endpoint: ``url``, ``replies``, ``failures``, ``answered``, ``down`` (the reason, or None)."""
        with self._lock:
            return [{"url": e.base_url, "replies": e.replies, "failures": e.failures, "answered": e.answered, "down": e.down} for e in self.endpoints]


def status_hint(status: int, key: str, served: str) -> str:
    """What to check after an HTTP error that a retry does not cure: ``key`` names the credentials (401, 403), ``served``
    what the endpoint must serve (404)."""
    return {
        401: f"check {key}",
        403: f"check {key} and its permissions",
        404: f"check --base-url and that {served}",
    }.get(status, "the endpoint rejected the request")
