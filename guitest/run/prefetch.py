"""Concurrent model calls inside one worker: cases run ahead of pytest, in a bounded thread pool.

pytest runs one item at a time; a model endpoint wants many requests in flight. When
an item asks for its result, the prefetcher also starts the next few upcoming cases
(at most ``window`` unconsumed results at once, so memory stays bounded) and then
waits for the item's own.

Its threads are daemon threads: a run that is stopped (Ctrl-C, SIGTERM) writes its report and ends without waiting
for the model calls in flight (up to ``--timeout`` each, past a CI runner's patience), whose replies no report would
hold anyway (``--lf`` asks for them again).

The thread that asks for a result waits for it in slices of :data:`WAIT_SLICE`: the kernel may hand a stop signal
(SIGTERM, SIGHUP: guitest.run.stopsignals) to any of the process's threads, and Python runs its handler in the main thread
only when that thread next runs bytecode. A wait on a lock without a timeout is not ended by a signal another thread
took, so an xdist worker whose main thread waited for a 30 s episode handled its controller's SIGTERM only once the
episode ended: after the controller had given up on it (10 s) and killed it, its machines never stopped.
"""

from __future__ import annotations

import queue
import threading
from concurrent.futures import Future, wait
from typing import Any, Callable, Hashable, Sequence

Job = Callable[[], Any]

#: the longest the thread that asks for a result goes without running Python code (and so its signal handlers)
WAIT_SLICE = 0.25


def taken(future: Future[Any]) -> Any:
    """``future.result()``, waited for in slices so that a signal handler runs within :data:`WAIT_SLICE`."""
    while not wait((future,), timeout=WAIT_SLICE).done:
        pass
    return future.result()


class _Pool:
    """Up to ``threads`` daemon threads running submitted jobs in order, started as jobs find none idle."""

    def __init__(self, threads: int, name: str) -> None:
        self._max = threads
        self._name = name
        self._jobs: queue.SimpleQueue[tuple[Future[Any], Job] | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._idle = threading.Semaphore(0)
        self._lock = threading.Lock()
        self._shut = False

    def submit(self, job: Job) -> Future[Any]:
        future: Future[Any] = Future()
        self._jobs.put((future, job))
        if self._idle.acquire(blocking=False):  # a thread is waiting for work: it takes this job
            return future
        with self._lock:
            if len(self._threads) < self._max:
                thread = threading.Thread(target=self._work, name=f"{self._name}_{len(self._threads)}", daemon=True)
                self._threads.append(thread)
                thread.start()
        return future

    def _work(self) -> None:
        while True:
            item = self._jobs.get()
            if item is None:
                return
            future, job = item
            del item
            if future.set_running_or_notify_cancel():
                try:
                    result = job()
                except BaseException as exc:  # noqa: BLE001 - handed to the thread that asks for the result
                    future.set_exception(exc)
                else:
                    future.set_result(result)
            del future, job
            self._idle.release()

    def shutdown(self, wait: bool) -> None:
        """Cancel the jobs not started; with ``wait``, let the running ones finish. Once: a later call returns at once
        (the threads a first ``wait=False`` left running are not waited for then either)."""
        with self._lock:
            if self._shut:
                return
            self._shut = True
        while True:
            try:
                item = self._jobs.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                item[0].cancel()
        with self._lock:
            threads = list(self._threads)
        for _ in threads:
            self._jobs.put(None)
        if wait:
            for thread in threads:
                thread.join()


class Prefetcher:
    """Runs jobs ``threads`` at a time, keeping at most ``window`` results started but not yet taken."""

    def __init__(self, threads: int, window: int | None = None) -> None:
        if threads < 1:
            raise ValueError("threads must be at least 1")
        self.window = max(window or 2 * threads, 1)
        self._pool = _Pool(threads, "guitest-case")
        self._futures: dict[Hashable, Future[Any]] = {}
        self._dropped: list[tuple[Hashable, Future[Any]]] = []  # started, no longer wanted, and already running (so not cancelled)

    def result(self, key: Hashable, job: Job, upcoming: Sequence[tuple[Hashable, Job]] = ()) -> Any:
        """The result of ``job`` (started now unless already running), after starting upcoming jobs up to the window.

        ``upcoming`` is what this process will ask for next, in order. When the window is
        full and an upcoming job has not started, started jobs that are no longer upcoming
        (their test was skipped, or another xdist worker took it) are dropped, so they
        never hold a slot of the window.
        """
        futures = self._futures
        if key not in futures:
            futures[key] = self._pool.submit(job)
        swept = False
        for next_key, next_job in upcoming:
            if next_key in futures:
                continue
            if len(futures) >= self.window:
                if swept:
                    break
                swept = True
                wanted = {key, *(k for k, _ in upcoming[: self.window])}
                for stale in [k for k in futures if k not in wanted]:
                    dropped = futures.pop(stale)
                    if not dropped.cancel():
                        self._dropped.append((stale, dropped))
                if len(futures) >= self.window:
                    break
            futures[next_key] = self._pool.submit(next_job)
        return taken(futures.pop(key))

    def close(self, wait: bool = True) -> list[tuple[Hashable, Any]]:
        """Cancel jobs not yet started; with ``wait``, let the running ones finish (``wait=False``, a stopped run: return
        at once, leaving them to end with the process). ``(key, result)`` of the jobs that ran, were never taken
        (started ahead of a test that did not run, or dropped from the window) and are done by then, in no order.
        Closing again returns nothing more."""
        running = [(k, f) for k, f in self._futures.items() if not f.cancel()] + self._dropped
        self._futures.clear()
        self._dropped = []
        self._pool.shutdown(wait=wait)
        return [(k, f.result()) for k, f in running if f.done() and not f.cancelled() and f.exception() is None]
