"""OSWorld's and Windows Agent Arena's machine protocol and task format, without desktop-env's stack.

Plain modules, no pytest:

- :mod:`.client`: an HTTP client of the machine server both benchmarks run on their VMs (port 5000),
  standard library only, every failure an actionable :class:`~guitest.live.protocol.EnvFailure`.
- :mod:`.pool`: several machines shared by episodes, one episode per machine at a time, across processes.
- :mod:`.setup`: a task's ``config`` and ``postconfig`` steps (download, launch, open, execute, ...).
- :mod:`.getters` and :mod:`.metrics`: the evaluator's getters (through the protocol) and metrics.
- :mod:`.evaluate`: an evaluator run as the harness runs it (``conj`` and/or, the FAIL rule), or a
  ``decided_by: judge`` marker when guitest does not implement a part of it.
"""
