"""The response cache: a second identical run is answered from it, byte for byte the same report, serial and -n 2."""

from __future__ import annotations

import json
import sqlite3

import pytest

import fakeserver
from builders import center_norm, n_rows, write_suite
from guitest.cache import FILENAME


def run(pytester: pytest.Pytester, base_url: str, *extra: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("suites/tiny", "--model=openai:agent", f"--base-url={base_url}", "--retries=0", "--timeout=2", "-p", "no:cacheprovider", *extra)


def report(pytester: pytest.Pytester) -> dict:
    data = json.loads((pytester.path / "reports" / "tiny.json").read_text())
    return data


MODES = pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])


def chats(server: fakeserver.Server) -> int:
    return len(server.requests())


@MODES
def test_a_fresh_run_asks_the_model_again(pytester: pytest.Pytester, tmp_path, mode: list[str]) -> None:
    """The default (--cache=resume): replies are stored, but a new run asks the endpoint for every case."""
    write_suite(pytester.path / "suites" / "tiny")
    with fakeserver.serve(tmp_path) as server:
        first = run(pytester, server.base_url, *mode)
        assert first.ret == 0, first.stdout.str()
        assert _stored(pytester.path / "reports") == n_rows()
        second = run(pytester, server.base_url, *mode)
        assert second.ret == 0, second.stdout.str()
        assert chats(server) == 2 * n_rows()
    second.stdout.fnmatch_lines(["*guitest cache: resume: a fresh run*every case asks the model*"])
    assert "answered from the response cache" not in second.stdout.str()
    two = report(pytester)
    assert two["run"]["cache"]["attempts_answered_from_cache"] == 0
    assert not any(c.get("cached") for c in two["cases"])


@MODES
def test_cache_on_reuses_replies_of_the_same_endpoint_and_checkpoint_only(pytester: pytest.Pytester, tmp_path, mode: list[str]) -> None:
    """--cache=on reuses earlier runs' replies, but never those of another endpoint, nor of another checkpoint
    served under the same name on the same port (vLLM's root), and says so wherever the result is shown."""
    write_suite(pytester.path / "suites" / "tiny", "gate:\n  accuracy: 0.1\n")
    x, y = center_norm("desktop", 0)
    right = {"open the file menu": [{"content": f"Answer: [{x}, {y}]"}]}
    models = {"agent": "/ckpt/release-1"}
    with fakeserver.serve(tmp_path, script=right, models=models) as a:
        assert run(pytester, a.base_url, "--cache=on", *mode).ret == 0
        assert chats(a) == n_rows()
        again = run(pytester, a.base_url, "--cache=on", *mode)
        assert again.ret == 0, again.stdout.str()
        assert chats(a) == n_rows()  # nothing asked: the same endpoint, the same checkpoint
        port = a.port
    again.stdout.fnmatch_lines(
        [
            "*guitest cache: on: replies recorded by earlier runs*REUSED*",
            f"*{n_rows()} of {n_rows()} case(s) answered from the response cache*recorded 20*",
            f"gate passed: *({n_rows()} of {n_rows()} cases answered from the response cache recorded from 20*",
        ]
    )
    cached = report(pytester)
    assert cached["overall"]["hit"] == 1 and all(c["cached"] is True and c["cached_recorded"].startswith("20") for c in cached["cases"])
    assert cached["run"]["cache"]["cases_answered_from_cache"] == n_rows()
    assert "answered from the response cache" in (pytester.path / "reports" / "tiny.md").read_text()
    assert "answered from the response cache" in (pytester.path / "reports" / "tiny.html").read_text()
    # another server (another port) that answers wrong: asked, never answered from the first one's replies
    with fakeserver.serve(tmp_path, models=models) as b:
        other = run(pytester, b.base_url, "--cache=on", *mode)
        assert chats(b) == n_rows()
    assert report(pytester)["overall"]["hit"] == 0 and other.ret == 10  # the gate sees the wrong answers
    # the same port and model name, another checkpoint behind it (the next release candidate)
    with fakeserver.serve(tmp_path, port=port, models={"agent": "/ckpt/release-2"}) as c:
        assert c.base_url == a.base_url
        run(pytester, c.base_url, "--cache=on", *mode)
        assert chats(c) == n_rows()
    assert report(pytester)["overall"]["hit"] == 0
    assert report(pytester)["run"]["served_model"]["served"] == [{"id": "agent", "root": "/ckpt/release-2"}]


