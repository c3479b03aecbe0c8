"""``--concurrency`` is the number of requests in flight per worker, and the lookahead keeps that many in flight.

Both are read from the loopback server's log: how many chat requests it was answering
when each one arrived, and when each arrived (every reply takes the server's fixed
latency, so the requests in flight on average is requests x latency / span).
"""

from __future__ import annotations

import json

import pytest

import fakeserver
from builders import write_suite

# 3 screenshots, 16 rows each: 48 cases
ROWS = [
    (split, name, size, [(10 + 5 * i, 10, 20, 20, f"press button {split} {i}", "text", "windows") for i in range(16)])
    for split, name, size in (("desktop", "a.png", (400, 300)), ("web", "b.png", (640, 400)), ("mobile", "c.png", (300, 600)))
]
LATENCY = 0.6  # long beside the harness's own CPU time per case, so a loaded CI machine does not blur the in-flight count
CONCURRENCY = 4


@pytest.mark.parametrize("mode, workers", [([], 1), (["-n", "2"], 2)], ids=["serial", "xdist"])
def test_concurrency_bounds_and_fills_the_requests_in_flight(pytester: pytest.Pytester, tmp_path, mode: list[str], workers: int) -> None:
    write_suite(pytester.path / "suites" / "many", rows=ROWS)
    with fakeserver.serve(tmp_path, latency=LATENCY) as server:
        result = pytester.runpytest_subprocess("suites/many", "--model=openai:fake-vl", f"--base-url={server.base_url}", f"--concurrency={CONCURRENCY}", "--cache=off", "-p", "no:cacheprovider", *mode)
        chat = [r for r in server.requests() if r["path"].endswith("/chat/completions")]
    assert result.ret == 0, result.stdout.str()  # misses (the server answers the centre) are outcomes, not failures
    assert len(chat) == 48
    seen = [r["in_flight"] for r in chat]
    limit = CONCURRENCY * workers
    # the pool has spare threads (reading screenshots, judging replies), yet never more than
    # --concurrency requests per worker reach the endpoint at once
    assert max(seen) <= limit, seen
    # and the lookahead keeps them busy. Under -n 2 this needs each worker's xdist queue kept deep
    # (guitest.scale.scheduling): xdist's own load scheduling stops refilling a worker whose tests take
    # 0.1 s or more, and a case waiting LATENCY for its reply looks like one (without it, this run
    # kept about 5 requests in flight between the two workers instead of 8: 5.1 at LATENCY 0.6)
    assert steady_in_flight(sorted(r["time"] for r in chat)) >= 0.8 * limit, seen
    report = json.loads((pytester.path / "reports" / "tiny.json").read_text())  # builders name the suite tiny
    assert report["overall"]["n"] == 48 and report["overall"]["error"] == 0


def steady_in_flight(starts: list[float]) -> float:
    """The mean number of requests in flight between the end of the first round and the start of the
    last request (ramp-up and tail left out), each request in flight for LATENCY from its start."""
    lo, hi = starts[0] + LATENCY, starts[-1]
    busy = sum(max(0.0, min(s + LATENCY, hi) - max(s, lo)) for s in starts)
    return busy / (hi - lo)


def test_a_small_suite_is_still_spread_over_the_workers(pytester: pytest.Pytester) -> None:
    """Deep queues must not hand a suite smaller than the lookahead to the first worker alone."""
    write_suite(pytester.path / "suites" / "many", rows=ROWS)
    result = pytester.runpytest_subprocess("suites/many", "--model=oracle", "--concurrency=32", "-n", "2", "-v", "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()
    ran_on = [line.split("]")[0].lstrip("[") for line in result.stdout.lines if line.startswith("[gw") and "suite.yaml::" in line]
    assert len(ran_on) == 48
    assert min(ran_on.count("gw0"), ran_on.count("gw1")) >= 16, ran_on  # 48 cases: neither worker idles
