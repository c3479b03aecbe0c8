"""Concurrent model calls inside one worker: cases run ahead of pytest, in a bounded thread pool.

pytest runs one item at a time; a model endpoint wants many requests in flight. When
an item asks for its result, the prefetcher also starts the next few upcoming cases
(at most ``window`` unconsumed results at once, so memory stays bounded) and then
waits for the item's own.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Hashable, Sequence

Job = Callable[[], Any]


class Prefetcher:
    """Runs jobs ``threads`` at a time, keeping at most ``window`` results started but not yet taken."""

    def __init__(self, threads: int, window: int | None = None) -> None:
        if threads < 1:
            raise ValueError("threads must be at least 1")
        self.window = max(window or 2 * threads, 1)
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="guitest-case")
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
        return futures.pop(key).result()

    def close(self) -> list[tuple[Hashable, Any]]:
        """Cancel jobs not yet started and let running ones finish; ``(key, result)`` of the jobs that ran and were
        never taken (started ahead of a test that did not run, or dropped from the window), in no order. Closing again
        returns nothing more."""
        running = [(k, f) for k, f in self._futures.items() if not f.cancel()] + self._dropped
        self._futures.clear()
        self._dropped = []
        self._pool.shutdown(wait=True, cancel_futures=True)
        return [(k, f.result()) for k, f in running if not f.cancelled() and f.exception() is None]
