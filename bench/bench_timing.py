"""A pytest plugin for the bench: when the cases ran, measured inside the controller.

    PYTHONPATH=bench GUITEST_BENCH_TIMING=out.json pytest ... -p bench_timing

Writes ``{"run_s", "run_cpu_s", "first_start", "last_end", "sessionfinish_s", "n_reports"}`` to the
file named by ``$GUITEST_BENCH_TIMING`` at the end of the session (controller only):
``run_s`` is from the first case's start to the last case's end as the controller
sees them (under xdist: the first ``logstart`` and the last teardown report it
receives), so start-up, collection and the report writing at the end are all
outside it; ``run_cpu_s`` is the CPU (user + system, all threads) the controller process
used over the same span (serial runs: all of the run's CPU but the server's); under xdist,
``workers`` gives each worker's own ``run_s`` and ``run_cpu_s`` (measured the same way in
the worker, which sends them through a file beside the output); ``sessionfinish_s`` is how long every ``pytest_sessionfinish`` took
(guitest's report building and writing). Times are ``time.time()``.
"""

from __future__ import annotations

import glob
import json
import os
import resource
import time
from typing import Any

import pytest

_T: dict[str, Any] = {"n_reports": 0}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    if "first_start" not in _T:
        _T["first_start"] = time.time()
        _T["cpu_at_start"] = _cpu()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "teardown":
        _T["last_end"] = time.time()
        _T["cpu_at_end"] = _cpu()
        _T["n_reports"] += 1


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> Any:
    t = time.time()
    try:
        return (yield)
    finally:
        _T["sessionfinish_s"] = time.time() - t


def pytest_unconfigure(config: pytest.Config) -> None:
    path = os.environ.get("GUITEST_BENCH_TIMING")
    if not path:
        return
    if "first_start" in _T and "last_end" in _T:
        _T["run_s"] = _T["last_end"] - _T["first_start"]
        _T["run_cpu_s"] = _T.pop("cpu_at_end") - _T.pop("cpu_at_start")
    worker = getattr(config, "workerinput", {}).get("workerid")
    if worker is not None:  # an xdist worker: its own span and CPU, merged by the controller
        with open(f"{path}.{worker}", "w") as f:
            json.dump({k: _T.get(k) for k in ("run_s", "run_cpu_s")}, f)
        return
    workers = {}
    for part in sorted(glob.glob(f"{glob.escape(path)}.gw*")):
        with open(part) as f:
            workers[part.rsplit(".", 1)[1]] = json.load(f)
        os.unlink(part)
    if workers:
        _T["workers"] = workers
    with open(path, "w") as f:
        json.dump(_T, f)
