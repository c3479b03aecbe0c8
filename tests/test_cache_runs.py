"""Two runs on one cache: a run tells a run that is running now from one that was killed (a lock the running one holds
for its whole life, released by the OS when its process dies), never resumes nor reads a running one, and still
resumes a killed one."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import fakeserver
from builders import n_rows, write_suite
from guitest import cache as cache_mod
from guitest.cache import FILENAME, ResponseCache, RunLock, close_run, live_runs, open_run

MODES = pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])


def command(base_url: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "suites/tiny", "--model=openai:agent", f"--base-url={base_url}", "--retries=0", "--timeout=20", "-p", "no:cacheprovider", *extra]


def stored(folder: Path) -> int:
    path = folder / FILENAME
    if not path.exists():
        return 0
    db = sqlite3.connect(path, timeout=60)
    try:
        return db.execute("SELECT count(*) FROM replies").fetchone()[0]
    except sqlite3.OperationalError:
        return 0  # the table is not made yet
    finally:
        db.close()


#: every reply its own commit, so a run that is held after its first reply has stored it (by default the cache commits
#: a batch when the next reply comes a second later, which a held run never sends)
COMMIT_EACH = "import guitest.cache\nguitest.cache.BATCH = 1\n"


def held_script(mode: list[str]) -> dict:
    """The first reply at once, then every request held until the test releases "first": one in flight per process
    at --concurrency=1 (the answered worker's next request and, under -n 2, the other worker's first)."""
    return {"*": [{}] + [{"hold": "first"}] * (2 if mode else 1)}


def start_held_run(pytester: pytest.Pytester, server: fakeserver.Server, mode: list[str]) -> subprocess.Popen[bytes]:
    """A run asking one case at a time, in a process group of its own (so it can be stopped and killed whole),
    returned once it has stored its first reply and every process of it waits for a held reply: it cannot end
    before the test lets it, however busy the machine."""
    pytester.makeconftest(COMMIT_EACH)
    out = open(pytester.path / "first.txt", "wb")  # noqa: SIM115 (closed with the process below)
    first = subprocess.Popen(
        command(server.base_url, "--concurrency=1", *mode),
        cwd=pytester.path,
        stdout=out,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(pytester.path), os.environ.get("PYTHONPATH")]))},
        start_new_session=True,
    )
    out.close()
    asked = len(held_script(mode)["*"])  # the answered request and the held ones
    deadline = time.monotonic() + 120
    while stored(pytester.path / "reports") == 0 or len(server.requests()) < asked:
        assert first.poll() is None, (pytester.path / "first.txt").read_text()
        assert time.monotonic() < deadline, "the first run did not store a reply and wait for the next within 120 s"
        time.sleep(0.05)
    return first


@MODES
def test_a_run_started_while_another_runs_on_the_same_cache_never_reads_its_replies(pytester: pytest.Pytester, tmp_path, mode: list[str]) -> None:
    """Before: the second run took the first, still running, for an interrupted run, resumed it and read its replies."""
    write_suite(pytester.path / "suites" / "tiny")
    with fakeserver.serve(tmp_path, script=held_script(mode)) as server:
        first = start_held_run(pytester, server, mode)
        os.killpg(first.pid, signal.SIGSTOP)  # running still (its lock held), but it can no longer end meanwhile
        server.release("first")  # the second run's requests are answered (a hold left over included)
        try:
            # its own report folder (the first writes reports/tiny.* as it ends), the same cache
            second = pytester.run(*command(server.base_url, "--report-dir=second", "--cache-dir=reports", *mode), timeout=120)
        finally:
            os.killpg(first.pid, signal.SIGKILL)  # its end is not the point; waiting for it would cost seconds
            first.wait(timeout=30)
        assert second.ret == 0, second.stdout.str()
    second.stdout.fnmatch_lines(
        [
            "*guitest cache: resume: a fresh run*",
            "*guitest cache: resume: run * of this model, endpoint and settings is running now on *(process *, started *): this run neither "
            "resumes it nor reads any of its replies. To resume it instead, wait until it ends*its own --cache-dir*",
        ]
    )
    record = json.loads((pytester.path / "second" / "tiny.json").read_text())["run"]["cache"]
    report = json.loads((pytester.path / "second" / "tiny.json").read_text())
    assert report["n_results"] == n_rows() and not any(c.get("cached") for c in report["cases"])  # every case asked the model
    assert record["cases_answered_from_cache"] == 0 and len(record["running_runs_passed_over"]) == 1


@MODES
def test_a_killed_run_is_still_resumed_by_the_next_one(pytester: pytest.Pytester, tmp_path, mode: list[str]) -> None:
    """SIGKILL (no chance to release anything): the OS releases the run's lock, so the next run resumes it and reads
    back what it stored."""
    write_suite(pytester.path / "suites" / "tiny")
    with fakeserver.serve(tmp_path, script=held_script(mode)) as server:
        first = start_held_run(pytester, server, mode)
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=30)
        kept = stored(pytester.path / "reports")
        assert kept == 1
        server.release("first")
        asked = len(server.requests())
        second = pytester.run(*command(server.base_url, *mode), timeout=120)
        assert second.ret == 0, second.stdout.str()
        assert len(server.requests()) - asked == n_rows() - kept
    second.stdout.fnmatch_lines(["*guitest cache: resume: this run resumes run * it did not finish*"])
    assert "running now" not in second.stdout.str()
    assert json.loads((pytester.path / "reports" / "tiny.json").read_text())["run"]["cache"]["cases_answered_from_cache"] == kept


# -- the ledger and the lock, in one process ---------------------------------------------------------


def test_a_run_whose_lock_is_held_is_passed_over(tmp_path) -> None:
    first, lock = open_run(tmp_path, "scope", resume=False)
    assert first.resumes is None and first.running == ()
    second, second_lock = open_run(tmp_path, "scope", resume=False)  # the first is running: not resumed
    assert second.id != first.id and second.resumes is None and [r["id"] for r in second.running] == [first.id]
    assert second.running[0]["pid"] == os.getpid()
    second_lock.release()
    lock.release()


def test_a_run_whose_process_died_is_resumed(tmp_path) -> None:
    first, lock = open_run(tmp_path, "scope", resume=False)
    lock.release()  # its process died: the OS released the lock, and nothing recorded the run's end
    second, second_lock = open_run(tmp_path, "scope", resume=False)
    assert second.id == first.id and second.resumes is not None and second.resumes["why"] == "it did not finish" and second.running == ()
    close_run(tmp_path, second.id, complete=True)
    second_lock.release()
    assert not list((tmp_path / cache_mod.LOCKS).iterdir())  # a run that ended leaves no lock file


def test_a_run_that_ended_complete_is_not_resumed_and_lf_resumes_the_latest_run_not_running(tmp_path) -> None:
    old, lock = open_run(tmp_path, "scope", resume=False)
    close_run(tmp_path, old.id, complete=True)
    lock.release()
    fresh, fresh_lock = open_run(tmp_path, "scope", resume=False)
    assert fresh.id != old.id and fresh.resumes is None
    rerun, rerun_lock = open_run(tmp_path, "scope", resume=True)  # --lf while `fresh` runs: the latest run that is over
    assert rerun.id == old.id and rerun.resumes is not None and rerun.resumes["why"] == "--lf"
    assert [r["id"] for r in rerun.running] == [fresh.id]
    rerun_lock.release()
    fresh_lock.release()


def test_cache_on_never_reads_the_replies_of_a_run_running_now(tmp_path) -> None:
    running, lock = open_run(tmp_path, "scope", resume=False)
    writer = ResponseCache(tmp_path, "on", running.id)
    writer.put("k", "its reply", "stop", "m")
    writer.close()
    assert live_runs(tmp_path, "another") == [running.id]
    assert ResponseCache(tmp_path, "on", "another").get("k") is None
    assert ResponseCache(tmp_path, "on", running.id).get("k") is not None  # its own replies, to itself
    close_run(tmp_path, running.id, complete=True)
    lock.release()
    assert live_runs(tmp_path, "another") == []
    assert ResponseCache(tmp_path, "read", "another").get("k") is not None


def test_looking_at_a_lock_creates_nothing(tmp_path) -> None:
    assert RunLock.held(tmp_path, "gone") is False
    assert not (tmp_path / cache_mod.LOCKS).exists()
