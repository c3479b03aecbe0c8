"""Python's cyclic garbage collector paused while suite files are collected.

A suite makes hundreds of thousands of long-lived objects (rows, samples, items), and the collector
traverses all of them again and again while they are made: about a third of the time it takes to collect
100,000 cases (docs/bench.md). Sessions without suite files are left alone, and so is a collector the
user switched off.
"""

from __future__ import annotations

import gc


class CollectorPause:
    """One session's pause of the collector: from the first suite file until collection ends."""

    def __init__(self) -> None:
        self.paused = False

    def pause(self) -> None:
        """Switch the collector off, unless this pause holds it already or the user switched it off."""
        if not self.paused and gc.isenabled():
            gc.disable()
            self.paused = True

    def resume(self, freeze: bool = True) -> None:
        """Switch the collector back on after :meth:`pause`; with ``freeze``, first move every object so far into the
        permanent generation (:func:`gc.freeze`): the collected items live as long as the session, so later
        collections during the run need not traverse them either."""
        if self.paused:
            self.paused = False
            if freeze:
                gc.freeze()
            gc.enable()
