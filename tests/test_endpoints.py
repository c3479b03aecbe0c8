"""One run over several endpoints (--base-url given more than once): a fair share each, and a dead one costs nothing."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import pytest

import fakeserver
from builders import write_suite

MODES = pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
# 4 screenshots x 6 targets: enough cases for a share to mean something, a few seconds at 50 ms replies
ROWS = [("desktop", f"shot{n}.png", (400, 300), [(10 + 40 * k, 10, 30, 20, f"target {n}-{k}", "text", "windows") for k in range(6)]) for n in range(4)]
N = 24


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def args(*urls: str) -> list[str]:
    return ["suites/tiny", "--model=openai:agent", *(f"--base-url={u}" for u in urls), "--concurrency=2", "--retries=3", "--retry-backoff=0.05", "--timeout=5", "-p", "no:cacheprovider"]


def report(pytester: pytest.Pytester) -> dict:
    return json.loads((pytester.path / "reports" / "tiny.json").read_text())


@MODES
def test_two_endpoints_share_the_run_fairly_and_verdicts_do_not_depend_on_which_answered(pytester: pytest.Pytester, tmp_path, mode: list[str]) -> None:
    write_suite(pytester.path / "suites" / "tiny", rows=ROWS)
    with fakeserver.serve(tmp_path, latency=0.05) as a, fakeserver.serve(tmp_path, latency=0.05) as b:
        result = pytester.runpytest_subprocess(*args(a.base_url, b.base_url), *mode)
        got = len(a.requests()), len(b.requests())
        data = report(pytester)
        single = pytester.runpytest_subprocess(*args(a.base_url), "--cache=off")
    assert result.ret == 0, result.stdout.str()
    assert sum(got) == N and min(got) >= N // 4, got
    assert data["model"]["base_urls"] == [a.base_url, b.base_url]
    assert {e["url"]: e["replies"] for e in data["run"]["endpoints"]} == {a.base_url: got[0], b.base_url: got[1]}
    assert single.ret == 0
    one = report(pytester)
    assert [(c["id"], c["verdict"], c["prediction"]) for c in one["cases"]] == [(c["id"], c["verdict"], c["prediction"]) for c in data["cases"]]


@MODES
def test_a_dead_endpoint_from_the_start_gets_its_cases_sent_to_the_other(pytester: pytest.Pytester, tmp_path, mode: list[str]) -> None:
    write_suite(pytester.path / "suites" / "tiny", rows=ROWS)
    dead = f"http://127.0.0.1:{free_port()}/v1"
    with fakeserver.serve(tmp_path, latency=0.02) as a:
        result = pytester.runpytest_subprocess(*args(dead, a.base_url), *mode)
        assert len(a.requests()) == N
    assert result.ret == 0, result.stdout.str()
    data = report(pytester)
    assert data["overall"]["error"] == 0 and data["n_results"] == N
    rows = {e["url"]: e for e in data["run"]["endpoints"]}
    assert rows[dead]["replies"] == 0 and rows[dead]["down"] and rows[a.base_url]["replies"] == N
    assert "unreachable" not in data["run"]


@MODES
def test_an_endpoint_killed_mid_run_costs_no_case(pytester: pytest.Pytester, tmp_path, mode: list[str]) -> None:
    write_suite(pytester.path / "suites" / "tiny", rows=ROWS)
    with fakeserver.serve(tmp_path, latency=0.1) as a, fakeserver.serve(tmp_path, latency=0.1) as b:
        process = pytester.popen([sys.executable, "-m", "pytest", *args(a.base_url, b.base_url), *mode], stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while len(b.requests()) < 3 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.02)
        b.process.kill()  # mid-run: requests in flight on it are dropped, later ones refused
        b.process.wait()
        answered_by_b = len(b.requests())
        out, _ = process.communicate(timeout=180)
    assert process.returncode == 0, out.decode(errors="replace")
    data = report(pytester)
    assert data["overall"]["error"] == 0 and data["n_results"] == N
    rows = {e["url"]: e for e in data["run"]["endpoints"]}
    assert 3 <= answered_by_b < N and rows[b.base_url]["replies"] <= answered_by_b
    assert rows[a.base_url]["replies"] + rows[b.base_url]["replies"] == N


@MODES
def test_a_slow_endpoint_gets_a_small_share_and_the_report_says_how_slow(pytester: pytest.Pytester, tmp_path, mode: list[str]) -> None:
    write_suite(pytester.path / "suites" / "tiny", rows=ROWS)
    with fakeserver.serve(tmp_path, latency=0.02) as fast, fakeserver.serve(tmp_path, latency=0.6) as slow:
        result = pytester.runpytest_subprocess(*args(fast.base_url, slow.base_url), *mode)
        got = len(fast.requests()), len(slow.requests())
    assert result.ret == 0, result.stdout.str()
    assert sum(got) == N and got[1] <= N // 6, got  # least-in-flight picking gave it about a third (4 threads, 2 on each)
    rows = {e["url"]: e for e in report(pytester)["run"]["endpoints"]}
    assert rows[slow.base_url]["replies"] == got[1] and rows[slow.base_url]["latency_s"] >= 0.6 > rows[fast.base_url]["latency_s"]
    said = ", ".join(f"{url} {rows[url]['replies']} replies ({rows[url]['latency_s']:g} s each*)" for url in sorted(rows))
    result.stdout.fnmatch_lines([f"endpoints: {said}"])
