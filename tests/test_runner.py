"""``guitest.run.prefetch.Prefetcher``: bounded concurrent jobs consumed in order.

Concurrency is measured with counters under a lock inside the jobs, never with wall time.
"""

from __future__ import annotations

import signal
import threading
import time
from typing import Any, Callable

import pytest

from guitest.run.prefetch import Prefetcher

SLEEP = 0.2


class Recorder:
    """Jobs that sleep and record how many run at once and how many are started but not yet consumed."""

    def __init__(self, sleep: float = SLEEP) -> None:
        self.sleep = sleep
        self.lock = threading.Lock()
        self.running = 0
        self.max_running = 0
        self.started: list[str] = []
        self.start_times: dict[str, float] = {}
        self.consumed = 0
        self.max_unconsumed = 0
        self.runs: dict[str, int] = {}

    def job(self, key: str) -> Callable[[], Any]:
        def run() -> Any:
            with self.lock:
                self.running += 1
                self.max_running = max(self.max_running, self.running)
                self.started.append(key)
                self.start_times[key] = time.monotonic()
                self.runs[key] = self.runs.get(key, 0) + 1
                self.max_unconsumed = max(self.max_unconsumed, len(self.started) - self.consumed)
            try:
                time.sleep(self.sleep)
                return {"key": key, "square": int(key[1:]) ** 2}
            finally:
                with self.lock:
                    self.running -= 1

        return run

    def consume_in_order(self, prefetcher: Prefetcher, keys: list[str], pause: float = 0.0) -> list[Any]:
        """Ask for each key in turn, the rest as ``upcoming``; ``pause`` with each result, like a slow consumer."""
        out = []
        for i, key in enumerate(keys):
            value = prefetcher.result(key, self.job(key), upcoming=[(k, self.job(k)) for k in keys[i + 1 :]])
            if pause:
                # the consumer holds the result a while before it counts as taken (a conservative
                # count: jobs the call just started get the time to start while it is held)
                time.sleep(pause)
            with self.lock:
                self.consumed += 1
            out.append(value)
        return out


KEYS = [f"k{i}" for i in range(12)]


def test_runs_concurrency_at_a_time_within_the_window() -> None:
    rec = Recorder()
    prefetcher = Prefetcher(threads=4, window=6)
    try:
        results = rec.consume_in_order(prefetcher, KEYS)
    finally:
        prefetcher.close()
    assert rec.max_running == 4  # pool-bounded, and the prefetch really overlaps jobs
    assert rec.max_unconsumed <= 6  # never more than `window` started and not yet taken
    assert rec.max_unconsumed >= 4
    assert results == [{"key": k, "square": int(k[1:]) ** 2} for k in KEYS]
    assert rec.runs == {k: 1 for k in KEYS}  # a prefetched job is not run again when asked for


def test_a_slow_consumer_lets_jobs_run_ahead_only_up_to_the_window() -> None:
    # Jobs are quick and the consumer dawdles, so the pool would run far ahead if it could:
    # the window is what stops it, and it is reached exactly.
    rec = Recorder(sleep=0.01)
    prefetcher = Prefetcher(threads=4, window=6)
    try:
        results = rec.consume_in_order(prefetcher, KEYS, pause=0.05)
    finally:
        prefetcher.close()
    assert rec.max_unconsumed == 6
    assert [r["key"] for r in results] == KEYS
    assert rec.runs == {k: 1 for k in KEYS}


def test_default_window_is_respected() -> None:
    rec = Recorder()
    prefetcher = Prefetcher(threads=4)
    try:
        results = rec.consume_in_order(prefetcher, KEYS)
    finally:
        prefetcher.close()
    assert rec.max_running == 4
    assert rec.max_unconsumed <= prefetcher.window
    assert [r["key"] for r in results] == KEYS


def test_a_window_smaller_than_the_pool_bounds_concurrency() -> None:
    # With window 2, at most 2 jobs may be started and unconsumed, so at most 2 run at once
    # even though the pool has 4 threads.
    rec = Recorder(sleep=0.05)
    prefetcher = Prefetcher(threads=4, window=2)
    try:
        results = rec.consume_in_order(prefetcher, KEYS[:8])
    finally:
        prefetcher.close()
    assert rec.max_unconsumed <= 2
    assert rec.max_running == 2
    assert [r["key"] for r in results] == KEYS[:8]


def test_without_upcoming_jobs_run_one_at_a_time() -> None:
    rec = Recorder(sleep=0.02)
    prefetcher = Prefetcher(threads=4)
    try:
        for key in KEYS[:4]:
            assert prefetcher.result(key, rec.job(key))["key"] == key
    finally:
        prefetcher.close()
    assert rec.max_running == 1


def test_results_match_their_keys_when_jobs_finish_out_of_order() -> None:
    # Earlier keys sleep longer, so later jobs finish first; each key still gets its own result.
    def job(key: int) -> Callable[[], int]:
        def run() -> int:
            time.sleep(0.01 * (6 - key))
            return key * 10

        return run

    prefetcher = Prefetcher(threads=6)
    try:
        keys = list(range(6))
        got = [prefetcher.result(k, job(k), upcoming=[(u, job(u)) for u in keys[i + 1 :]]) for i, k in enumerate(keys)]
    finally:
        prefetcher.close()
    assert got == [0, 10, 20, 30, 40, 50]


