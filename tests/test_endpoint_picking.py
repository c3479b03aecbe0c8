"""Which endpoint a request goes to: the least expected wait, and resting one that replies far slower (no servers: the
pool's own bookkeeping, with its clock moved by hand)."""

from __future__ import annotations

import pytest

from guitest.models import endpoints as endpoints_mod
from guitest.models.endpoints import REST_AFTER, REST_FACTOR, REST_SECONDS, Endpoint, EndpointPool


def pool(*latencies: float | None) -> EndpointPool:
    made = [Endpoint(index=i, base_url=f"http://e{i}/v1", auth="", auth_kind="bearer", client=None, latency=lat, replies=REST_AFTER if lat else 0) for i, lat in enumerate(latencies)]
    return EndpointPool(made, limit=3)


def test_the_least_expected_wait_wins_not_the_fewest_in_flight() -> None:
    p = pool(0.05, 1.0)
    fast, slow = p.endpoints
    fast.in_flight = 5  # 6 x 0.05 = 0.3 s expected, against 1 x 1.0 s
    assert p.pick() is fast
    fast.in_flight = 20  # 21 x 0.05 = 1.05 s: now the slow one is sooner
    assert p.pick() is slow
    assert p.pick(avoid=slow) is fast  # a retry goes elsewhere when it can


def test_an_endpoint_that_never_replied_is_tried_as_if_it_were_the_fastest() -> None:
    p = pool(0.05, None)
    assert p.pick() is p.endpoints[1]
    p.endpoints[1].in_flight = 1  # its first request is out: now 2 x 0.05 against 1 x 0.05
    assert p.pick() is p.endpoints[0]


def test_an_endpoint_far_slower_than_the_fastest_is_rested_then_tried_again(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [1000.0]
    monkeypatch.setattr(endpoints_mod.time, "monotonic", lambda: clock[0])
    p = pool(0.1, None)
    fast, slow = p.endpoints
    with p.using(slow):
        clock[0] += REST_FACTOR * 0.1 * 2  # a reply 8x slower than the fastest's
    assert slow.rested == 1 and slow.resting_until == clock[0] + REST_SECONDS
    fast.in_flight = 100  # however busy the fast one is, the rested one gets nothing
    assert p.pick() is fast
    clock[0] += REST_SECONDS
    assert p.pick() is slow  # the rest is over: its expected wait is compared again
    fast.down = "refused"
    clock[0] -= 1
    assert p.pick() is slow  # no other in: a rested endpoint is used anyway
    assert [(s["rested"], round(s["seconds"], 6)) for s in p.stats()] == [(0, 0.0), (1, 0.8)]


def test_a_reply_within_the_factor_rests_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [0.0]
    monkeypatch.setattr(endpoints_mod.time, "monotonic", lambda: clock[0])
    p = pool(0.1, None)
    with p.using(p.endpoints[1]):
        clock[0] += REST_FACTOR * 0.1 * 0.9
    assert p.endpoints[1].rested == 0 and p.endpoints[1].latency == pytest.approx(0.36)