@MODES
def test_an_incomplete_run_is_resumed_and_a_complete_one_is_not(pytester: pytest.Pytester, tmp_path, mode: list[str]) -> None:
    """A run that stopped early (-x after an error) leaves cases without a result; the next run resumes it:
    the replies it recorded are read back and only the rest is asked. The run after that is fresh again."""
    write_suite(pytester.path / "suites" / "tiny")
    script = {"close the dialog": [{"status": 400}]}
    with fakeserver.serve(tmp_path, script=script) as server:
        first = run(pytester, server.base_url, "-x", *mode)
        assert first.ret in (1, 2)  # xdist reports a stop after -x as interrupted
        assert not report(pytester)["complete"]
        stored = _stored(pytester.path / "reports")  # every reply that came, also of cases started ahead of the stop
        assert 1 <= stored < n_rows()
        asked = chats(server)
        # every call the server got is counted: the reported cases' answers, the failed call (the 400), and the calls of
        # cases started ahead whose answers the stop left out of the report (abandoned; the cache holds their replies)
        spent = report(pytester)["run"]["usage"]
        abandoned = spent.get("abandoned") or {"cases": 0, "paid": {}, "failed": {}}
        assert spent["failed"] == {"calls": 1, "seconds": spent["failed"]["seconds"], "unreported": 1, "why": {"http_error": 1}}
        assert spent["paid"].get("calls", 0) + 1 + abandoned["paid"].get("calls", 0) + abandoned["failed"].get("calls", 0) == asked
        assert abandoned["paid"].get("calls", 0) == abandoned["cases"] == stored - report(pytester)["n_results"] + 1  # the errored case has a result
        second = run(pytester, server.base_url, *mode)
        assert second.ret == 0, second.stdout.str()
        assert chats(server) - asked == n_rows() - stored
        second.stdout.fnmatch_lines(["*guitest cache: resume: this run resumes run *it ended with cases missing*"])
        assert report(pytester)["run"]["cache"]["cases_answered_from_cache"] == stored
        third = run(pytester, server.base_url, *mode)
        assert third.ret == 0
        assert chats(server) - asked == 2 * n_rows() - stored
    third.stdout.fnmatch_lines(["*guitest cache: resume: a fresh run*"])


@MODES
def test_lf_resumes_the_run_and_asks_only_the_attempts_that_failed(pytester: pytest.Pytester, tmp_path, mode: list[str]) -> None:
    """--repeats=2 where one case's second attempt errors: --lf re-runs that case, its first attempt is read back
    from this run's replies and only the failed attempt is asked."""
    write_suite(pytester.path / "suites" / "tiny")
    script = {"close the dialog": [{}, {"status": 400}]}
    with fakeserver.serve(tmp_path, script=script) as server:
        first = pytester.runpytest_subprocess("suites/tiny", "--model=openai:agent", f"--base-url={server.base_url}", "--retries=0", "--timeout=2", "--repeats=2", *mode)
        assert first.ret == 1
        assert chats(server) == 2 * n_rows()
        second = pytester.runpytest_subprocess("suites/tiny", "--model=openai:agent", f"--base-url={server.base_url}", "--retries=0", "--timeout=2", "--repeats=2", "--lf", *mode)
        assert second.ret == 0, second.stdout.str()
        assert chats(server) == 2 * n_rows() + 1
    second.stdout.fnmatch_lines(["*this run resumes run *--lf*"])
    merged = report(pytester)
    assert merged["overall"]["error"] == 0 and merged["n_results"] == n_rows()
    (case,) = [c for c in merged["cases"] if c.get("cached")]
    assert case["instruction"] == "close the dialog" and case["cached_attempts"] == 1


SLOW_FLUSH = """
import time
import guitest.cache

_flush = guitest.cache.ResponseCache.flush


def slow_flush(self):
    if self._pending:  # the last commit of a worker takes longer than the 5 s xdist's controller gives a
        time.sleep(6)  # finished worker before it interrupts it (what a loaded machine does to it)
    _flush(self)


guitest.cache.ResponseCache.flush = slow_flush
"""


def test_every_reply_is_committed_before_an_xdist_worker_reports_its_end(pytester: pytest.Pytester, tmp_path) -> None:
    """A worker's last commit used to happen in pytest_unconfigure, after it had told the controller it was done;
    the controller then ends the worker (execnet interrupts it after 5 s and kills it after 15 s), and on a
    loaded machine the replies of the last batch were lost (2 of 6 stored). A commit slowed past those 5 s
    reproduces it; every reply must be in the file."""
    write_suite(pytester.path / "suites" / "tiny")
    pytester.makeconftest(SLOW_FLUSH)
    with fakeserver.serve(tmp_path) as server:
        result = run(pytester, server.base_url, "-n", "2")
    assert result.ret == 0, result.stdout.str()
    assert _stored(pytester.path / "reports") == n_rows()


