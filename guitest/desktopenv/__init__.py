"""The ``desktop`` live backend in one place: OSWorld's and Windows Agent Arena's machine protocol and task format,
the client side, without desktop-env's stack; :mod:`guitest.localdesktop` is the machine side (a local desktop and
guitest's own server of that protocol). Named after ``desktop_env``, the package both benchmarks' harnesses use.

Plain modules, no pytest (this file imports nothing, so the backend's entry loads alone):

- :mod:`.backend`: what the backend tells guitest's general modules (:mod:`guitest.backends`): its options, the
  machine a run needs, its waits, the header's line on its machines; loaded by every run, light.
- :mod:`.machine`: the environment that drives a machine through the modules below (``env: desktop``).
- :mod:`.commands`: ``guitest desktop up|down|list|...``, a local desktop from the command line.

- :mod:`.client`: an HTTP client of the machine server both benchmarks run on their VMs (port 5000),
  standard library only, every failure an actionable :class:`~guitest.live.protocol.EnvFailure`.
- :mod:`.machine_pool`: several machines shared by episodes, one episode per machine at a time, across processes.
- :mod:`.setup`: a task's ``config`` and ``postconfig`` steps (download, launch, open, execute, ...).
- :mod:`.getters` and :mod:`.metrics`: the evaluator's getters (through the protocol) and metrics.
- :mod:`.evaluate`: an evaluator run as the harness runs it (``conj`` and/or, the FAIL rule), or a
  ``decided_by: judge`` marker when guitest does not implement a part of it.
- :mod:`.provider`: reverting a machine through desktop-env's providers (``--env-provider``).
- :mod:`.task`: what a task's ``Sample.data`` holds, and the oracle's actions.
- :mod:`.reader`: the task-file reader (suite.yaml ``format: osworld``), OSWorld's and WAA's.
- :mod:`.waa`: Windows Agent Arena's task files, task lists and the infeasible rule.
"""
