"""The endpoints of one model: which one a request goes to, and when one is taken out.

``--base-url`` given more than once spreads a run's requests over several servers of the same
model (vLLM or SGLang replicas, one per GPU). Each request goes to the endpoint with the least
expected wait: its requests in flight from this process, plus this one, times its recent reply time
(an average over its last replies, :data:`SMOOTHING`; an endpoint that has not replied yet is taken
to be as fast as the fastest, so each gets tried; ties: the one that has answered fewest). So a slow
replica gets a share in proportion to its speed, not an equal one, and does not set the pace of the
run. An endpoint whose replies come more than :data:`REST_FACTOR` times slower than the fastest
other's is *rested*: it gets no request for :data:`REST_SECONDS` (or ten of its replies' time, the
longer), unless no other is in, then it is tried again. An endpoint is
taken out for the rest of the run when it fails ``limit`` times in a row (``--retries`` + 1, the
tries one case makes) with no reply at all (refused, dropped, timed out) or with a 5xx, if it
never answered or another endpoint is still in: so a dead replica gets no more requests and its
cases go to the others, and a single endpoint that was never reachable stops every case from
retrying (the rest are errors at once, ``--lf`` asks them later).
"""

from __future__ import annotations

import base64
import threading
import time
import urllib.parse
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator

from ..report_parts import EndpointRecord


#: the weight of the newest reply in an endpoint's recent reply time (an exponential moving average)
SMOOTHING = 0.3
#: an endpoint this many times slower than the fastest other is rested ...
REST_FACTOR = 4.0
#: ... for this many seconds at least (or ten of its replies' time), once the fastest has replied this often
REST_SECONDS = 30.0
REST_AFTER = 3


class Retryable(Exception):
    """A failure worth another try; carries the server's Retry-After when it gave one. ``no_reply``: no HTTP
    reply came at all; ``server_error``: a 5xx. Both count towards taking the endpoint out. ``why``: the kind of
    failure the run counts it as (:data:`guitest.cost.usage.FAILURES`; by default ``connection`` without a reply,
    ``server_error`` for a 5xx, else ``malformed``), ``usage``: what the reply said it used, if it said."""

    def __init__(self, message: str, retry_after: float | None = None, *, no_reply: bool = False, server_error: bool = False, why: str | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.no_reply = no_reply
        self.server_error = server_error
        self.why = why or ("connection" if no_reply else "server_error" if server_error else "malformed")
        self.usage: Any = None


def connection_failure(exc: BaseException) -> str:
    """The kind of failure (:data:`guitest.cost.usage.FAILURES`) of an official client's connection error ``exc``: ``cut``
    when the reply began and its connection closed in its middle (h11's words, under httpx), else ``connection``."""
    return "cut" if "complete message body" in str(exc.__cause__ or exc) else "connection"


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
    latency: float | None = None  # seconds per reply, recent (SMOOTHING); None before the first reply
    seconds: float = 0.0  # the replies' seconds in all
    rested: int = 0  # how many times it was rested
    resting_until: float = 0.0  # time.monotonic() until which it gets no request (while another is in)


class EndpointPool:
    """Picks an endpoint per try and takes failing ones out (see the module's docstring). Thread-safe."""

    def __init__(self, endpoints: list[Endpoint], limit: int) -> None:
        self.endpoints = endpoints
        self.limit = max(limit, 1)
        self._lock = threading.Lock()

    def pick(self, avoid: Endpoint | None = None) -> Endpoint | None:
        """The endpoint for the next try with the least expected wait (another than ``avoid`` when one is in, one not
        resting when one is), or None when all are out."""
        with self._lock:
            up = [e for e in self.endpoints if e.down is None]
            if not up:
                return None
            others = [e for e in up if e is not avoid] or up
            now = time.monotonic()
            awake = [e for e in others if e.resting_until <= now] or others
            known = [e.latency for e in self.endpoints if e.latency is not None]
            unknown = min(known) if known else 1.0  # not replied yet: as fast as the fastest, so it gets tried

            def expected_wait(e: Endpoint) -> tuple[float, int, int]:
                return ((e.in_flight + 1) * (unknown if e.latency is None else e.latency), e.replies + e.failures, e.index)

            return min(awake, key=expected_wait)

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
        """Count a request in flight on ``endpoint`` and record how it ended (a reply and how long it took, or a
        failure)."""
        with self._lock:
            endpoint.in_flight += 1
        began = time.monotonic()
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
            took = time.monotonic() - began
            with self._lock:
                endpoint.in_flight -= 1
                endpoint.replies += 1
                endpoint.answered = True
                endpoint.failing = 0
                endpoint.seconds += took
                endpoint.latency = took if endpoint.latency is None else SMOOTHING * took + (1 - SMOOTHING) * endpoint.latency
                self._maybe_rest(endpoint)

    def _maybe_rest(self, endpoint: Endpoint) -> None:
        """Rest ``endpoint`` when its recent replies come far slower than the fastest other's (with the lock held)."""
        peers = [e.latency for e in self.endpoints if e is not endpoint and e.down is None and e.latency is not None and e.replies >= REST_AFTER]
        if endpoint.latency is None or not peers or endpoint.latency <= REST_FACTOR * min(peers):
            return
        now = time.monotonic()
        if endpoint.resting_until <= now:
            endpoint.rested += 1
            endpoint.resting_until = now + max(REST_SECONDS, 10 * endpoint.latency)

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
        """Per endpoint: ``url``, ``replies``, ``failures``, ``answered``, ``down`` (the reason, or None), ``seconds``
        (its replies' seconds in all) and ``rested`` (how many times it was rested)."""
        with self._lock:
            return [
                {"url": e.base_url, "replies": e.replies, "failures": e.failures, "answered": e.answered, "down": e.down, "seconds": round(e.seconds, 6), "rested": e.rested} for e in self.endpoints
            ]


def merged_stats(per_process: list[list[dict[str, Any]]]) -> list[EndpointRecord]:
    """The report's ``run.endpoints``: :meth:`EndpointPool.stats` of every process (the xdist workers, or this one)
    summed per URL, with ``latency_s`` (mean seconds per reply, None without one) and ``rested``, sorted by URL."""
    merged: dict[str, EndpointRecord] = {}
    seconds: dict[str, float] = {}
    for stats in per_process:
        for e in stats:
            row = merged.setdefault(e["url"], {"url": e["url"], "replies": 0, "failures": 0, "down": None, "latency_s": None, "rested": 0})
            row["replies"] += e["replies"]
            row["failures"] += e["failures"]
            row["down"] = row["down"] or e["down"]
            row["rested"] += e.get("rested", 0)
            seconds[e["url"]] = seconds.get(e["url"], 0.0) + e.get("seconds", 0.0)
    for url, row in merged.items():
        row["latency_s"] = round(seconds[url] / row["replies"], 3) if row["replies"] else None
    return [merged[url] for url in sorted(merged)]


def status_hint(status: int, key: str, served: str) -> str:
    """What to check after an HTTP error that a retry does not cure: ``key`` names the credentials (401, 403), ``served``
    what the endpoint must serve (404)."""
    return {
        401: f"check {key}",
        403: f"check {key} and its permissions",
        404: f"check --base-url and that {served}",
    }.get(status, "the endpoint rejected the request")