def test_a_failing_job_raises_for_its_own_key_only() -> None:
    def ok(value: int) -> Callable[[], int]:
        return lambda: value

    def boom() -> int:
        raise RuntimeError("endpoint exploded")

    prefetcher = Prefetcher(threads=2)
    try:
        assert prefetcher.result("a", ok(1), upcoming=[("b", boom), ("c", ok(3))]) == 1
        with pytest.raises(RuntimeError, match="endpoint exploded"):
            prefetcher.result("b", boom, upcoming=[("c", ok(3))])
        assert prefetcher.result("c", ok(99)) == 3  # the prefetched job's result, not a re-run
    finally:
        prefetcher.close()


def test_close_cancels_jobs_not_started() -> None:
    ran: list[str] = []
    lock = threading.Lock()
    blocker_started = threading.Event()
    release = threading.Event()

    def record(key: str) -> Callable[[], str]:
        def run() -> str:
            with lock:
                ran.append(key)
            return key

        return run

    def blocker() -> str:
        with lock:
            ran.append("slow")
        blocker_started.set()
        release.wait(5)
        return "slow"

    prefetcher = Prefetcher(threads=1, window=5)
    upcoming = [("slow", blocker), ("q1", record("q1")), ("q2", record("q2")), ("q3", record("q3"))]
    assert prefetcher.result("first", record("first"), upcoming=upcoming) == "first"
    # one worker thread: "slow" runs, q1..q3 wait in the queue behind it
    assert blocker_started.wait(5)
    timer = threading.Timer(0.1, release.set)
    timer.start()
    try:
        left = prefetcher.close()  # cancels q1..q3, waits for "slow"
    finally:
        timer.cancel()
        release.set()
    assert ran == ["first", "slow"]
    # the job that ran and was never taken is handed back (the session keeps its answer or counts its calls)
    assert left == [("slow", "slow")] and prefetcher.close() == []


def test_concurrency_must_be_positive() -> None:
    with pytest.raises(ValueError):
        Prefetcher(threads=0)


def test_orphaned_prefetches_do_not_stop_prefetching_for_good() -> None:
    first = Recorder(sleep=0.02)
    later = Recorder(sleep=0.1)
    keys = [f"k{i}" for i in range(12)]
    skipped = {"k1", "k2", "k3"}  # in the upcoming list when k0 runs, then never asked for

    def job(key: str) -> Callable[[], Any]:
        return (later if int(key[1:]) >= 4 else first).job(key)

    prefetcher = Prefetcher(threads=4, window=4)
    try:
        asked = [k for k in keys if k not in skipped]
        for key in asked:
            rest = keys[keys.index(key) + 1 :]
            assert prefetcher.result(key, job(key), upcoming=[(k, job(k)) for k in rest])["key"] == key
    finally:
        prefetcher.close()
    # k4..k11 are 8 jobs and nothing else runs by then: they should overlap again
    assert later.max_running == 4


def test_a_stopped_run_closes_without_waiting_for_the_jobs_running() -> None:
    """Ctrl-C or SIGTERM: the report is written at once, not after the model calls in flight (up to --timeout each), and
    the process may end with them running (daemon threads). Before: close() waited for every running job."""
    release = threading.Event()
    started = threading.Event()

    def held() -> str:
        started.set()
        release.wait(60)
        return "late"

    prefetcher = Prefetcher(threads=2)
    prefetcher._pool.submit(held)
    queued = [prefetcher._pool.submit(held) for _ in range(3)]  # two wait for a thread
    assert started.wait(60)
    running = list(prefetcher._pool._threads)
    assert len(running) == 2 and all(t.daemon for t in running)
    prefetcher.close(wait=False)  # returns with both threads still in held()
    assert any(t.is_alive() for t in running) and any(f.cancelled() for f in queued)
    prefetcher.close()  # a second close (the process's end) does not wait for them either
    release.set()
    for thread in running:
        thread.join(60)
    assert not any(t.is_alive() for t in running)  # and they end once their job does


class Signalled(Exception):
    pass


def test_a_signal_another_thread_took_reaches_the_main_thread_waiting_for_a_result() -> None:
    """The kernel may give a process's signal to any of its threads (SIGTERM from an xdist controller went to a
    worker's execnet thread); Python runs the handler in the main thread, which must not sit in an untimed lock wait
    meanwhile: before, the handler ran only once the case it waited for had ended."""
    job_may_end = threading.Event()
    started = threading.Event()
    ended = threading.Event()

    def job() -> str:
        started.set()
        job_may_end.wait(60)  # a bound so that a regression fails rather than hangs
        ended.set()
        return "done"

    def raise_signalled(signum: int, frame: Any) -> None:
        raise Signalled()

    def signal_this_thread_once_the_job_runs() -> None:
        if started.wait(60):
            signal.pthread_kill(threading.get_ident(), signal.SIGUSR1)

    other = threading.Thread(target=signal_this_thread_once_the_job_runs)
    previous = signal.signal(signal.SIGUSR1, raise_signalled)
    prefetcher = Prefetcher(1)
    try:
        other.start()  # the signal goes to that thread, not to this one (the main thread waits in result())
        with pytest.raises(Signalled):
            prefetcher.result("a", job)
        assert not ended.is_set()  # handled while the job was still running
    finally:
        signal.signal(signal.SIGUSR1, previous)
        job_may_end.set()
        started.set()
        other.join()
        prefetcher.close()