def test_cache_modes(pytester: pytest.Pytester, tmp_path) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    with fakeserver.serve(tmp_path) as server:
        off = run(pytester, server.base_url, "--cache=off")
        assert off.ret == 0
        off.stdout.fnmatch_lines(["guitest cache: off: every case asks the model"])
        assert not (pytester.path / "reports" / FILENAME).exists()
        assert run(pytester, server.base_url, "--cache=write").ret == 0
        assert run(pytester, server.base_url, "--cache=write").ret == 0  # write never reads: asks again
        assert run(pytester, server.base_url, "--cache=refresh").ret == 0  # refresh asks again and overwrites
        assert len(server.requests()) == 4 * n_rows()
        assert run(pytester, server.base_url, "--cache=read").ret == 0  # read answers from what is stored
        assert len(server.requests()) == 4 * n_rows()
    # another temperature is another key: nothing cached for it, and the endpoint is gone
    result = run(pytester, server.base_url, "--temperature=0.7", "--cache=on")
    assert result.ret == 1
    assert report(pytester)["overall"]["error"] == n_rows()


def test_baselines_bypass_the_cache(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    assert pytester.runpytest_subprocess("suites/tiny", "--model=oracle", "-p", "no:cacheprovider").ret == 0
    assert not (pytester.path / "reports" / FILENAME).exists()
    assert report(pytester)["run"]["cache"]["mode"].startswith("not used")


def reply(stored) -> tuple | None:
    """A stored reply as ``(text, finish_reason)``."""
    return None if stored is None else (stored.text, stored.finish_reason)


def _hammer(folder: str) -> None:
    from pathlib import Path

    from guitest.cache import ResponseCache

    from test_cache import reply

    cache = ResponseCache(Path(folder), "on")
    for i in range(30):
        cache.put(f"k{i}", "text", "stop", "m")
        assert reply(cache.get(f"k{i}")) == ("text", "stop")
    cache.close()


def test_workers_creating_the_cache_at_once(tmp_path) -> None:
    """xdist workers open a fresh cache file at the same moment: none of them may fail."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    for trial in range(6):
        folder = tmp_path / str(trial)
        procs = [ctx.Process(target=_hammer, args=(str(folder),)) for _ in range(4)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        assert [p.exitcode for p in procs] == [0, 0, 0, 0]
        with sqlite3.connect(folder / FILENAME) as db:
            assert db.execute("SELECT COUNT(*) FROM replies").fetchone()[0] == 30


def _stored(folder) -> int:
    with sqlite3.connect(folder / FILENAME) as db:
        return db.execute("SELECT COUNT(*) FROM replies").fetchone()[0]


def test_replies_are_committed_in_batches_and_at_close(tmp_path) -> None:
    from guitest.cache import BATCH, ResponseCache

    cache = ResponseCache(tmp_path, "on")
    for i in range(BATCH - 1):
        cache.put(f"k{i}", f"text {i}", "stop", "m")
    assert _stored(tmp_path) == 0  # not committed yet: the bounded loss of a killed run
    assert reply(cache.get("k3")) == ("text 3", "stop")  # but this process answers from them already
    cache.put("k-last", "last", None, "m")  # the batch is full: one commit
    assert _stored(tmp_path) == BATCH
    cache.put("k-after", "after", "stop", "m")
    assert _stored(tmp_path) == BATCH
    cache.close()  # the end of the run commits the rest
    assert _stored(tmp_path) == BATCH + 1
    again = ResponseCache(tmp_path, "on")
    assert reply(again.get("k-after")) == ("after", "stop") and reply(again.get("k-last")) == ("last", None)
    assert again.get("k-missing") is None
    again.close()


def test_an_old_batch_is_committed_with_the_next_reply(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    import guitest.cache

    monkeypatch.setattr(guitest.cache, "BATCH_SECONDS", 0.0)  # every batch is old at once
    cache = guitest.cache.ResponseCache(tmp_path, "on")
    cache.put("a", "text", "stop", "m")
    assert _stored(tmp_path) == 1
    cache.close()


def test_a_killed_process_loses_at_most_the_last_batch(tmp_path) -> None:
    import subprocess
    import sys

    from guitest.cache import BATCH

    n = 2 * BATCH + 5
    code = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from guitest.cache import ResponseCache\n"
        f"cache = ResponseCache(Path(sys.argv[1]), 'on')\n"
        f"for i in range({n}):\n"
        "    cache.put(f'k{i}', 'text', 'stop', 'm')\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], timeout=60)
    assert done.returncode == -9
    assert _stored(tmp_path) == 2 * BATCH  # the two full batches survive; the last 5 replies are asked again next run


def test_keys_are_read_once_and_other_processes_later_replies_are_misses(tmp_path) -> None:
    from guitest.cache import ResponseCache

    writer = ResponseCache(tmp_path, "on")
    writer.put("early", "one", "stop", "m")
    writer.close()
    reader = ResponseCache(tmp_path, "on")
    assert reply(reader.get("early")) == ("one", "stop")  # reads the stored keys
    writer = ResponseCache(tmp_path, "on")
    writer.put("late", "two", "stop", "m")
    writer.close()
    assert reader.get("late") is None  # stored after the reader read the keys: asked again, never wrong
    assert reply(ResponseCache(tmp_path, "read").get("late")) == ("two", "stop")
    reader.close()


def test_a_cache_that_cannot_be_written_never_fails_a_case(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening the file for a batch fails (disk gone, locked for a minute): the replies are counted as not
    written and asked again next run; put() itself never raises into the case."""
    import guitest.cache

    cache = guitest.cache.ResponseCache(tmp_path, "on")
    cache.close()

    def broken(self: guitest.cache.ResponseCache) -> sqlite3.Connection:
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(guitest.cache.ResponseCache, "_connect", broken)
    for i in range(guitest.cache.BATCH):
        cache.put(f"k{i}", "text", "stop", "m")  # the last one commits the batch, which fails
    assert cache.write_errors == guitest.cache.BATCH
    cache.close()


@MODES
def test_an_empty_reply_is_an_error_never_cached_and_asked_again(pytester: pytest.Pytester, tmp_path, mode: list[str]) -> None:
    """content null with finish_reason stop: an endpoint fault, so the case errors (--lf runs it again), and even
    --cache=on never answers a later run from it."""
    write_suite(pytester.path / "suites" / "tiny")
    with fakeserver.serve(tmp_path, script={"*": [{"content": None}] * 50}) as broken:
        first = run(pytester, broken.base_url, "--cache=on", *mode)
    assert first.ret == 1
    assert report(pytester)["overall"]["error"] == n_rows()
    assert all("empty reply" in c["error"] for c in report(pytester)["cases"])
    assert _stored(pytester.path / "reports") == 0
    x, y = center_norm("desktop", 0)
    with fakeserver.serve(tmp_path, script={"open the file menu": [{"content": f"Answer: [{x}, {y}]"}]}) as healthy:
        second = run(pytester, healthy.base_url, "--cache=on", *mode)
        assert chats(healthy) == n_rows()
    assert second.ret == 0, second.stdout.str()
    assert report(pytester)["overall"]["error"] == 0 and report(pytester)["overall"]["hit"] == 1


def test_a_huge_reply_is_kept_bounded_in_reports_and_cache(pytester: pytest.Pytester, tmp_path) -> None:
    """A 5 MB reply per case: reports and cache hold at most MAX_REPLY_CHARS per reply (its head and its tail, where
    the answer is), each case notes the cut, and the answer at the end is still read."""
    from guitest.run.case import MAX_REPLY_CHARS

    write_suite(pytester.path / "suites" / "tiny")
    x, y = center_norm("desktop", 0)
    script = {"open the file menu": [{"pad": 5_000_000, "content": f"Answer: [{x}, {y}]"}], "*": [{"pad": 5_000_000}] * 10}
    with fakeserver.serve(tmp_path, script=script) as server:
        result = run(pytester, server.base_url, "--timeout=60")
    assert result.ret == 0, result.stdout.str()
    folder = pytester.path / "reports"
    data = report(pytester)
    assert data["overall"]["hit"] == 1 and data["notes"]["reply_cut"] == n_rows()
    assert all(len(c["response"]) <= MAX_REPLY_CHARS + 100 and "reply_cut" in c["notes"] for c in data["cases"])
    for name in ("tiny.json", "tiny.html", FILENAME):
        assert (folder / name).stat().st_size < 2_000_000, name


def test_a_cache_written_before_usage_was_recorded_is_read_and_extended(tmp_path) -> None:
    from guitest.cache import ResponseCache

    # the replies table as guitest wrote it before each reply kept its call's usage (no usage column)
    db = sqlite3.connect(tmp_path / FILENAME)
    db.execute("CREATE TABLE replies (key TEXT PRIMARY KEY, text TEXT NOT NULL, finish_reason TEXT, model TEXT, created REAL, run TEXT)")
    db.execute("INSERT INTO replies VALUES ('old', 'Answer: [0.5, 0.5]', 'stop', 'm', 1.0, NULL)")
    db.commit()
    db.close()
    cache = ResponseCache(tmp_path, "on")
    old = cache.get("old")
    assert old is not None and old.text == "Answer: [0.5, 0.5]" and old.usage is None  # its usage unknown, never zero
    tally = {"calls": 1, "seconds": 0.25, "input_tokens": 900, "output_tokens": 12, "cost": 0.0002}
    cache.put("new", "Answer: [0.1, 0.2]", "stop", "m", tally)
    cache.close()
    again = ResponseCache(tmp_path, "on")
    new = again.get("new")
    assert new is not None and new.usage == tally and again.get("old").usage is None  # type: ignore[union-attr]
    again.close()
