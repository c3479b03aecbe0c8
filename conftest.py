"""Root conftest: gives the project's own tests pytester, and keeps the pytest runs they start lean.

The guitest plugin itself is registered through the ``pytest11`` entry point
(pyproject.toml), so suites under ``suites/`` are collected by an installed
guitest, with or without this file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

pytest_plugins = ("pytester",)

#: plugins the pytest runs started by the tests (pytester subprocesses and their xdist workers) never use; importing
#: hypothesis's alone costs 1-2 s per process, which made a 6-case run under -n 2 take 10 s instead of 3
INNER_ADDOPTS = "-p no:hypothesispytest -p no:anyio"


@pytest.fixture(scope="session", autouse=True)
def _lean_inner_pytest() -> Iterator[None]:
    """Pass INNER_ADDOPTS to every pytest a test starts (set once this process runs tests, so it is not affected)."""
    old = os.environ.get("PYTEST_ADDOPTS")
    os.environ["PYTEST_ADDOPTS"] = f"{old} {INNER_ADDOPTS}" if old else INNER_ADDOPTS
    yield
    if old is None:
        os.environ.pop("PYTEST_ADDOPTS", None)
    else:
        os.environ["PYTEST_ADDOPTS"] = old
