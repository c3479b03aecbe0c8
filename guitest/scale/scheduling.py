"""xdist's ``load`` scheduling, keeping every worker's queue deep enough for guitest's lookahead; and a worker's
view of its own queue, which that lookahead starts cases from.

A guitest worker starts the cases queued on it ahead of pytest (:mod:`guitest.run.prefetch`),
so it can keep ``--concurrency`` requests in flight only while that many cases are
queued on it. xdist's ``load`` scheduling refills a worker from a fraction of what
remains, and holds off refilling a worker whose last test took 0.1 s or more while two
are still queued ("long-running tests"). A case that waits 0.1 s for its reply looks
like such a test: the worker's queue runs down to two, its requests in flight with it,
and a run with ``-n 2`` at ``--concurrency=32`` keeps about 13 requests in flight per
worker instead of 32 (docs/bench.md).

:class:`DeepLoadScheduling` is xdist's ``LoadScheduling`` without that hold-off, and
with every worker topped up to ``depth`` queued cases whenever it finishes one while
cases remain. Everything else (the order cases are sent in, crash handling, shutdown)
is xdist's. It uses xdist's scheduler internals (``pending``, ``node2pending``,
``_send_tests``), stable since xdist 2; when they are not there, :func:`make` returns
None and xdist's own scheduling runs.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable


def make(config: Any, log: Any, depth: int) -> Any:
    """A :class:`DeepLoadScheduling` for this run, or None when this xdist's scheduler lacks the parts it uses."""
    try:
        from xdist.scheduler import LoadScheduling
    except ImportError:
        return None
    if not all(hasattr(LoadScheduling, name) for name in ("_send_tests", "check_schedule", "schedule")):
        return None

    class DeepLoadScheduling(LoadScheduling):
        """xdist's load scheduling; every worker kept at ``depth`` queued cases or more while cases remain."""

        def schedule(self) -> None:
            super().schedule()
            if self.collection:
                share = self._share()
                for node in self.nodes:
                    self._top_up(node, share)

        def check_schedule(self, node: Any, duration: float = 0) -> None:
            # the case's duration is the endpoint's latency, not work: never a reason to hold the queue back
            super().check_schedule(node, 0)
            self._top_up(node, self._share())

        def _share(self) -> int:
            """The pending cases split evenly over the workers, rounded up."""
            return -(-len(self.pending) // max(len(self.nodes), 1))

        def _top_up(self, node: Any, share: int) -> None:
            """Queue up to ``depth`` cases on ``node``, but never more than ``share`` of the pending ones at a time,
            so a small suite is still spread over every worker."""
            if node.shutting_down or not self.pending:
                return
            missing = min(depth - len(self.node2pending[node]), share)
            if missing > 0:
                self._send_tests(node, missing)
            if not self.pending:  # everything is handed out: workers stop once their queues are done
                for other in self.nodes:
                    if not other.shutting_down:
                        other.shutdown()

    return DeepLoadScheduling(config, log)


def queued(plugins: Callable[[], Iterable[Any]]) -> Callable[[int], list[int]]:
    """On an xdist worker whose registered ``plugins`` include xdist's ``WorkerInteractor``: a function giving the
    indices xdist has queued on this worker (the next one, then at most ``limit`` more); it gives none when the
    queue cannot be read, so the worker runs without lookahead rather than fail."""
    found: list[Any] = []

    def pending(limit: int) -> list[int]:
        if not found:
            found.append(next((p for p in plugins() if hasattr(p, "torun") and hasattr(p, "nextitem_index")), False))
        interactor = found[0]
        if not interactor:
            return []
        try:
            with interactor.torun.lock() as queue:
                indices = [interactor.nextitem_index, *list(queue)[:limit]]
        except Exception:  # xdist internals changed
            return []
        return [i for i in indices if isinstance(i, int)]

    return pending
