"""The response cache: a second identical run is answered from it, byte for byte the same report, serial and -n 2."""

from __future__ import annotations

import json
import sqlite3

import pytest

import fakeserver
from builders import center_norm, n_rows, write_suite
from guitest.cache import FILENAME


def run(pytester: pytest.Pytester, base_url: str, *extra: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "suites/tiny", "--model=openai:agent", f"--base-url={base_url}", "--retries=0", "--timeout=2", "-p", "no:cacheprovider", *extra
    )


def report(pytester: pytest.Pytester) -> dict:
    data = json.loads((pytester.path / "reports" / "tiny.json").read_text())
    return data


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_second_run_is_answered_from_the_cache(pytester: pytest.Pytester, tmp_path, mode: list[str]) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    x, y = center_norm("desktop", 0)
    script = {"open the file menu": [{"content": f"Answer: [{x}, {y}]"}]}
    with fakeserver.serve(tmp_path, script=script) as server:
        first = run(pytester, server.base_url, *mode)
        calls = len(server.requests())
        url = server.base_url
    assert first.ret == 0, first.stdout.str()
    assert calls == n_rows()
    one = report(pytester)
    assert one["run"]["cache"]["attempts_answered_from_cache"] == 0
    with sqlite3.connect(pytester.path / "reports" / FILENAME) as db:
        assert db.execute("SELECT COUNT(*) FROM replies").fetchone()[0] == n_rows()
    # the endpoint is gone: every case must come from the cache, and the report is the same
    second = run(pytester, url, *mode)
    assert second.ret == 0, second.stdout.str()
    two = report(pytester)
    assert two["run"]["cache"]["attempts_answered_from_cache"] == n_rows()
    second.stdout.fnmatch_lines([f"*{n_rows()} answered from the response cache*"])
    one.pop("run"), two.pop("run")
    assert json.dumps(one, sort_keys=True) == json.dumps(two, sort_keys=True)
    assert one["overall"]["hit"] == 1


def test_cache_modes(pytester: pytest.Pytester, tmp_path) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    with fakeserver.serve(tmp_path) as server:
        assert run(pytester, server.base_url, "--cache=off").ret == 0
        assert not (pytester.path / "reports" / FILENAME).exists()
        assert run(pytester, server.base_url, "--cache=write").ret == 0
        assert run(pytester, server.base_url, "--cache=write").ret == 0  # write never reads: asks again
        assert run(pytester, server.base_url, "--cache=refresh").ret == 0  # refresh asks again and overwrites
        assert len(server.requests()) == 4 * n_rows()
        assert run(pytester, server.base_url, "--cache=read").ret == 0  # read answers from what is stored
        assert len(server.requests()) == 4 * n_rows()
    # another temperature is another key: nothing cached for it, and the endpoint is gone
    result = run(pytester, server.base_url, "--temperature=0.7")
    assert result.ret == 1
    assert report(pytester)["overall"]["error"] == n_rows()


def test_baselines_bypass_the_cache(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    assert pytester.runpytest_subprocess("suites/tiny", "--model=oracle", "-p", "no:cacheprovider").ret == 0
    assert not (pytester.path / "reports" / FILENAME).exists()
    assert report(pytester)["run"]["cache"]["mode"].startswith("not used")


def _hammer(folder: str) -> None:
    from pathlib import Path

    from guitest.cache import ResponseCache

    cache = ResponseCache(Path(folder), "on")
    for i in range(30):
        cache.put(f"k{i}", "text", "stop", "m")
        assert cache.get(f"k{i}") == ("text", "stop")
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
    assert cache.get("k3") == ("text 3", "stop")  # but this process answers from them already
    cache.put("k-last", "last", None, "m")  # the batch is full: one commit
    assert _stored(tmp_path) == BATCH
    cache.put("k-after", "after", "stop", "m")
    assert _stored(tmp_path) == BATCH
    cache.close()  # the end of the run commits the rest
    assert _stored(tmp_path) == BATCH + 1
    again = ResponseCache(tmp_path, "on")
    assert again.get("k-after") == ("after", "stop") and again.get("k-last") == ("last", None)
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
    assert reader.get("early") == ("one", "stop")  # reads the stored keys
    writer = ResponseCache(tmp_path, "on")
    writer.put("late", "two", "stop", "m")
    writer.close()
    assert reader.get("late") is None  # stored after the reader read the keys: asked again, never wrong
    assert ResponseCache(tmp_path, "read").get("late") == ("two", "stop")
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
