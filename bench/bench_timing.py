"""A pytest plugin for the bench: when the cases ran, measured inside the controller.

    PYTHONPATH=bench GUITEST_BENCH_TIMING=out.json pytest ... -p bench_timing

Writes ``{"run_s", "first_start", "last_end", "sessionfinish_s", "n_reports"}`` to the
file named by ``$GUITEST_BENCH_TIMING`` at the end of the session (controller only):
``run_s`` is from the first case's start to the last case's end as the controller
sees them (under xdist: the first ``logstart`` and the last teardown report it
receives), so start-up, collection and the report writing at the end are all
outside it; ``sessionfinish_s`` is how long every ``pytest_sessionfinish`` took
(guitest's report building and writing). Times are ``time.time()``.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import pytest

_T: dict[str, Any] = {"n_reports": 0}


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    _T.setdefault("first_start", time.time())


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "teardown":
        _T["last_end"] = time.time()
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
    if not path or hasattr(config, "workerinput"):
        return
    if "first_start" in _T and "last_end" in _T:
        _T["run_s"] = _T["last_end"] - _T["first_start"]
    with open(path, "w") as f:
        json.dump(_T, f)
